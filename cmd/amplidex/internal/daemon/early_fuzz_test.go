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
	if _, ok := s.roots["/home/u/.amplifier/collections"]; s.tick != 42 || s.schema != 'e' || len(s.roots) != 2 || !ok {
		t.Errorf("decoded %d %c %v", s.tick, s.schema, s.roots)
	}
	dup, ok := s.lookup("/p/.amplifier/collections", "dup")
	if !ok || len(dup) != 1 || string(dup[0]) != `{"name":"dup","valid":true}` {
		t.Errorf("dup = %q, %v", dup, ok)
	}
	for _, name := range []string{"broken", ""} {
		if got, _ := s.lookup("/p/.amplifier/collections", name); len(got) != 1 || string(got[0]) != `{"name":"","valid":false}` {
			t.Errorf("an entry is found under each of its names: %q gives %q", name, got)
		}
	}
	if got, ok := s.lookup("/home/u/.amplifier/collections", "dup"); !ok || len(got) != 0 {
		t.Errorf("the empty root: %q, %v", got, ok)
	}
	if _, ok := s.lookup("/elsewhere", "dup"); ok {
		t.Error("a root the summary does not hold is found")
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

// entriesOf reads back the entries of a root of s.
func entriesOf(t *testing.T, s *summary, root string) []summaryEntry {
	t.Helper()
	var out []summaryEntry
	for r := (summaryReader{s.roots[root]}); len(r.b) > 0; {
		names, info, ok := r.entry(nil)
		if !ok {
			t.Fatalf("root %q: an entry decodeSummary accepted does not read", root)
		}
		e := summaryEntry{info: info}
		for _, n := range names {
			e.names = append(e.names, string(n))
		}
		out = append(out, e)
	}
	return out
}

// FuzzDecodeSummary: any bytes decode to a summary or errSummary, and a
// decoded summary encodes back to a summary that decodes the same, and
// answers every lookup the same.
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
			roots = append(roots, summaryRoot{path: path, entries: entriesOf(t, s, path)})
		}
		s2, err := decodeSummary(encodeSummary(s.tick, s.schema, roots))
		if err != nil {
			t.Fatal(err)
		}
		if s2.tick != s.tick || s2.schema != s.schema || len(s2.roots) != len(s.roots) {
			t.Fatalf("re-encoded summary differs: %+v vs %+v", s2, s)
		}
		for _, r := range roots {
			if !bytes.Equal(s2.roots[r.path], s.roots[r.path]) {
				t.Fatalf("root %q: entries %q, re-encoded %q", r.path, s.roots[r.path], s2.roots[r.path])
			}
			for _, e := range r.entries {
				for _, n := range e.names {
					a, _ := s.lookup(r.path, n)
					b, _ := s2.lookup(r.path, n)
					if len(a) == 0 || len(a) != len(b) {
						t.Fatalf("root %q, name %q: %q, re-encoded %q", r.path, n, a, b)
					}
				}
			}
		}
	})
}
