package discovery

import "io/fs"

// FollowLinkAs runs FollowLink as the user uid, with owner saying which
// user owns each directory, so that tests can pretend one belongs to
// someone else without being root.
func FollowLinkAs(root, link, real string, uid int, owner func(path string, fi fs.FileInfo) int) error {
	return linkJudge{uid: uid, owner: func(path string, fi fs.FileInfo) (int, bool) {
		return owner(path, fi), true
	}}.follow(root, link, real)
}
