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

// UntrustedAs and OpenToOthersAs are Untrusted and OpenToOthers as the
// user uid, with owner saying who owns each file (as FindProjectAs).
func UntrustedAs(path string, uid int, owner func(path string, fi fs.FileInfo) int) (int, bool) {
	return finderAs(uid, owner).untrusted(path)
}

func OpenToOthersAs(dir string, uid int, owner func(path string, fi fs.FileInfo) int) bool {
	return finderAs(uid, owner).openToOthers(dir)
}

func finderAs(uid int, owner func(path string, fi fs.FileInfo) int) projectFinder {
	return projectFinder{uid: uid, owner: func(path string, fi fs.FileInfo) (int, bool) { return owner(path, fi), true }}
}
