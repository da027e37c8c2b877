package bundle

// Test hooks: the one-pass matchers, for their comparison with the
// runtime's regular expressions.
var (
	MatchFrontMatter = matchFrontMatter
	FencedBlocks     = fencedBlocks
)

// ParseWhole is Parse with a recipe's long texts parsed too.
func ParseWhole(path string, src []byte, opts Options) *File {
	opts.whole = true
	return Parse(path, src, opts)
}
