package discovery

// The YAML 1.1 scalar matchers, for the test that holds them to the
// resolver's regular expressions.
var (
	IsYAML11Bool  = isYAML11Bool
	IsYAML11Int   = isYAML11Int
	IsYAML11Float = isYAML11Float
	IsYAML11Null  = isYAML11Null
)
