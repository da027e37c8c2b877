package discovery

import "io/fs"

// FindProjectAs runs FindProject as the user uid, with owner saying which
// user owns each file (fi is from Lstat for a symbolic link itself, else
// from Stat), so that tests can pretend a directory belongs to someone
// else without being root.
func FindProjectAs(wd string, uid int, owner func(path string, fi fs.FileInfo) int) ProjectSearch {
	return projectFinder{uid: uid, owner: func(path string, fi fs.FileInfo) (int, bool) {
		return owner(path, fi), true
	}}.find(wd)
}
