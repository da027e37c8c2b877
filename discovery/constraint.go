package discovery

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// ErrInvalidConstraint is returned (wrapped) when a version constraint from
// [tool.amplifier.collection.requires] cannot be parsed.
var ErrInvalidConstraint = errors.New("discovery: invalid version constraint")

// maxConstraintLen bounds the length of a constraint string.
const maxConstraintLen = 256

// Constraint is a parsed version constraint such as "^1.2.3", "~1.2.0",
// ">=1.0,<2.0" or "==1.5.0". It is immutable and safe for concurrent use.
//
// The grammar is one or more clauses separated by commas, all of which must
// hold (comma means AND). A clause is an optional operator followed by a
// version of one to three dot-separated numbers (X, X.Y or X.Y.Z, without
// leading zeros), optionally with a -pre-release and a +build suffix.
// Whitespace around operators, versions and commas is ignored.
//
// Operators:
//
//   - ^X.Y.Z: caret, as semver ranges define it: >=X.Y.Z and below the next
//     release that changes the leftmost non-zero part. ^1.2.3 is
//     >=1.2.3,<2.0.0; ^0.2.3 is >=0.2.3,<0.3.0; ^0.0.3 is >=0.0.3,<0.0.4.
//     With a partial version, ^1.2 is >=1.2.0,<2.0.0, ^0.0 is <0.1.0 and ^0
//     is <1.0.0.
//   - ~X.Y.Z: tilde: >=X.Y.Z,<X.(Y+1).0; ~1 is >=1.0.0,<2.0.0.
//   - >=, >, <=, <: comparisons; a partial version is padded with zeros, so
//     >=1.0,<2.0 is 1.0.0 <= v < 2.0.0.
//   - == (or no operator): exactly that version, padded with zeros.
//   - !=: anything but that version, padded with zeros.
//
// Wildcards ("*", "1.x"), "||" alternatives and Python's "~=" are not part
// of the collection format and are rejected. A pre-release version
// (1.0.0-rc.1) satisfies a constraint only when a clause of the constraint
// names a pre-release itself, as semver ranges define it.
type Constraint struct {
	clauses []constraintClause
	checks  []*semver.Constraints // one per clause, all must hold
}

// constraintClause is one comma-separated part of a Constraint, as written.
type constraintClause struct {
	op      string // "", "^", "~", ">=", ">", "<=", "<", "==" or "!="
	version string
}

// constraintOps lists the operators, longest first so that ">=" is tried
// before ">".
var constraintOps = [...]string{">=", "<=", "==", "!=", "^", "~", ">", "<"}

// constraintOpChars are the bytes operators are made of.
const constraintOpChars = "<>=!~^"

// constraintError explains why a constraint string was rejected.
type constraintError struct {
	input, reason string
}

func (e *constraintError) Error() string {
	return fmt.Sprintf("invalid constraint %q: %s", e.input, e.reason)
}

func (e *constraintError) Is(target error) bool { return target == ErrInvalidConstraint }

// ParseConstraint parses a version constraint. The error, when not nil,
// says what is wrong and matches ErrInvalidConstraint under errors.Is.
func ParseConstraint(s string) (*Constraint, error) {
	fail := func(format string, args ...any) (*Constraint, error) {
		return nil, &constraintError{input: s, reason: fmt.Sprintf(format, args...)}
	}
	if len(s) > maxConstraintLen {
		return fail("longer than %d bytes", maxConstraintLen)
	}
	if strings.TrimSpace(s) == "" {
		return fail("empty constraint; want a range such as ^1.0.0 or >=1.0,<2.0")
	}
	if strings.Contains(s, "||") {
		return fail(`"||" alternatives are not supported; want one range, such as >=1.0,<3.0`)
	}
	parts := strings.Split(s, ",")
	c := &Constraint{
		clauses: make([]constraintClause, 0, len(parts)),
		checks:  make([]*semver.Constraints, 0, len(parts)),
	}
	for i, part := range parts {
		part = strings.TrimSpace(part)
		if part == "" {
			return fail("clause %d is empty; want clauses separated by single commas, such as >=1.0,<2.0", i+1)
		}
		op, rest := splitConstraintOp(part)
		if op == "" {
			if n := len(rest) - len(strings.TrimLeft(rest, constraintOpChars)); n > 0 {
				bad := rest[:n]
				if near := suggestConstraintOp(bad, strings.TrimSpace(rest[n:])); near != "" {
					return fail("unknown operator %q; did you mean %q?", bad, near)
				}
				return fail("unknown operator %q; want one of ^ ~ >= > <= < == !=", bad)
			}
		}
		version := strings.TrimSpace(rest)
		if version == "" {
			return fail("missing version after %q; want a version such as %s1.0.0", op, op)
		}
		if strings.ContainsAny(version, " \t") {
			// Clauses written apart, as pip and npm allow: ">=1.0 <2.0".
			if joined := strings.Join(strings.Fields(part), ","); joined != part {
				if _, err := ParseConstraint(joined); err == nil {
					return fail("clauses are separated by commas; did you mean %q?", joined)
				}
			}
		}
		full, why := normalizeConstraintVersion(version)
		if why != "" {
			return fail("%q is not a version: %s", version, why)
		}
		var expr string
		switch op {
		case "^", "~":
			// Masterminds reads partial versions of ^ and ~ as semver
			// ranges do (^1.2 = >=1.2.0 <2.0.0), so pass them as written.
			expr = op + version
		case "", "==":
			expr = "=" + full
		default:
			expr = op + full
		}
		check, err := semver.NewConstraint(expr)
		if err != nil {
			// Not expected once the version is checked above; said in
			// the user's terms all the same.
			return fail("%q is not a version range the checker accepts", part)
		}
		c.clauses = append(c.clauses, constraintClause{op: op, version: version})
		c.checks = append(c.checks, check)
	}
	return c, nil
}

// splitConstraintOp splits a clause into its operator (possibly "") and
// the rest. When the clause opens with operator characters that spell no
// known operator, the operator is "" and the rest starts with them.
func splitConstraintOp(clause string) (op, rest string) {
	end := 0
	for end < len(clause) && strings.IndexByte(constraintOpChars, clause[end]) >= 0 {
		end++
	}
	for _, o := range constraintOps {
		if clause[:end] == o {
			return o, clause[end:]
		}
	}
	return "", clause
}

// suggestConstraintOp returns the operator that op, which is none,
// most likely stands for, given the version that follows it; "" when no
// one operator is likely.
func suggestConstraintOp(op, version string) string {
	switch op {
	case "=>":
		return ">="
	case "=<":
		return "<="
	case ">>":
		return ">"
	case "<<":
		return "<"
	case "=", "===":
		return "=="
	case "!", "=!", "!==", "<>":
		return "!="
	case "~=", "~>", "=~":
		// Python's ~= and Ruby's ~>: ~=X.Y is >=X.Y,<(X+1).0, which is
		// ^X.Y; ~=X.Y.Z is >=X.Y.Z,<X.(Y+1).0, which is ~X.Y.Z.
		if strings.Count(version, ".") == 1 {
			return "^"
		}
		return "~"
	case "^=", "=^":
		return "^"
	}
	return ""
}

// normalizeConstraintVersion checks a version of a constraint clause and
// returns it padded to X.Y.Z (suffixes kept), or, when it is not a
// version, why.
func normalizeConstraintVersion(v string) (full, why string) {
	core, suffix := v, ""
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		core, suffix = v[:i], v[i:]
	}
	nums := strings.Split(core, ".")
	if len(nums) > 3 {
		return "", "more than three numbers; want X, X.Y or X.Y.Z"
	}
	for _, n := range nums {
		switch {
		case n == "x" || n == "X" || n == "*":
			return "", "wildcards are not supported"
		case n == "" || strings.Trim(n, "0123456789") != "":
			return "", "want X, X.Y or X.Y.Z"
		case len(n) > 1 && n[0] == '0':
			return "", fmt.Sprintf("leading zero in %q", n)
		}
		if _, err := strconv.ParseUint(n, 10, 64); err != nil {
			return "", fmt.Sprintf("%q is too large", n)
		}
	}
	if why := checkVersionSuffix(suffix); why != "" {
		return "", why
	}
	for len(nums) < 3 {
		nums = append(nums, "0")
	}
	return strings.Join(nums, ".") + suffix, ""
}

// checkVersionSuffix checks an optional "-pre.release" followed by an
// optional "+build.meta" and says what is wrong with it, or "".
func checkVersionSuffix(s string) string {
	if s == "" {
		return ""
	}
	pre, build := "", ""
	if s[0] == '-' {
		pre = s[1:]
		if i := strings.IndexByte(pre, '+'); i >= 0 {
			pre, build = pre[:i], pre[i+1:]
			if !validSemverIdents(build) {
				return fmt.Sprintf("bad build metadata %q", build)
			}
		}
		if !validSemverIdents(pre) {
			return fmt.Sprintf("bad pre-release %q", pre)
		}
		return ""
	}
	build = s[1:]
	if !validSemverIdents(build) {
		return fmt.Sprintf("bad build metadata %q", build)
	}
	return ""
}

// validSemverIdents reports whether s is one or more dot-separated non-empty
// identifiers of ASCII letters, digits and hyphens.
func validSemverIdents(s string) bool {
	for _, id := range strings.Split(s, ".") {
		if id == "" {
			return false
		}
		for i := 0; i < len(id); i++ {
			b := id[i]
			if !(b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '-') {
				return false
			}
		}
	}
	return true
}

// Check reports whether version satisfies every clause of c. The version
// must be strict semver (X.Y.Z with optional suffixes); anything else is an
// error.
func (c *Constraint) Check(version string) (bool, error) {
	v, err := semver.StrictNewVersion(version)
	if err != nil {
		return false, fmt.Errorf("check version %q against %q: %w", version, c.String(), err)
	}
	for _, check := range c.checks {
		if !check.Check(v) {
			return false, nil
		}
	}
	return true, nil
}

// String returns c in canonical form: the clauses as written, without
// whitespace, separated by commas (">=1.0,<2.0").
func (c *Constraint) String() string {
	var b strings.Builder
	for i, cl := range c.clauses {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(cl.op)
		b.WriteString(cl.version)
	}
	return b.String()
}
