package lint

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/amplidex/amplidex/discovery"
)

// DefaultScope returns what check reports without a PATH (see
// checkDefault), as the paths below which query diagnostics and watch
// report too, so that every surface answers alike: the project's
// .amplifier (its collections and collections.lock), and the project
// directory when it is itself a collection; without a project, the
// collection the working directory is in (the outermost), or the
// .amplifier of the working directory (the home directory's, holding the
// user root). None, with why, when there is nothing to check. The user
// and bundled roots are resolved against, never reported.
func (ws *Workspace) DefaultScope() (paths []string, none string, err error) {
	if project := ws.DaemonProject(); project != "" && !samePath(project, ws.Home) {
		if discovery.IsMarked(project) {
			return []string{project}, "", nil // .amplifier is below it
		}
		return []string{filepath.Join(project, ".amplifier")}, "", nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, "", usageErrorf("working directory: %v", err)
	}
	if c := collectionAt(wd); c != "" {
		return []string{c}, "", nil
	}
	if amp := filepath.Join(wd, ".amplifier"); isDirAt(amp) {
		return []string{amp}, "", nil
	}
	return nil, fmt.Sprintf("no project (.amplifier) above %s and no collection at or above it", wd), nil
}

// collectionAt returns the outermost collection directory at or above
// dir, as check's planner finds it on disk (see planner.owner), or "".
func collectionAt(dir string) string {
	found := ""
	for d := dir; ; {
		if isCollectionDir(d) && !inToolOrModule(d) {
			found = d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return found
		}
		d = parent
	}
}

// InScope reports whether path lies below one of the paths of a scope.
func InScope(path string, scope []string) bool {
	for _, s := range scope {
		if within(path, s) {
			return true
		}
	}
	return false
}
