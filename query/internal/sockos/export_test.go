package sockos

// NewACE returns an entry of type typ (0 allows, 1 denies) with flags,
// the access mask and the trustee's SID and name.
func NewACE(typ, flags uint8, mask uint32, sid, name string) ACE {
	return ACE{Type: typ, Flags: flags, Mask: mask, SID: sid, Name: name}
}

// NullDACL is the DACL that stands for none.
func NullDACL() []ACE { return nullDACL() }

// PrivateDirSDDL is the security descriptor of a socket directory on
// Windows.
func PrivateDirSDDL(user string) string { return privateDirSDDL(user) }

// JudgeDACL says whom a directory's DACL lets in besides user, SYSTEM and
// Administrators (as a message), whether one of them may write, and
// whether the DACL should be replaced.
func JudgeDACL(aces []ACE, protected bool, user string) (others string, othersWrite, tighten bool) {
	d := judgeDACL(aces, protected, user)
	return d.String(), d.othersWrite, d.tighten
}
