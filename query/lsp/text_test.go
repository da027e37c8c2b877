package lsp_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query/lsp"
)

func pos(l, c int) diag.Position { return diag.Position{Line: l, Character: c} }

func TestApplyChanges(t *testing.T) {
	r := func(l1, c1, l2, c2 int) *diag.Range { x := rng(l1, c1, l2, c2); return &x }
	tests := []struct {
		name    string
		text    string
		utf8    bool
		changes []lsp.Change
		want    string
		wantErr bool
	}{
		{"full replace", "abc", false, []lsp.Change{{Text: "xyz"}}, "xyz", false},
		{"insert at start", "abc", false, []lsp.Change{{Range: r(0, 0, 0, 0), Text: ">"}}, ">abc", false},
		{"insert at end of text", "abc", false, []lsp.Change{{Range: r(0, 3, 0, 3), Text: "!"}}, "abc!", false},
		{"past the end of a line clamps", "ab\ncd", false, []lsp.Change{{Range: r(0, 9, 0, 9), Text: "!"}}, "ab!\ncd", false},
		{"past the last line clamps", "ab", false, []lsp.Change{{Range: r(5, 0, 5, 0), Text: "!"}}, "ab!", false},
		{"delete across lines", "ab\ncd\nef", false, []lsp.Change{{Range: r(0, 1, 2, 1), Text: ""}}, "af", false},
		{"after an emoji, UTF-16", "😀x", false, []lsp.Change{{Range: r(0, 2, 0, 3), Text: "y"}}, "😀y", false},
		{"inside a surrogate pair rounds down", "😀x", false, []lsp.Change{{Range: r(0, 1, 0, 1), Text: "|"}}, "|😀x", false},
		{"after an emoji, UTF-8", "😀x", true, []lsp.Change{{Range: r(0, 4, 0, 5), Text: "y"}}, "😀y", false},
		{"CJK, UTF-16", "漢字ab", false, []lsp.Change{{Range: r(0, 1, 0, 3), Text: "-"}}, "漢-b", false},
		{"CJK, UTF-8", "漢字ab", true, []lsp.Change{{Range: r(0, 3, 0, 7), Text: "-"}}, "漢-b", false},
		{"CRLF line ends stay", "ab\r\ncd", false, []lsp.Change{{Range: r(0, 2, 0, 2), Text: "!"}}, "ab!\r\ncd", false},
		{"changes apply in order", "abc", false, []lsp.Change{
			{Range: r(0, 0, 0, 1), Text: "xx"},
			{Range: r(0, 0, 0, 1), Text: "y"},
		}, "yxbc", false},
		{"full text then a range", "abc", false, []lsp.Change{{Text: "12"}, {Range: r(0, 1, 0, 1), Text: "-"}}, "1-2", false},
		{"end before start", "abc", false, []lsp.Change{{Range: r(0, 2, 0, 1), Text: ""}}, "abc", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orig := []byte(tc.text)
			got, err := lsp.ApplyChanges(orig, tc.changes, tc.utf8)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if string(got) != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if string(orig) != tc.text {
				t.Errorf("the original text was modified: %q", orig)
			}
		})
	}
}

func TestConvertPosition(t *testing.T) {
	text := []byte("a😀漢b\nx")
	tests := []struct {
		utf16, utf8 diag.Position
	}{
		{pos(0, 0), pos(0, 0)},
		{pos(0, 1), pos(0, 1)},
		{pos(0, 3), pos(0, 5)},
		{pos(0, 4), pos(0, 8)},
		{pos(0, 5), pos(0, 9)},
		{pos(1, 1), pos(1, 1)},
	}
	for _, tc := range tests {
		if got := lsp.ConvertPosition(text, tc.utf16, true); got != tc.utf8 {
			t.Errorf("UTF-16 %+v → UTF-8 %+v, want %+v", tc.utf16, got, tc.utf8)
		}
		if got := lsp.ConvertPosition(text, tc.utf8, false); got != tc.utf16 {
			t.Errorf("UTF-8 %+v → UTF-16 %+v, want %+v", tc.utf8, got, tc.utf16)
		}
	}
}

func TestURIs(t *testing.T) {
	tests := []struct {
		uri, path string
		ok        bool
	}{
		{"file:///home/a/b.md", "/home/a/b.md", true},
		{"file:///home/a%20b/c%23d.md", "/home/a b/c#d.md", true},
		{"file://localhost/x.md", "/x.md", true},
		{"file://server/share/x.md", "", false},
		{"untitled:Untitled-1", "", false},
		{"https://example.com/x.md", "", false},
		{"file:relative.md", "", false},
		{"%zz", "", false},
	}
	for _, tc := range tests {
		got, err := lsp.URIToPath(tc.uri)
		if (err == nil) != tc.ok || got != tc.path {
			t.Errorf("URIToPath(%q) = %q, %v; want %q, ok %v", tc.uri, got, err, tc.path, tc.ok)
		}
		if tc.ok {
			if back, _ := lsp.URIToPath(lsp.PathToURI(got)); back != got {
				t.Errorf("round trip of %q gave %q", got, back)
			}
		}
	}
}

// TestManyEditsLinear: a didChange of many small edits is applied with
// work linear in the text and the edits, not in their product: the bytes
// it allocates stay within a small multiple of the text, where copying
// the text once per edit allocates a thousand times more. The result is
// that of applying the edits one by one.
func TestManyEditsLinear(t *testing.T) {
	text, changes := manyEdits(100<<10, 1000)
	for _, utf8 := range []bool{false, true} {
		want, ok := applyReference(text, changes, utf8)
		if !ok {
			t.Fatal("the reference refused the edits")
		}
		var got []byte
		var err error
		allocated := allocatedBy(func() { got, err = lsp.ApplyChanges(text, changes, utf8) })
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("utf8 %v: the edits give another text than applied one by one", utf8)
		}
		t.Logf("utf8 %v: %d bytes allocated", utf8, allocated)
		if limit := uint64(16 * len(text)); allocated > limit {
			t.Errorf("utf8 %v: %d edits of a %d-byte text allocated %d bytes, more than %d", utf8, len(changes), len(text), allocated, limit)
		}
	}
}

// allocatedBy returns the bytes the process allocated while f ran.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
