package prepare

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/amplidex/amplidex/discovery/syntax"
)

// The two files of an entry.
const (
	ArtifactFile = "prepared.json"
	MarkerFile   = "manifest.json"
)

// marker is manifest.json, the entry's commit marker.
type marker struct {
	AAAVersion         string `json:"aaa_version"`
	BundleSHA256Prefix string `json:"bundle_sha256_prefix"`
}

// The most an entry's files may hold. A plan is a few times its manifest
// at most (syntax.DefaultMaxFileSize); the marker is two short strings.
// A larger file is corrupt.
const (
	maxArtifactSize = 64 << 20
	maxMarkerSize   = 64 << 10
)

// corruptError says why an entry that exists cannot be used.
type corruptError struct {
	path string
	why  string
}

func (e *corruptError) Error() string { return e.path + ": " + e.why }

// readEntry returns the plan of the entry in dir. The error wraps
// fs.ErrNotExist when the marker or the artifact is missing, and is a
// *corruptError when either exists but is unusable: not a regular file
// (a FIFO is never waited on, a device never read), larger than its limit,
// unreadable, or not what it should hold.
func readEntry(dir string, k Key) (*Plan, error) {
	// The marker is written last, so read it first: with it present the
	// artifact is whole.
	mpath := filepath.Join(dir, MarkerFile)
	src, err := syntax.ReadFile(mpath, maxMarkerSize)
	if err != nil {
		return nil, readError(mpath, err)
	}
	var m marker
	if err := decodeStrict(src, &m); err != nil {
		return nil, &corruptError{mpath, err.Error()}
	}
	if m.AAAVersion != k.Version || m.BundleSHA256Prefix != k.Hash {
		return nil, &corruptError{mpath, fmt.Sprintf("records %s/%s, want %s", m.AAAVersion, m.BundleSHA256Prefix, k)}
	}
	apath := filepath.Join(dir, ArtifactFile)
	src, err = syntax.ReadFile(apath, maxArtifactSize)
	if err != nil {
		return nil, readError(apath, err)
	}
	p := new(Plan)
	if err := decodeStrict(src, p); err != nil {
		return nil, &corruptError{apath, err.Error()}
	}
	if err := p.validate(k); err != nil {
		return nil, &corruptError{apath, err.Error()}
	}
	if err := checkModuleDirs(p); err != nil {
		return nil, &corruptError{apath, err.Error()}
	}
	return p, nil
}

func readError(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, fs.ErrNotExist)
	}
	return &corruptError{path, err.Error()}
}

// checkModuleDirs reports the first module directory of p that no longer
// exists (someone removed the module cache).
func checkModuleDirs(p *Plan) error {
	seen := make(map[string]bool)
	var err error
	p.modules(func(m *Module) {
		if err != nil || m.Path == "" || seen[m.Path] {
			return
		}
		seen[m.Path] = true
		if _, serr := os.Stat(m.Path); serr != nil {
			err = fmt.Errorf("module %s: %w", m.Module, serr)
		}
	})
	return err
}

// decodeStrict decodes one JSON value into v, refusing unknown fields and
// anything after the value.
func decodeStrict(src []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("empty file")
		}
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the JSON value")
	}
	return nil
}

// writeEntry writes p into dir: the artifact, then the marker, each to a
// temporary file that is synced and renamed, then syncs the directory.
func writeEntry(dir string, k Key, p *Plan) error {
	art, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Join(dir, ArtifactFile), err)
	}
	if len(art) >= maxArtifactSize {
		// A reader would take it for corrupt and rebuild it on every run.
		return fmt.Errorf("encode %s: the plan is %d bytes, more than the %d a reader accepts",
			filepath.Join(dir, ArtifactFile), len(art), maxArtifactSize)
	}
	mark, err := json.Marshal(marker{AAAVersion: k.Version, BundleSHA256Prefix: k.Hash})
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Join(dir, MarkerFile), err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create entry %s: %w", dir, err)
	}
	removeTemps(dir)
	if err := writeAtomic(filepath.Join(dir, ArtifactFile), append(art, '\n')); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, MarkerFile), append(mark, '\n')); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	// The version directory may be new too.
	return syncDir(filepath.Dir(dir))
}

// tempPattern names the temporary files of an entry.
const tempPattern = ".tmp-*"

// writeAtomic writes data to path through a synced temporary file in the
// same directory and a rename.
func writeAtomic(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), tempPattern)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return fmt.Errorf("chmod %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", path, err)
	}
	return nil
}

// removeTemps removes temporary files a crashed writer left in dir. The
// caller holds the entry's lock, so no writer is live.
func removeTemps(dir string) {
	names, _ := filepath.Glob(filepath.Join(dir, tempPattern))
	for _, n := range names {
		os.Remove(n)
	}
}

// discardEntry removes the files of a corrupt entry, the marker first so
// that no reader takes what remains for a whole entry.
func discardEntry(dir string) error {
	for _, name := range []string{MarkerFile, ArtifactFile} {
		p := filepath.Join(dir, name)
		if err := os.RemoveAll(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("discard %s: %w", p, err)
		}
	}
	return nil
}

// isCorrupt reports whether err says an entry exists but is unusable.
func isCorrupt(err error) bool {
	var c *corruptError
	return errors.As(err, &c)
}

// corruptPath returns the file a corrupt error names.
func corruptPath(err error) string {
	var c *corruptError
	if errors.As(err, &c) {
		return c.path
	}
	return ""
}
