package resolve

// EffectiveSession returns the session block the check computes for ref
// without merging the rest of the profile.
func EffectiveSession(s *Set, ref ProfileRef) (any, bool) {
	return s.EffectiveSession(s.Chain(ref))
}
