package sockos

import (
	"fmt"
	"strings"
)

// Windows keeps other users out of the socket's directory with its access
// list (DACL), not with mode bits. What follows decides about a DACL in
// terms that need no Windows API, so that it is tested on every system;
// dir_windows.go reads and writes the real ones.

// Well-known security identifiers.
const (
	sidEveryone       = "S-1-1-0"
	sidSystem         = "S-1-5-18"
	sidAdministrators = "S-1-5-32-544"
)

// privateDirSDDL returns, in the Security Descriptor Definition Language,
// the security descriptor a socket directory of the user whose SID is user
// is created with (and whose DACL query.Listen puts on one that lacks it):
//
//   - O:user: owned by the user, even when an elevated process, whose
//     default owner is the Administrators group, creates it;
//   - D:P: a protected DACL, which inherits nothing from the parent: under
//     D:\ a new folder would inherit "Authenticated Users: Modify";
//   - full control for the user, and for SYSTEM, as Windows gives SYSTEM
//     every profile folder: SYSTEM is the system itself (services, backup,
//     antivirus, the search indexer) and can read any file through its
//     privileges anyway, and a tool it runs should not fail on the folder.
//     No one else: Administrators must take ownership first, as for
//     anything private to another user;
//   - OICI: files and folders created inside (the socket, its lock, the pid
//     file) inherit the same entries.
func privateDirSDDL(user string) string {
	return "O:" + user + "D:P(A;OICI;FA;;;" + user + ")(A;OICI;FA;;;SY)"
}

// ACE is one entry of a DACL, as Windows gives it.
type ACE struct {
	// Type is the ACE type: ACEAllowed, ACEDenied or another.
	Type uint8
	// Flags are the ACE flags (ACEInheritOnly and others).
	Flags uint8
	// Mask is the access mask.
	Mask uint32
	// SID is the trustee, "S-1-…"; empty when Type has no plain SID.
	SID string
	// Name is the trustee's account name, for messages; looked up only
	// for those (a domain account's lookup may ask the network).
	Name string
}

// ACE types and flags, as in winnt.h.
const (
	ACEAllowed     = 0 // ACCESS_ALLOWED_ACE_TYPE
	ACEDenied      = 1 // ACCESS_DENIED_ACE_TYPE
	ACEInheritOnly = 0x8
)

// writeRights are the rights of a directory's access mask that let their
// holder add, remove or rename entries, or change the directory's DACL or
// owner: FILE_ADD_FILE, FILE_ADD_SUBDIRECTORY, FILE_DELETE_CHILD, DELETE,
// WRITE_DAC, WRITE_OWNER, GENERIC_ALL, GENERIC_WRITE and MAXIMUM_ALLOWED.
const writeRights = 0x2 | 0x4 | 0x40 | 0x10000 | 0x40000 | 0x80000 | 0x10000000 | 0x40000000 | 0x02000000

// nullDACL stands for the DACL of a directory without one, or with a NULL
// one: everyone has full control.
func nullDACL() []ACE {
	return []ACE{{Type: ACEAllowed, Mask: 0x10000000, SID: sidEveryone, Name: "Everyone"}}
}

// dirACL is what a directory's DACL lets others do.
type dirACL struct {
	// others are the entries that grant access to the directory itself to
	// someone other than the user, SYSTEM or the Administrators group.
	others []ACE
	// othersWrite is set when one of them grants writeRights.
	othersWrite bool
	// tighten is set when the DACL should be replaced by privateDirSDDL's:
	// it grants others access, or it is not protected.
	tighten bool
}

// judgeDACL says what aces, the DACL of a directory, protected or not
// (SE_DACL_PROTECTED), let accounts other than user do. SYSTEM and the
// Administrators group count as the user's: both can take any file, so an
// entry for them exposes nothing. Entries that only children inherit are
// not the directory's; entries that deny only take away. An entry of
// another type (an object or a conditional one) counts as a grant to
// someone else, as its rights cannot be told here.
func judgeDACL(aces []ACE, protected bool, user string) dirACL {
	var d dirACL
	for _, a := range aces {
		switch {
		case a.Type == ACEDenied, a.Flags&ACEInheritOnly != 0:
			continue
		case a.Type != ACEAllowed:
			d.othersWrite = true
		case a.Mask == 0, a.SID == user, a.SID == sidSystem, a.SID == sidAdministrators:
			continue
		default:
			d.othersWrite = d.othersWrite || a.Mask&writeRights != 0
		}
		d.others = append(d.others, a)
	}
	d.tighten = !protected || len(d.others) > 0
	return d
}

// String lists the grants to others, for a message: "Everyone (S-1-1-0):
// 0x10000000", the name when known.
func (d dirACL) String() string {
	var b strings.Builder
	for i, a := range d.others {
		if i > 0 {
			b.WriteString(", ")
		}
		switch {
		case a.Type != ACEAllowed:
			fmt.Fprintf(&b, "an entry of type %d", a.Type)
		case a.Name != "":
			fmt.Fprintf(&b, "%s (%s)", a.Name, a.SID)
		default:
			b.WriteString(a.SID)
		}
		fmt.Fprintf(&b, ": %#x", a.Mask)
	}
	return b.String()
}
