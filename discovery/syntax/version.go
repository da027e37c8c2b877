package syntax

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrInvalidVersion is returned (wrapped) when a string is not a strict
// semantic version.
var ErrInvalidVersion = errors.New("discovery: invalid semantic version")

// maxVersionLen bounds the length of a version string.
const maxVersionLen = 256

// Version is a semantic version as semver.org 2.0.0 defines it:
// MAJOR.MINOR.PATCH, optionally followed by a -pre-release and a +build
// part. The zero value is 0.0.0.
type Version struct {
	Major, Minor, Patch uint64
	// Pre is the pre-release without its "-" ("rc.1"), "" for none.
	Pre string
	// Build is the build metadata without its "+", "" for none. It plays
	// no part in comparisons.
	Build string
}

// versionError explains why a version string was rejected.
type versionError struct {
	input, reason string
}

func (e *versionError) Error() string {
	return fmt.Sprintf("invalid version %q: %s", e.input, e.reason)
}

func (e *versionError) Is(target error) bool { return target == ErrInvalidVersion }

// ParseVersion parses a strict semantic version: three numbers without
// leading zeros, no "v" prefix, each pre-release identifier non-empty and
// made of ASCII letters, digits and hyphens (a numeric one without a
// leading zero), likewise each build identifier (where leading zeros are
// allowed). The error, when not nil, says what is wrong and matches
// ErrInvalidVersion under errors.Is.
func ParseVersion(s string) (Version, error) {
	if len(s) > maxVersionLen {
		return Version{}, &versionError{input: s, reason: fmt.Sprintf("longer than %d bytes", maxVersionLen)}
	}
	const want = "want MAJOR.MINOR.PATCH, such as 1.0.0"
	v, parts, why := parseVersionParts(s, want)
	if why == "" && parts != 3 {
		why = want
	}
	if why != "" {
		return Version{}, &versionError{input: s, reason: why}
	}
	return v, nil
}

// parseVersionParts parses one to three dot-separated numbers (X, X.Y or
// X.Y.Z, the missing ones zero) and the optional suffixes, and returns the
// version, how many numbers it had, and why it is not a version ("" when
// it is); want, which ends a reason about the shape, says what the caller
// takes.
func parseVersionParts(s, want string) (v Version, parts int, why string) {
	core, suffix := s, ""
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		core, suffix = s[:i], s[i:]
	}
	var nums [3]uint64
	for n := range strings.SplitSeq(core, ".") {
		if parts == 3 {
			return Version{}, 0, "more than three numbers; " + want
		}
		switch {
		case n == "x" || n == "X" || n == "*":
			return Version{}, 0, "wildcards are not supported"
		case n == "" || strings.Trim(n, "0123456789") != "":
			return Version{}, 0, want
		case len(n) > 1 && n[0] == '0':
			return Version{}, 0, fmt.Sprintf("leading zero in %q", n)
		}
		u, err := strconv.ParseUint(n, 10, 64)
		if err != nil {
			return Version{}, 0, fmt.Sprintf("%q is too large", n)
		}
		nums[parts] = u
		parts++
	}
	v = Version{Major: nums[0], Minor: nums[1], Patch: nums[2]}
	if suffix != "" {
		if v.Pre, v.Build, why = parseVersionSuffix(suffix); why != "" {
			return Version{}, 0, why
		}
	}
	return v, parts, ""
}

// parseVersionSuffix splits an optional "-pre.release" followed by an
// optional "+build.meta", s starting with one of them, and says what is
// wrong with either.
func parseVersionSuffix(s string) (pre, build, why string) {
	hasBuild := true
	if s[0] == '-' {
		pre, build, hasBuild = strings.Cut(s[1:], "+")
		if ok, zero := checkIdents(pre, true); !ok {
			if zero != "" {
				return "", "", fmt.Sprintf("bad pre-release %q: leading zero in %q", pre, zero)
			}
			return "", "", fmt.Sprintf("bad pre-release %q", pre)
		}
	} else {
		build = s[1:]
	}
	if !hasBuild {
		return pre, "", ""
	}
	if ok, _ := checkIdents(build, false); !ok {
		return "", "", fmt.Sprintf("bad build metadata %q", build)
	}
	return pre, build, ""
}

// checkIdents reports whether s is one or more dot-separated non-empty
// identifiers of ASCII letters, digits and hyphens, and, with pre set,
// none of them a number with a leading zero; zero is the first such
// number.
func checkIdents(s string, pre bool) (ok bool, zero string) {
	for id := range strings.SplitSeq(s, ".") {
		if id == "" {
			return false, ""
		}
		for i := 0; i < len(id); i++ {
			if b := id[i]; !(b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '-') {
				return false, ""
			}
		}
		if pre && len(id) > 1 && id[0] == '0' && isNumericIdent(id) {
			return false, id
		}
	}
	return true, ""
}

// Compare returns -1, 0 or +1 as v orders before, with or after w, by
// semver.org's precedence: the numbers, then a version with a pre-release
// before the same one without, pre-releases identifier by identifier
// (numeric ones by value and before alphanumeric ones, those in ASCII
// order, a shorter list before a longer one it begins). The build part
// plays no part.
func (v Version) Compare(w Version) int {
	switch {
	case v.Major != w.Major:
		return cmpUint(v.Major, w.Major)
	case v.Minor != w.Minor:
		return cmpUint(v.Minor, w.Minor)
	case v.Patch != w.Patch:
		return cmpUint(v.Patch, w.Patch)
	case v.Pre == w.Pre:
		return 0
	case v.Pre == "":
		return 1
	case w.Pre == "":
		return -1
	}
	a, b := v.Pre, w.Pre
	for a != "" && b != "" {
		var x, y string
		x, a, _ = strings.Cut(a, ".")
		y, b, _ = strings.Cut(b, ".")
		if c := comparePreIdent(x, y); c != 0 {
			return c
		}
	}
	switch {
	case a == b:
		return 0
	case a == "":
		return -1
	}
	return 1
}

// comparePreIdent orders two pre-release identifiers.
func comparePreIdent(x, y string) int {
	nx, ny := isNumericIdent(x), isNumericIdent(y)
	switch {
	case nx && ny:
		// Without leading zeros, the longer number is the larger.
		if len(x) != len(y) {
			return cmpInt(len(x), len(y))
		}
	case nx:
		return -1
	case ny:
		return 1
	}
	return strings.Compare(x, y)
}

// isNumericIdent reports whether id is all digits.
func isNumericIdent(id string) bool {
	for i := 0; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return false
		}
	}
	return id != ""
}

func cmpUint(a, b uint64) int {
	if a < b {
		return -1
	}
	return 1
}

func cmpInt(a, b int) int {
	if a < b {
		return -1
	}
	return 1
}

// String returns v as MAJOR.MINOR.PATCH[-pre][+build].
func (v Version) String() string {
	var b strings.Builder
	b.WriteString(strconv.FormatUint(v.Major, 10))
	b.WriteByte('.')
	b.WriteString(strconv.FormatUint(v.Minor, 10))
	b.WriteByte('.')
	b.WriteString(strconv.FormatUint(v.Patch, 10))
	if v.Pre != "" {
		b.WriteByte('-')
		b.WriteString(v.Pre)
	}
	if v.Build != "" {
		b.WriteByte('+')
		b.WriteString(v.Build)
	}
	return b.String()
}
