package query_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/query"
)

func TestParseClock(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want query.Clock
	}{
		{"typical", "c:1700000000123456789:4242:17", query.Clock{Start: 1700000000123456789, PID: 4242, Tick: 17}},
		{"zero", "c:0:0:0", query.Clock{}},
		{"max", "c:9223372036854775807:2147483647:18446744073709551615", query.Clock{Start: 1<<63 - 1, PID: 1<<31 - 1, Tick: 1<<64 - 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := query.ParseClock(tc.in)
			if err != nil {
				t.Fatalf("ParseClock(%q): %v", tc.in, err)
			}
			if got != tc.want {
				t.Errorf("ParseClock(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
			if s := got.String(); s != tc.in {
				t.Errorf("String() = %q, want %q", s, tc.in)
			}
		})
	}
}

func TestParseClockErrors(t *testing.T) {
	tests := []struct {
		name, in, wantMsg string
	}{
		{"empty", "", "prefix"},
		{"no prefix", "1:2:3", "prefix"},
		{"two fields", "c:1:2", "three fields"},
		{"four fields", "c:1:2:3:4", "tick"},
		{"empty start", "c::2:3", "start: empty"},
		{"sign", "c:+1:2:3", "start"},
		{"negative", "c:1:-2:3", "pid"},
		{"leading zero", "c:1:2:03", "leading zero"},
		{"letters", "c:1:2:x", "tick"},
		{"start overflow", "c:9223372036854775808:2:3", "out of range"},
		{"pid overflow", "c:1:2147483648:3", "out of range"},
		{"tick overflow", "c:1:2:18446744073709551616", "out of range"},
		{"space", "c:1: 2:3", "pid"},
		{"long garbage", "c:" + strings.Repeat("9", 500), "…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := query.ParseClock(tc.in)
			if !errors.Is(err, query.ErrInvalidClock) {
				t.Fatalf("ParseClock(%q) = %v, want ErrInvalidClock", tc.in, err)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not mention %q", err, tc.wantMsg)
			}
			if len(err.Error()) > 200 {
				t.Errorf("error is %d bytes long; the input should be cut short", len(err.Error()))
			}
		})
	}
}

func TestClockCompare(t *testing.T) {
	a := query.Clock{Start: 10, PID: 5, Tick: 3}
	tests := []struct {
		name     string
		b        query.Clock
		same     bool
		wantCmp  int
		wantZero bool
	}{
		{"equal", a, true, 0, false},
		{"later tick", query.Clock{Start: 10, PID: 5, Tick: 4}, true, -1, false},
		{"earlier tick", query.Clock{Start: 10, PID: 5, Tick: 2}, true, 1, false},
		{"other pid", query.Clock{Start: 10, PID: 6, Tick: 0}, false, -1, false},
		{"later start", query.Clock{Start: 11, PID: 1, Tick: 0}, false, -1, false},
		{"zero", query.Clock{}, false, 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := a.SameInstance(tc.b); got != tc.same {
				t.Errorf("SameInstance = %v, want %v", got, tc.same)
			}
			if got := a.Compare(tc.b); got != tc.wantCmp {
				t.Errorf("Compare = %d, want %d", got, tc.wantCmp)
			}
			if got := tc.b.IsZero(); got != tc.wantZero {
				t.Errorf("IsZero = %v, want %v", got, tc.wantZero)
			}
		})
	}
}

func TestClockJSON(t *testing.T) {
	resp := query.Response{ID: json.RawMessage("1"), Result: json.RawMessage("true"), Clock: query.Clock{Start: 1, PID: 2, Tick: 3}}
	data, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":1,"result":true,"clock":"c:1:2:3"}`; string(data) != want {
		t.Errorf("Marshal = %s, want %s", data, want)
	}
	var back query.Response
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Clock != resp.Clock {
		t.Errorf("clock after a round trip = %v, want %v", back.Clock, resp.Clock)
	}

	noClock, err := json.Marshal(query.Response{ID: json.RawMessage(`"a"`), Result: json.RawMessage("null")})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"a","result":null}`; string(noClock) != want {
		t.Errorf("Marshal without clock = %s, want %s", noClock, want)
	}

	err = json.Unmarshal([]byte(`{"id":1,"clock":"c:x"}`), &back)
	if !errors.Is(err, query.ErrInvalidClock) {
		t.Errorf("Unmarshal of a bad clock = %v, want ErrInvalidClock", err)
	}
}

// FuzzParseClock checks that ParseClock never panics and accepts exactly
// the strings String produces.
func FuzzParseClock(f *testing.F) {
	for _, s := range []string{"c:1:2:3", "c:0:0:0", "c:1700000000123456789:4242:17", "c:01:2:3", "c::", "c:1:2:3:4", "c:-1:2:3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := query.ParseClock(s)
		if err != nil {
			if !errors.Is(err, query.ErrInvalidClock) {
				t.Fatalf("ParseClock(%q) error %v does not wrap ErrInvalidClock", s, err)
			}
			return
		}
		if got := c.String(); got != s {
			t.Fatalf("ParseClock(%q).String() = %q", s, got)
		}
		text, _ := c.MarshalText()
		var back query.Clock
		if err := back.UnmarshalText(text); err != nil || back != c {
			t.Fatalf("text round trip of %q: %v, %+v", s, err, back)
		}
	})
}
