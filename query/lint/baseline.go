package lint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// baselineVersion is the version of the baseline file format.
const baselineVersion = 1

// baselineFile is what `check --write-baseline FILE` writes: today's
// diagnostics, each by code, path relative to the file's directory, and a
// fingerprint of the text of the line it starts on, so that a diagnostic
// stays matched when lines are added or removed above it. The message is
// kept for the reader; matching ignores it.
type baselineFile struct {
	Version     int             `json:"version"`
	Diagnostics []baselineEntry `json:"diagnostics"`
}

type baselineEntry struct {
	Code        string `json:"code"`
	Path        string `json:"path"`
	Fingerprint string `json:"fingerprint"`
	Message     string `json:"message,omitempty"`
}

// key is what an entry is matched by.
func (e baselineEntry) key() string { return e.Code + "\x00" + e.Path + "\x00" + e.Fingerprint }

// baseline is a baseline file read back: how many diagnostics of each key
// it holds.
type baseline struct {
	dir   string
	count map[string]int
}

// fingerprint identifies the line text a diagnostic starts on, blanks
// folded, so that re-indenting does not count as a change either.
func fingerprint(line string) string {
	sum := sha256.Sum256([]byte(strings.Join(strings.Fields(line), " ")))
	return hex.EncodeToString(sum[:8])
}

// baselineEntryOf describes d for a baseline file in dir.
func baselineEntryOf(d diag.Diagnostic, dir string, src *Sources) baselineEntry {
	path := d.Path
	if rel, err := filepath.Rel(dir, d.Path); err == nil {
		path = rel
	}
	return baselineEntry{Code: d.Code, Path: filepath.ToSlash(path),
		Fingerprint: fingerprint(src.line(d.Path, d.Range.Start.Line)), Message: d.Message}
}

// writeBaseline records ds in the file at path and returns how many it
// recorded. The file is replaced whole (temporary file, then rename).
func writeBaseline(path string, ds []diag.Diagnostic, src *Sources) (int, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, err
	}
	dir := filepath.Dir(abs)
	f := baselineFile{Version: baselineVersion, Diagnostics: make([]baselineEntry, 0, len(ds))}
	for _, d := range ds {
		f.Diagnostics = append(f.Diagnostics, baselineEntryOf(d, dir, src))
	}
	sort.SliceStable(f.Diagnostics, func(i, j int) bool {
		a, b := f.Diagnostics[i], f.Diagnostics[j]
		if a.Path != b.Path {
			return diag.ComparePaths(a.Path, b.Path) < 0
		}
		return a.Code < b.Code
	})
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(dir, ".baseline-*")
	if err != nil {
		return 0, fmt.Errorf("write baseline %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return 0, fmt.Errorf("write baseline %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return 0, fmt.Errorf("write baseline %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), abs); err != nil {
		return 0, fmt.Errorf("write baseline %s: %w", path, err)
	}
	return len(f.Diagnostics), nil
}

// readBaseline reads a baseline file written by writeBaseline.
func readBaseline(path string) (*baseline, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	src, err := syntax.ReadFile(abs, syntax.DefaultMaxFileSize*8)
	if err != nil {
		return nil, fmt.Errorf("read baseline: %w", err)
	}
	var f baselineFile
	if err := json.Unmarshal(src, &f); err != nil {
		return nil, fmt.Errorf("read baseline %s: %w", path, err)
	}
	if f.Version != baselineVersion {
		return nil, fmt.Errorf("read baseline %s: version %d, want %d", path, f.Version, baselineVersion)
	}
	b := &baseline{dir: filepath.Dir(abs), count: map[string]int{}}
	for _, e := range f.Diagnostics {
		if e.Code == "" || e.Path == "" {
			return nil, errors.New("read baseline " + path + ": an entry lacks its code or path")
		}
		b.count[e.key()]++
	}
	return b, nil
}

// filter returns the diagnostics of ds the baseline does not hold, and how
// many it held. Each entry matches one diagnostic: a third copy of a
// problem the baseline has twice is new.
func (b *baseline) filter(ds []diag.Diagnostic, src *Sources) ([]diag.Diagnostic, int) {
	left := make(map[string]int, len(b.count))
	for k, n := range b.count {
		left[k] = n
	}
	var out []diag.Diagnostic
	held := 0
	for _, d := range ds {
		k := baselineEntryOf(d, b.dir, src).key()
		if left[k] > 0 {
			left[k]--
			held++
			continue
		}
		out = append(out, d)
	}
	return out, held
}
