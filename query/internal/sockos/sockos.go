package sockos

import (
	"errors"
	"fmt"
	"os/user"
	"strconv"
)

// ErrUnsafeDir is wrapped by the errors of MakePrivate and CheckPrivate
// when a directory is open to others; package query returns it as its
// own ErrUnsafeDir.
var ErrUnsafeDir = errors.New("query: unsafe socket directory")

// MaxPath is the longest path a unix socket address holds.
const MaxPath = 107

// OtherAccount is the owner FileOwner reports, where the system has no
// user ids, for a file that is not the user's.
const OtherAccount = -2

// DescribeUID names a uid for messages: "uid 1001 (mallory)", or "uid
// 1001" when it has no user name.
func DescribeUID(uid int) string {
	if uid == OtherAccount {
		return "another account"
	}
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return fmt.Sprintf("uid %d (%s)", uid, u.Username)
	}
	return fmt.Sprintf("uid %d", uid)
}
