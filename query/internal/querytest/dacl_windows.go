package querytest

import (
	"strings"

	"golang.org/x/sys/windows"

	"github.com/amplidex/amplidex/query/internal/sockos"
)

// DirEntries returns the SIDs that dir's DACL grants access to dir itself,
// whether the DACL is protected, and whether the user owns dir.
func DirEntries(dir string) (sids []string, protected, owned bool, err error) {
	aces, protected, err := sockos.ReadDACL(dir)
	if err != nil {
		return nil, false, false, err
	}
	for _, a := range aces {
		if a.Type == sockos.ACEAllowed && a.Flags&sockos.ACEInheritOnly == 0 && a.Mask != 0 {
			sids = append(sids, a.SID)
		}
	}
	return sids, protected, sockos.FileOwner(dir, nil) != sockos.OtherAccount, nil
}

// SetDACL replaces dir's DACL by the one of sddl (a security descriptor
// such as "D:(A;OICI;FA;;;WD)"), "<user>" in it replaced by the user's
// SID; "D:P" protects it.
func SetDACL(dir, sddl string) error {
	user, err := sockos.UserSID()
	if err != nil {
		return err
	}
	sd, err := windows.SecurityDescriptorFromString(strings.ReplaceAll(sddl, "<user>", user.String()))
	if err != nil {
		return err
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return err
	}
	info := windows.SECURITY_INFORMATION(windows.DACL_SECURITY_INFORMATION | windows.UNPROTECTED_DACL_SECURITY_INFORMATION)
	if strings.HasPrefix(sddl, "D:P") {
		info = windows.DACL_SECURITY_INFORMATION | windows.PROTECTED_DACL_SECURITY_INFORMATION
	}
	return windows.SetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, info, nil, nil, dacl, nil)
}

// UserSID returns the SID of the user running the test.
func UserSID() (string, error) {
	sid, err := sockos.UserSID()
	if err != nil {
		return "", err
	}
	return sid.String(), nil
}
