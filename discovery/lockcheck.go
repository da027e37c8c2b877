package discovery

// CheckLocks reads the lock file of each project and user root of s and
// compares it with what the root holds: corrupt files, entries whose path
// is gone, module paths that escape, and lock versus disk. A root without a
// lock file reports nothing.
func CheckLocks(s *Set) []Diagnostic {
	var out []Diagnostic
	for i, r := range s.Roots {
		lp := LockPath(r)
		if lp == "" || r.Kind == RootArgument {
			continue
		}
		l, diags, err := ReadLock(lp)
		out = append(out, diags...)
		if err != nil || l == nil {
			continue
		}
		var installed []LockCheckCollection
		for _, c := range s.InRoot(i) {
			installed = append(installed, LockCheckCollection{Name: c.Name, Dir: c.Dir})
		}
		out = append(out, CheckLock(lp, l, installed)...)
	}
	return out
}

// Exists reports whether the lock was read from a file; a lock file that
// does not exist reads as an empty lock that does not.
func (l *Lock) Exists() bool { return l != nil && l.exists }
