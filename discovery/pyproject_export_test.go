package discovery

// ScanTOMLSpans runs the TOML position scanner on src and returns how many
// spans it recorded, so that fuzz tests can feed it any input.
func ScanTOMLSpans(src []byte) int {
	spans, _ := scanTOMLSpans(src)
	return len(spans)
}

// IsPyprojectVersion is the version format check, for the test that holds
// it to its regular expression.
var IsPyprojectVersion = isPyprojectVersion
