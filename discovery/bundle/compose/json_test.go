package compose_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle/compose"
)

// TestMountPlanRoundTrip: a plan written as JSON reads back to one that
// writes the same bytes (what the daemon sends is what the command line
// prints), for every fixture and every bundle file of the corpus.
func TestMountPlanRoundTrip(t *testing.T) {
	var plans []compose.MountPlan
	names, _ := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	for _, p := range names {
		c, _ := readFixture(t, filepath.Base(p)).compose(t)
		plans = append(plans, c.MountPlan)
	}
	if len(plans) < 5 {
		t.Fatalf("only %d fixtures", len(plans))
	}
	plans = append(plans, compose.MountPlan{}) // nothing: {}
	if corpus := corpusDirOrEmpty(); corpus != "" {
		home := t.TempDir()
		layoutCache(t, corpus, home)
		for _, f := range bundleFiles(t, corpus) {
			files := &compose.DiskFiles{}
			plans = append(plans, compose.Compose(compose.Locate(corpusEnv(home, f), files), files, f).MountPlan)
		}
	}
	for i, p := range plans {
		want, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var back compose.MountPlan
		if err := json.Unmarshal(want, &back); err != nil {
			t.Fatalf("plan %d: %v\n%s", i, err, want)
		}
		got, err := json.Marshal(back)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("plan %d reads back as\n%s\nwant\n%s", i, got, want)
		}
	}
}

// TestMountPlanDecodeErrors: JSON that is no plan is an error, not a
// panic or a half-filled plan taken as whole.
func TestMountPlanDecodeErrors(t *testing.T) {
	for _, in := range []string{`[]`, `{"session": 1}`, `{"tools": {}}`, `{"tools": [1]}`, `{"agents": {"a": []}}`,
		`{"other": {}}`, `{"session": {`, `12`} {
		var p compose.MountPlan
		if err := json.Unmarshal([]byte(in), &p); err == nil {
			t.Errorf("%s decodes", in)
		}
	}
}

// corpusDirOrEmpty is $AMPLIDEX_CORPUS/bundles when it is there, else "".
func corpusDirOrEmpty() string {
	c := os.Getenv("AMPLIDEX_CORPUS")
	if c == "" {
		return ""
	}
	dir := filepath.Join(c, "bundles")
	if _, err := os.Stat(filepath.Join(dir, "SOURCES.md")); err != nil {
		return ""
	}
	return dir
}

// FuzzMountPlanJSON: any bytes decode to a plan or fail, never panic; a
// plan that decodes writes JSON that reads back to the same bytes.
func FuzzMountPlanJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"session":{"orchestrator":{"module":"loop","config":{"n":1.0,"m":2,"big":123456789012345678901234567890}}}}`,
		`{"tools":[{"module":"a","config":{"l":[1,"x",null,true,{"k":-1e-07}]}}],"agents":{"a":{"name":"a"}}}`,
		`{"providers":[],"hooks":[{}],"spawn":{"x":".inf"}}`, `{"agents":{"a":{}}}`, `[`, `{"session":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p compose.MountPlan
		if err := json.Unmarshal(b, &p); err != nil {
			return
		}
		once, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var q compose.MountPlan
		if err := json.Unmarshal(once, &q); err != nil {
			t.Fatalf("%s does not read back: %v", once, err)
		}
		twice, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(once, twice) {
			t.Fatalf("%s reads back as %s", once, twice)
		}
	})
}
