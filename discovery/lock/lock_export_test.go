package lock

// LockJSONSpans runs the span scanner of Parse on src and returns its
// spans as key start, key end, value start and value end, by path: the
// keys leading to a member, each after a NUL, behind a "$".
func JSONSpans(src []byte) map[string][4]int {
	out := map[string][4]int{}
	for k, s := range lockJSONSpans(src) {
		out[k] = [4]int{s.keyStart, s.keyEnd, s.valStart, s.valEnd}
	}
	return out
}

// MaxLockSpanDepth is how many keys deep the span scanner records.
const MaxSpanDepth = maxLockSpanDepth
