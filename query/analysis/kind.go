package analysis

import (
	"path/filepath"
	"strings"

	"github.com/amplidex/amplidex/discovery"
)

// fileKind is what a document is, decided by its path.
type fileKind int

const (
	fileOther fileKind = iota
	fileProfile
	fileAgent
	fileBundle
	filePyproject
	fileLock
	// fileBundleDoc is a Markdown or YAML file that may be a document of
	// a bundle repository (bundles.go decides, by what is around it).
	fileBundleDoc
)

// kindOf classifies path: profiles/*.md, agents/*.md (README.md excepted),
// bundle.md, pyproject.toml and collections.lock are checked, and so is
// any other Markdown or YAML file of a bundle repository; anything else
// is not.
func kindOf(path string) fileKind {
	base := filepath.Base(path)
	dir := filepath.Base(filepath.Dir(path))
	switch {
	case base == "bundle.md":
		return fileBundle
	case base == "pyproject.toml":
		return filePyproject
	case base == "collections.lock":
		return fileLock
	case strings.EqualFold(base, "README.md") || discovery.IsEditorDropping(base):
		return fileOther
	case strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml"):
		return fileBundleDoc
	case !strings.HasSuffix(base, ".md"):
		return fileOther
	case dir == "profiles":
		return fileProfile
	case dir == "agents":
		return fileAgent
	}
	return fileBundleDoc
}

// inContextDir reports whether path lies in a directory named context,
// where a collection keeps its context files.
func inContextDir(path string) bool {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if filepath.Base(dir) == "context" {
			return true
		}
		if up := filepath.Dir(dir); up == dir {
			return false
		}
	}
}

// Checked reports whether the engine gives the file at path diagnostics
// and fixes, by its path (see kindOf): a language server checks the
// documents it says are.
func Checked(path string) bool { return kindOf(path) != fileOther }

// IsProfile reports whether path names a profile: profiles/*.md.
func IsProfile(path string) bool { return kindOf(path) == fileProfile }
