package discovery_test

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/schema"
)

func TestFactsCodecRoundTrip(t *testing.T) {
	srcs := map[discovery.Kind]string{
		discovery.KindProfile: "---\nprofile:\n  name: p\n  version: 1.0.0\n  description: P\n  extends: a:b\nsession:\n  orchestrator:\n    module: loop\n    config: {max: 3, ratio: 0.5, on: true, none: null, limit: 10.0, big: 123456789012345678901234567890}\nagents: [x, y]\n---\nSee @a:context/x.md\n",
		discovery.KindAgent:   "---\nmeta: [unclosed\n---\n",
		discovery.KindContext: "@a:b.md and @c:d/e.md\n",
		"":                    "[project]\nname = \"x\"\nversion = \"1.0\"\n",
	}
	for k, src := range srcs {
		path := "/r/c/profiles/p.md"
		if k == "" {
			path = "/r/c/pyproject.toml"
		}
		f := discovery.AnalyzeFile(path, []byte(src), k, schema.Options{})
		b := f.AppendBinary(nil)
		got, err := discovery.DecodeFacts(b, false)
		if err != nil {
			t.Fatalf("%s: decode: %v", k, err)
		}
		if !reflect.DeepEqual(got.Diagnostics, f.Diagnostics) || !reflect.DeepEqual(got.Mentions, f.Mentions) ||
			!reflect.DeepEqual(got.Front, f.Front) || !reflect.DeepEqual(got.Metadata, f.Metadata) ||
			got.Name != f.Name || got.Description != f.Description || !reflect.DeepEqual(got.Extends, f.Extends) ||
			!reflect.DeepEqual(got.Agents, f.Agents) || got.AgentsMode != f.AgentsMode || got.Kind != f.Kind {
			t.Errorf("%s: round trip changed the facts:\n got %+v\nwant %+v", k, got, f)
		}
		brief, err := discovery.DecodeFacts(b, true)
		if err != nil || !brief.IsBrief() || brief.Counts() != f.Counts() || brief.HasMentions() != f.HasMentions() ||
			brief.Front != nil || brief.Mentions != nil || brief.Diagnostics != nil {
			t.Errorf("%s: brief decode = %+v, %v", k, brief, err)
		}
		if !reflect.DeepEqual(brief, f.Brief()) {
			t.Errorf("%s: brief decode %+v differs from Brief %+v", k, brief, f.Brief())
		}
		if ms, err := discovery.DecodeMentions(b); err != nil || !reflect.DeepEqual(ms, f.Mentions) {
			t.Errorf("%s: DecodeMentions = %v, %v; want %v", k, ms, err, f.Mentions)
		}
	}
	if _, err := discovery.DecodeMentions([]byte{0xff}); err == nil {
		t.Error("DecodeMentions of a bad version: no error")
	}
}

func FuzzDecodeFacts(f *testing.F) {
	f.Add(discovery.AnalyzeFile("/p.md", []byte("---\nprofile: {name: p}\n---\n@a:b\n"), discovery.KindProfile, schema.Options{}).AppendBinary(nil))
	f.Add([]byte{1, 0, 0})
	f.Add(discovery.AnalyzeFile("/p.md", []byte("---\nprofile: {name: p}\nsession: {z: 1.0, a: [2, 123456789012345678901234567890]}\nexclude: {tools: all}\n---\n"),
		discovery.KindProfile, schema.Options{}).AppendBinary(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, merr := discovery.DecodeMentions(b)
		for _, brief := range []bool{false, true} {
			fs, err := discovery.DecodeFacts(b, brief)
			if err != nil {
				continue
			}
			if !brief && (merr != nil || !slices.Equal(ms, fs.Mentions)) {
				t.Fatalf("DecodeMentions = %v, %v; the full Facts have %v", ms, merr, fs.Mentions)
			}
			if brief {
				continue
			}
			// What decodes encodes to bytes that decode and encode to
			// themselves (the first encoding drops repeated keys and
			// recounts).
			once := fs.AppendBinary(nil)
			again, err := discovery.DecodeFacts(once, false)
			if err != nil {
				t.Fatalf("re-encoded facts do not decode: %v", err)
			}
			if twice := again.AppendBinary(nil); !bytes.Equal(once, twice) {
				t.Fatalf("encoding is not stable:\n%x\n%x", once, twice)
			}
		}
	})
}
