//go:build windows

package query

import (
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// modeBits is false: Windows keeps other users out with the ACL of the
// user's profile directory, which the socket's directory inherits, not
// with permission bits (Go reports every directory as 0777).
const modeBits = false

// fallbackTmp holds the socket directories DefaultPaths falls back to:
// the user's temporary directory, under the user's profile.
func fallbackTmp() string { return os.TempDir() }

// fileOwner stands for the owner of the file at path with a uid: the
// process's own (os.Geteuid, -1 on Windows) when the owner is the user
// running the process or the Administrators group (which owns what an
// elevated process creates, and can read the profile anyway), and
// otherAccount for any other owner or when the owner cannot be read.
func fileOwner(path string, _ fs.FileInfo) int {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return otherAccount
	}
	owner, _, err := sd.Owner()
	if err != nil || owner == nil {
		return otherAccount
	}
	if user, err := windows.GetCurrentProcessToken().GetTokenUser(); err == nil && owner.Equals(user.User.Sid) {
		return os.Geteuid()
	}
	if owner.IsWellKnown(windows.WinBuiltinAdministratorsSid) {
		return os.Geteuid()
	}
	return otherAccount
}
