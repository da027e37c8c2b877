//go:build windows

package sockos

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// FallbackTmp holds the socket directories query.DefaultPaths falls back to:
// the user's temporary directory, under the user's profile.
func FallbackTmp() string { return os.TempDir() }

// UserSID returns the SID of the user running the process.
func UserSID() (*windows.SID, error) {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("read the process's user: %w", err)
	}
	return u.User.Sid, nil
}

// FileOwner stands for the owner of the file at path with a uid: the
// process's own (os.Geteuid, -1 on Windows) when the owner is the user
// running the process, and OtherAccount for any other owner (the
// Administrators group, which owns what an elevated process creates,
// included) or when the owner cannot be read.
func FileOwner(path string, _ fs.FileInfo) int {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return OtherAccount
	}
	owner, _, err := sd.Owner()
	if err != nil || owner == nil {
		return OtherAccount
	}
	if user, err := UserSID(); err == nil && owner.Equals(user) {
		return os.Geteuid()
	}
	return OtherAccount
}

// privateDescriptor returns the security descriptor of privateDirSDDL for
// the user running the process, and the user's SID.
func privateDescriptor() (*windows.SECURITY_DESCRIPTOR, string, error) {
	user, err := UserSID()
	if err != nil {
		return nil, "", err
	}
	sd, err := windows.SecurityDescriptorFromString(privateDirSDDL(user.String()))
	if err != nil {
		return nil, "", fmt.Errorf("build a private security descriptor: %w", err)
	}
	return sd, user.String(), nil
}

// MkdirPrivate creates the directory dir owned by the user, with a
// protected DACL that lets in only the user and SYSTEM (privateDirSDDL);
// its parent must exist. An existing dir is an error wrapping fs.ErrExist.
func MkdirPrivate(dir string) error {
	sd, _, err := privateDescriptor()
	if err != nil {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	sa := windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(sa))
	if err := windows.CreateDirectory(p, &sa); err != nil {
		// ERROR_ALREADY_EXISTS is fs.ErrExist.
		return &fs.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	return nil
}

// ReadDACL returns the entries of dir's DACL and whether it is protected.
func ReadDACL(dir string) ([]ACE, bool, error) {
	sd, err := windows.GetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return nil, false, fmt.Errorf("read the access list of %s: %w", dir, err)
	}
	control, _, err := sd.Control()
	if err != nil {
		return nil, false, fmt.Errorf("read the access list of %s: %w", dir, err)
	}
	protected := control&windows.SE_DACL_PROTECTED != 0
	dacl, _, err := sd.DACL()
	if errors.Is(err, windows.ERROR_OBJECT_NOT_FOUND) || err == nil && dacl == nil {
		return nullDACL(), protected, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read the access list of %s: %w", dir, err)
	}
	aces := make([]ACE, 0, dacl.AceCount)
	for i := range uint32(dacl.AceCount) {
		var e *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &e); err != nil {
			return nil, false, fmt.Errorf("read the access list of %s: entry %d: %w", dir, i, err)
		}
		a := ACE{Type: e.Header.AceType, Flags: e.Header.AceFlags, Mask: uint32(e.Mask)}
		if a.Type == ACEAllowed || a.Type == ACEDenied {
			// Both types keep the SID where ACCESS_ALLOWED_ACE does.
			a.SID = (*windows.SID)(unsafe.Pointer(&e.SidStart)).String()
		}
		aces = append(aces, a)
	}
	return aces, protected, nil
}

// MakePrivate gives the user's directory dir the protected DACL of
// privateDirSDDL when its own lets others in or inherits from the parent,
// as chmod 700 does elsewhere. A directory open to others is not refused,
// as mode bits writable by others are elsewhere: the index, the pid file
// and the log make it, inheriting its parent's entries, moments before
// query.Listen comes to it. What others were let do is logged.
func MakePrivate(dir string, _ fs.FileInfo, log *slog.Logger) error {
	sd, user, err := privateDescriptor()
	if err != nil {
		return err
	}
	aces, protected, err := ReadDACL(dir)
	if err != nil {
		return err
	}
	d := judgeDACL(aces, protected, user)
	if !d.tighten {
		return nil
	}
	nameOthers(&d)
	dacl, _, err := sd.DACL()
	if err != nil {
		return fmt.Errorf("build a private access list: %w", err)
	}
	// The entries propagate to what dir holds, which inherits them.
	err = windows.SetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil)
	if err != nil {
		return fmt.Errorf("make %s private to the user: %w", dir, err)
	}
	if len(d.others) > 0 {
		log.Warn("socket directory made private: its access list let others in", "dir", dir, "others", d.String())
	}
	return nil
}

// CheckPrivate returns an error wrapping ErrUnsafeDir when the DACL of the
// user's directory dir lets in anyone but the user, SYSTEM and the
// Administrators group.
func CheckPrivate(dir string, _ fs.FileInfo) error {
	user, err := UserSID()
	if err != nil {
		return err
	}
	aces, protected, err := ReadDACL(dir)
	if err != nil {
		return err
	}
	if d := judgeDACL(aces, protected, user.String()); len(d.others) > 0 {
		nameOthers(&d)
		return fmt.Errorf("directory %s lets others in (%s); the daemon makes it private when it starts, or remove them (icacls \"%s\" /inheritance:r /grant:r \"%%USERNAME%%:(OI)(CI)F\"): %w",
			dir, d, dir, ErrUnsafeDir)
	}
	return nil
}

// nameOthers looks up the account names of the entries in d.others, for a
// message.
func nameOthers(d *dirACL) {
	for i, a := range d.others {
		if a.SID == "" || a.Name != "" {
			continue
		}
		sid, err := windows.StringToSid(a.SID)
		if err != nil {
			continue
		}
		if account, domain, _, err := sid.LookupAccount(""); err == nil {
			d.others[i].Name = account
			if domain != "" {
				d.others[i].Name = domain + `\` + account
			}
		}
	}
}
