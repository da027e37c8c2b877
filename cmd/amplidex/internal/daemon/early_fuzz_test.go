package daemon

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// summarySeed is a summary of two roots, one of them empty, with a
// collection that answers to two names.
func summarySeed() []byte {
	return encodeSummary(42, 'e', []summaryRoot{
		{path: "/p/.amplifier/collections", entries: []summaryEntry{
			{names: []string{"dup"}, info: []byte(`{"name":"dup","valid":true}`)},
			{names: []string{"", "broken"}, info: []byte(`{"name":"","valid":false}`)},
		}},
		{path: "/home/u/.amplifier/collections"},
	})
}

// TestSummaryRoundTrip: what encodeSummary writes decodes to the same
// roots and entries, and each cut of it is an error, not a panic.
func TestSummaryRoundTrip(t *testing.T) {
	b := summarySeed()
	s, err := decodeSummary(b)
	if err != nil {
		t.Fatal(err)
	}
	if s.tick != 42 || s.schema != 'e' || len(s.roots) != 2 || !s.roots["/home/u/.amplifier/collections"] {
		t.Errorf("decoded %d %c %v", s.tick, s.schema, s.roots)
	}
	dup := s.byName["/p/.amplifier/collections\x00dup"]
	if len(dup) != 1 || string(dup[0]) != `{"name":"dup","valid":true}` {
		t.Errorf("dup = %q", dup)
	}
	if len(s.byName["/p/.amplifier/collections\x00broken"]) != 1 || len(s.byName["/p/.amplifier/collections\x00"]) != 1 {
		t.Errorf("an entry is found under each of its names: %q", s.byName)
	}
	for n := range len(b) {
		if _, err := decodeSummary(b[:n]); !errors.Is(err, errSummary) {
			t.Errorf("%d of %d bytes: %v", n, len(b), err)
		}
	}
	if _, err := decodeSummary(append(slices.Clip(b), 0)); !errors.Is(err, errSummary) {
		t.Errorf("a trailing byte: %v", err)
	}
}

// FuzzDecodeSummary: any bytes decode to a summary or errSummary, and a
// decoded summary encodes back to a summary that decodes the same.
func FuzzDecodeSummary(f *testing.F) {
	f.Add(summarySeed())
	f.Add([]byte(summaryMagic))
	f.Add(append([]byte(summaryMagic), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeSummary(b)
		if err != nil {
			if !errors.Is(err, errSummary) {
				t.Fatalf("error %v is not errSummary", err)
			}
			return
		}
		var roots []summaryRoot
		for path := range s.roots {
			r := summaryRoot{path: path}
			for k, infos := range s.byName {
				if p, name, _ := bytes.Cut([]byte(k), []byte{0}); string(p) == path {
					for _, info := range infos {
						r.entries = append(r.entries, summaryEntry{names: []string{string(name)}, info: info})
					}
				}
			}
			roots = append(roots, r)
		}
		s2, err := decodeSummary(encodeSummary(s.tick, s.schema, roots))
		if err != nil {
			t.Fatal(err)
		}
		if s2.tick != s.tick || s2.schema != s.schema || len(s2.roots) != len(s.roots) || len(s2.byName) != len(s.byName) {
			t.Fatalf("re-encoded summary differs: %+v vs %+v", s2, s)
		}
	})
}
