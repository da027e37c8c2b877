package query_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/internal/querytest"
	"github.com/amplidex/amplidex/query/server"
)

type addParams struct {
	A int `json:"a"`
	B int `json:"b"`
}

// BenchmarkCall measures one round trip over the socket, one call at a
// time, and reports its 99th percentile (the product's target is 1 ms for a
// query inside the daemon, handler included).
func BenchmarkCall(b *testing.B) {
	h := querytest.NewHandler()
	s := server.New(h, h.Clock)
	if err := s.Listen(b.TempDir() + "/amplidex.sock"); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	c, err := query.Dial(ctx, s.Path())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()

	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		var sum int
		start := time.Now()
		if _, err := c.Call(ctx, "add", addParams{A: i, B: 1}, &sum); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
	}
}

// BenchmarkCallParallel measures calls from many goroutines sharing one
// client.
func BenchmarkCallParallel(b *testing.B) {
	h := querytest.NewHandler()
	s := server.New(h, h.Clock)
	if err := s.Listen(b.TempDir() + "/amplidex.sock"); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	c, err := query.Dial(ctx, s.Path())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()

	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var sum int
		for pb.Next() {
			if _, err := c.Call(ctx, "add", addParams{A: 1, B: 2}, &sum); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkDecodeRequest measures the server's decoding of one request line.
func BenchmarkDecodeRequest(b *testing.B) {
	line := []byte(`{"id":12345,"method":"resolve","params":{"name":"foundation","project":"/home/u/src/app"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := query.DecodeRequest(line); err != nil {
			b.Fatal(err)
		}
	}
}
