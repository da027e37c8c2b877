package syntax

import (
	"errors"
	"fmt"
	"strings"
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
// of the collection format and are rejected.
//
// A pre-release version (1.0.0-rc.1) satisfies a constraint only when a
// clause of the constraint names a pre-release itself; then every clause
// is checked against it, ordered as semver.org orders versions (1.0.0-rc.1
// before 1.0.0): ">=1.0.0-rc.1,<2.0.0" admits 1.0.0-rc.2 and 2.0.0-rc.1,
// "^1.0.0" does not admit 1.1.0-rc.1. The bounds of ^ and ~ keep their
// part unchanged: ^1.0.0-rc.1 does not admit 2.0.0-alpha.
//
// Where they meet on this grammar, the answers are those of
// github.com/Masterminds/semver/v3 given the whole constraint, which the
// tests check, but for ~0.0.0: it is <0.1.0 here, as every other ~X.Y.Z,
// where that library admits every version.
type Constraint struct {
	clauses []constraintClause
	// pre says that a clause names a pre-release, so that pre-release
	// versions are checked like the others instead of failing.
	pre bool
}

// constraintClause is one comma-separated part of a Constraint.
type constraintClause struct {
	op      string // "", "^", "~", ">=", ">", "<=", "<", "==" or "!="
	version string // as written
	v       Version
	parts   int // the numbers written: 1 (X), 2 (X.Y) or 3 (X.Y.Z)
}

// constraintOps lists the operators, longest first so that ">=" is tried
// before ">".
var constraintOps = [...]string{">=", "<=", "==", "!=", "^", "~", ">", "<"}

// constraintOpChars are the bytes operators are made of.
const constraintOpChars = "<>=!~^"

// ConstraintError explains why a constraint string was rejected.
type ConstraintError struct {
	Input, Reason string
}

func (e *ConstraintError) Error() string {
	return fmt.Sprintf("invalid constraint %q: %s", e.Input, e.Reason)
}

func (e *ConstraintError) Is(target error) bool { return target == ErrInvalidConstraint }

// ParseConstraint parses a version constraint. The error, when not nil,
// says what is wrong and matches ErrInvalidConstraint under errors.Is.
func ParseConstraint(s string) (*Constraint, error) {
	fail := func(format string, args ...any) (*Constraint, error) {
		return nil, &ConstraintError{Input: s, Reason: fmt.Sprintf(format, args...)}
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
	c := &Constraint{clauses: make([]constraintClause, 0, len(parts))}
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
		v, n, why := parseVersionParts(version, "want X, X.Y or X.Y.Z")
		if why != "" {
			return fail("%q is not a version: %s", version, why)
		}
		c.clauses = append(c.clauses, constraintClause{op: op, version: version, v: v, parts: n})
		c.pre = c.pre || v.Pre != ""
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

// Check reports whether version satisfies every clause of c. The version
// must be strict semver (X.Y.Z with optional suffixes, see ParseVersion);
// anything else is an error.
func (c *Constraint) Check(version string) (bool, error) {
	v, err := ParseVersion(version)
	if err != nil {
		return false, fmt.Errorf("check version %q against %q: %w", version, c.String(), err)
	}
	if v.Pre != "" && !c.pre {
		return false, nil
	}
	for _, cl := range c.clauses {
		if !cl.admits(v) {
			return false, nil
		}
	}
	return true, nil
}

// admits reports whether v satisfies the clause.
func (cl *constraintClause) admits(v Version) bool {
	c := cl.v
	cmp := v.Compare(c)
	switch cl.op {
	case "^":
		// At least c, and the leftmost part that is not zero, or the
		// last one written, unchanged: ^1.2.3 and ^1 keep the major,
		// ^0.2.3 and ^0.2 the minor, ^0.0.3 the patch, ^0.0 the minor
		// and ^0 the major.
		switch {
		case cmp < 0:
			return false
		case c.Major > 0 || cl.parts == 1:
			return v.Major == c.Major
		case v.Major != 0:
			return false
		case c.Minor > 0 || cl.parts == 2:
			return v.Minor == c.Minor
		}
		return v.Minor == 0 && v.Patch == c.Patch
	case "~":
		// At least c, and the major unchanged; the minor too unless
		// only the major is written.
		return cmp >= 0 && v.Major == c.Major && (cl.parts == 1 || v.Minor == c.Minor)
	case ">=":
		return cmp >= 0
	case ">":
		return cmp > 0
	case "<=":
		return cmp <= 0
	case "<":
		return cmp < 0
	case "!=":
		return cmp != 0
	}
	return cmp == 0 // "" and "=="
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
