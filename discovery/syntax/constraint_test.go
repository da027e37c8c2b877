package syntax_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/amplidex/amplidex/discovery/syntax"
)

func TestConstraintCheck(t *testing.T) {
	cases := []struct {
		constraint string
		canonical  string
		match      []string
		miss       []string
	}{
		// The spec's table.
		{"^1.2.3", "^1.2.3", []string{"1.2.3", "1.2.4", "1.9.0", "1.99.99"}, []string{"1.2.2", "2.0.0", "0.9.0"}},
		{"~1.2.3", "~1.2.3", []string{"1.2.3", "1.2.9"}, []string{"1.2.2", "1.3.0", "2.0.0"}},
		{">=1.0,<2.0", ">=1.0,<2.0", []string{"1.0.0", "1.5.0", "1.99.99"}, []string{"0.9.9", "2.0.0"}},
		{"==1.2.3", "==1.2.3", []string{"1.2.3"}, []string{"1.2.4", "1.2.2", "1.3.0"}},
		// The spec's examples.
		{"^1.0.0", "^1.0.0", []string{"1.0.0", "1.4.2"}, []string{"0.9.0", "2.0.0"}},
		{"~1.2.0", "~1.2.0", []string{"1.2.0", "1.2.7"}, []string{"1.3.0", "1.1.9"}},
		{">=1.0.0,<2.0.0", ">=1.0.0,<2.0.0", []string{"1.0.0", "1.9.9"}, []string{"2.0.0", "0.1.0"}},
		{"==1.5.0", "==1.5.0", []string{"1.5.0"}, []string{"1.5.1", "1.4.0"}},
		{">=0.1.0", ">=0.1.0", []string{"0.1.0", "0.2.0", "3.0.0"}, []string{"0.0.9"}},
		// Caret below 1.0, as semver ranges define it.
		{"^0.2.3", "^0.2.3", []string{"0.2.3", "0.2.9"}, []string{"0.3.0", "1.0.0", "0.2.2"}},
		{"^0.0.3", "^0.0.3", []string{"0.0.3"}, []string{"0.0.4", "0.1.0"}},
		{"^1.2", "^1.2", []string{"1.2.0", "1.9.0"}, []string{"1.1.9", "2.0.0"}},
		{"^1", "^1", []string{"1.0.0", "1.9.0"}, []string{"2.0.0", "0.9.0"}},
		{"~1", "~1", []string{"1.0.0", "1.9.0"}, []string{"2.0.0"}},
		{"~1.2", "~1.2", []string{"1.2.0", "1.2.5"}, []string{"1.3.0"}},
		// Partial versions of comparisons and == are padded with zeros.
		{">1.2", ">1.2", []string{"1.2.1", "1.3.0"}, []string{"1.2.0", "1.1.0"}},
		{"==1.5", "==1.5", []string{"1.5.0"}, []string{"1.5.1"}},
		{"1.5.0", "1.5.0", []string{"1.5.0"}, []string{"1.5.1"}},
		{"<=2.0", "<=2.0", []string{"2.0.0", "1.0.0"}, []string{"2.0.1"}},
		{"!=1.5.0", "!=1.5.0", []string{"1.4.0", "1.5.1"}, []string{"1.5.0"}},
		// Whitespace is ignored; String is canonical.
		{" >= 1.0 , < 2.0 ", ">=1.0,<2.0", []string{"1.0.0"}, []string{"2.0.0"}},
		{"^ 1.0.0", "^1.0.0", []string{"1.0.0"}, []string{"2.0.0"}},
		// Pre-releases match only when the constraint names one.
		{"^1.0.0", "^1.0.0", nil, []string{"1.1.0-rc.1"}},
		{">=1.0.0-rc.1", ">=1.0.0-rc.1", []string{"1.0.0-rc.1", "1.0.0-rc.2", "1.0.0"}, []string{"1.0.0-beta"}},
		{"==1.0.0+build.5", "==1.0.0+build.5", []string{"1.0.0"}, []string{"1.0.1"}},
		// A clause that names a pre-release admits pre-releases to every
		// clause, which then decide as for any version.
		{">=1.0.0-rc.1,<2.0.0", ">=1.0.0-rc.1,<2.0.0", []string{"1.0.0-rc.1", "1.0.0-rc.2", "1.5.0-beta", "1.9.9", "2.0.0-rc.1"}, []string{"1.0.0-beta", "2.0.0"}},
		{"<2.0.0,!=1.0.0-rc.1", "<2.0.0,!=1.0.0-rc.1", []string{"1.0.0-rc.2", "1.0.0", "2.0.0-rc.1"}, []string{"1.0.0-rc.1", "2.0.0"}},
		// The upper bound of ^ and ~ keeps the part: the next release's
		// pre-releases are outside.
		{"^1.0.0-rc.1", "^1.0.0-rc.1", []string{"1.0.0-rc.1", "1.2.0-beta", "1.9.0"}, []string{"2.0.0-alpha", "1.0.0-beta"}},
		{"~1.2.0-rc.1", "~1.2.0-rc.1", []string{"1.2.0-rc.1", "1.2.5-x"}, []string{"1.3.0-alpha"}},
		// ~0.0.0 is <0.1.0, as for any ~X.Y.Z.
		{"~0.0.0", "~0.0.0", []string{"0.0.0", "0.0.9"}, []string{"0.1.0", "1.0.0"}},
		{"^0", "^0", []string{"0.0.0", "0.9.9"}, []string{"1.0.0"}},
		{"^0.0", "^0.0", []string{"0.0.0", "0.0.9"}, []string{"0.1.0"}},
		{"^0.0.0", "^0.0.0", []string{"0.0.0"}, []string{"0.0.1"}},
		// Pre-releases order identifier by identifier, numbers by value.
		{">1.0.0-rc.9", ">1.0.0-rc.9", []string{"1.0.0-rc.10", "1.0.0-rc.a", "1.0.0"}, []string{"1.0.0-rc.8", "1.0.0-rc", "1.0.0-beta.11"}},
		{">=1.0.0-alpha,<1.0.0", ">=1.0.0-alpha,<1.0.0", []string{"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta"}, []string{"1.0.0", "0.9.0"}},
	}
	for _, tc := range cases {
		t.Run(tc.constraint, func(t *testing.T) {
			c, err := syntax.ParseConstraint(tc.constraint)
			if err != nil {
				t.Fatalf("ParseConstraint: %v", err)
			}
			if got := c.String(); got != tc.canonical {
				t.Errorf("String() = %q, want %q", got, tc.canonical)
			}
			for _, v := range tc.match {
				if ok, err := c.Check(v); !ok || err != nil {
					t.Errorf("Check(%q) = %v, %v; want true", v, ok, err)
				}
			}
			for _, v := range tc.miss {
				if ok, err := c.Check(v); ok || err != nil {
					t.Errorf("Check(%q) = %v, %v; want false", v, ok, err)
				}
			}
		})
	}
}

// TestConstraintAgainstSemver checks every constraint of a grid against
// every version of another with github.com/Masterminds/semver/v3 as the
// oracle: the same answer, and the same versions rejected.
func TestConstraintAgainstSemver(t *testing.T) {
	var constraints []string
	for _, op := range []string{"", "==", "!=", ">=", ">", "<=", "<", "^", "~"} {
		for _, v := range []string{"0", "1", "0.0", "0.2", "1.2", "0.0.0", "0.0.3", "0.2.3", "1.2.3", "1.0.0-rc.1", "1.2-beta", "0-alpha", "2.0.0+build.1"} {
			constraints = append(constraints, op+v)
		}
	}
	constraints = append(constraints, ">=1.0,<2.0", ">=1.0.0-rc.1,<2.0.0", ">1.0.0-rc.9,<=1.0.0", "^1.2.3,!=1.4.0", "~1.2,>1.2.1", "<2.0.0,!=1.0.0-rc.1")
	versions := []string{
		"0.0.0", "0.0.1", "0.0.3", "0.0.4", "0.1.0", "0.2.0", "0.2.3", "0.2.9", "0.3.0", "1.0.0", "1.1.9", "1.2.0",
		"1.2.1", "1.2.3", "1.2.4", "1.3.0", "1.4.0", "1.9.9", "2.0.0", "2.0.1", "10.0.0", "18446744073709551615.0.0",
		"0.0.0-alpha", "0.0.3-rc.1", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-rc.1", "1.0.0-rc.2", "1.0.0-rc.10", "1.0.0-rc.9",
		"1.0.0-rc", "1.0.0-beta", "1.2.0-beta", "1.2.0-beta.1", "1.2.3-1", "1.5.0-beta", "2.0.0-rc.1", "1.0.0+build", "1.2.3+x.y",
		"", "1", "1.2", "v1.2.3", "01.2.3", "1.2.3-", "1.2.3+", "1.2.3-01", "1.2.3-a..b", "1.2.3-a_b", "1.2.3.4", "1.2.3-a+b+c",
		"18446744073709551616.0.0", " 1.2.3",
	}
	for _, cs := range constraints {
		c, err := syntax.ParseConstraint(cs)
		if err != nil {
			t.Errorf("ParseConstraint(%q): %v", cs, err)
			continue
		}
		for _, v := range versions {
			compareWithSemver(t, c, v)
		}
	}
}

// compareWithSemver checks c.Check(version) against semver's answer.
func compareWithSemver(t *testing.T, c *syntax.Constraint, version string) {
	t.Helper()
	got, gotErr := c.Check(version)
	want, skip, wantErr := semverOracle(c.String(), version)
	switch {
	case skip != "":
	case (gotErr == nil) != (wantErr == nil):
		t.Errorf("Check(%q) against %q: error %v; semver: %v", version, c, gotErr, wantErr)
	case got != want:
		t.Errorf("Check(%q) against %q = %v; semver says %v", version, c, got, want)
	}
}

// semverOracle answers whether version satisfies the constraint whose
// canonical form is canonical with github.com/Masterminds/semver/v3, given
// the whole constraint: each clause with its operator as written, but ""
// and == as =, and the version of a comparison padded to X.Y.Z, as the
// constraint's grammar defines them. skip says why the answer is not
// comparable, where the two differ by design:
//   - semver admits every version to ~0.0.0, where the constraint keeps
//     the minor as for every other ~X.Y.Z;
//   - semver orders pre-release numbers too large for 64 bits as text;
//   - semver refuses constraints longer than 512 bytes.
func semverOracle(canonical, version string) (ok bool, skip string, err error) {
	var exprs []string
	for clause := range strings.SplitSeq(canonical, ",") {
		op := ""
		for _, o := range []string{">=", "<=", "==", "!=", "^", "~", ">", "<"} {
			if strings.HasPrefix(clause, o) {
				op = o
				break
			}
		}
		v := clause[len(op):]
		core, suffix := v, ""
		if i := strings.IndexAny(v, "-+"); i >= 0 {
			core, suffix = v[:i], v[i:]
		}
		if op == "~" && core == "0.0.0" {
			return false, "~0.0.0", nil
		}
		padded := core + strings.Repeat(".0", 2-strings.Count(core, ".")) + suffix
		switch op {
		case "^", "~":
			exprs = append(exprs, op+v)
		case "", "==":
			exprs = append(exprs, "="+padded)
		default:
			exprs = append(exprs, op+padded)
		}
	}
	if hugePreNumber(canonical) || hugePreNumber(version) {
		return false, "pre-release number over 64 bits", nil
	}
	expr := strings.Join(exprs, ", ")
	if len(expr) > semver.MaxConstraintLen {
		return false, "too long for semver", nil
	}
	cs, err := semver.NewConstraint(expr)
	if err != nil {
		// The constraint parsed: semver must take it too.
		return false, "", errors.New("semver rejects the constraint " + expr + ": " + err.Error())
	}
	v, err := semver.StrictNewVersion(version)
	if err != nil {
		return false, "", err
	}
	return cs.Check(v), "", nil
}

// hugePreNumber reports whether s has a run of 20 or more digits, which
// as a pre-release identifier is a number over 64 bits.
func hugePreNumber(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			if run++; run >= 20 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

func TestParseConstraintErrors(t *testing.T) {
	cases := []struct {
		in, want string
	}{
		{"", `invalid constraint "": empty constraint; want a range such as ^1.0.0 or >=1.0,<2.0`},
		{"   ", `invalid constraint "   ": empty constraint; want a range such as ^1.0.0 or >=1.0,<2.0`},
		{"latest", `invalid constraint "latest": "latest" is not a version: want X, X.Y or X.Y.Z`},
		{"^1.x", `invalid constraint "^1.x": "1.x" is not a version: wildcards are not supported`},
		{"*", `invalid constraint "*": "*" is not a version: wildcards are not supported`},
		// A near operator is named: Python's ~= and Ruby's ~> as the
		// operator of the same range.
		{"~=1.0", `invalid constraint "~=1.0": unknown operator "~="; did you mean "^"?`},
		{"~=1.0.2", `invalid constraint "~=1.0.2": unknown operator "~="; did you mean "~"?`},
		{"~>1.2", `invalid constraint "~>1.2": unknown operator "~>"; did you mean "^"?`},
		{"=>1.0", `invalid constraint "=>1.0": unknown operator "=>"; did you mean ">="?`},
		{"=<1.0", `invalid constraint "=<1.0": unknown operator "=<"; did you mean "<="?`},
		{"=1.0", `invalid constraint "=1.0": unknown operator "="; did you mean "=="?`},
		{"<>1.0", `invalid constraint "<>1.0": unknown operator "<>"; did you mean "!="?`},
		{">=<1.0", `invalid constraint ">=<1.0": unknown operator ">=<"; want one of ^ ~ >= > <= < == !=`},
		{">=", `invalid constraint ">=": missing version after ">="; want a version such as >=1.0.0`},
		{">=1.0,,<2", `invalid constraint ">=1.0,,<2": clause 2 is empty; want clauses separated by single commas, such as >=1.0,<2.0`},
		{">=1.0,", `invalid constraint ">=1.0,": clause 2 is empty; want clauses separated by single commas, such as >=1.0,<2.0`},
		{"1.2.3.4", `invalid constraint "1.2.3.4": "1.2.3.4" is not a version: more than three numbers; want X, X.Y or X.Y.Z`},
		{"01.2.3", `invalid constraint "01.2.3": "01.2.3" is not a version: leading zero in "01"`},
		{"v1.2.3", `invalid constraint "v1.2.3": "v1.2.3" is not a version: want X, X.Y or X.Y.Z`},
		{"1..2", `invalid constraint "1..2": "1..2" is not a version: want X, X.Y or X.Y.Z`},
		{"1.0.0-", `invalid constraint "1.0.0-": "1.0.0-" is not a version: bad pre-release ""`},
		{"1.0.0-a_b", `invalid constraint "1.0.0-a_b": "1.0.0-a_b" is not a version: bad pre-release "a_b"`},
		{"1.0.0+", `invalid constraint "1.0.0+": "1.0.0+" is not a version: bad build metadata ""`},
		{"==1.0.0-rc.01", `invalid constraint "==1.0.0-rc.01": "1.0.0-rc.01" is not a version: bad pre-release "rc.01": leading zero in "01"`},
		{"^1.0.0-a+b+c", `invalid constraint "^1.0.0-a+b+c": "1.0.0-a+b+c" is not a version: bad build metadata "b+c"`},
		{">=1.0 <2.0", `invalid constraint ">=1.0 <2.0": clauses are separated by commas; did you mean ">=1.0,<2.0"?`},
		{">= 1.0 < 2.0", `invalid constraint ">= 1.0 < 2.0": "1.0 < 2.0" is not a version: want X, X.Y or X.Y.Z`},
		{"^1.0 || ^2.0", `invalid constraint "^1.0 || ^2.0": "||" alternatives are not supported; want one range, such as >=1.0,<3.0`},
		{"99999999999999999999.0.0", `invalid constraint "99999999999999999999.0.0": "99999999999999999999.0.0" is not a version: "99999999999999999999" is too large`},
		{strings.Repeat("1,", 200) + "1", `longer than 256 bytes`},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			c, err := syntax.ParseConstraint(tc.in)
			if err == nil {
				t.Fatalf("ParseConstraint(%q) = %v, want an error", tc.in, c)
			}
			if !errors.Is(err, syntax.ErrInvalidConstraint) {
				t.Errorf("error %v does not match ErrInvalidConstraint", err)
			}
			if !strings.HasSuffix(err.Error(), tc.want) {
				t.Errorf("error = %q, want %q", err, tc.want)
			}
		})
	}
}

func TestConstraintCheckInvalidVersion(t *testing.T) {
	c, err := syntax.ParseConstraint("^1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"", "1.0", "v1.0.0", "latest", "01.0.0"} {
		if ok, err := c.Check(v); ok || err == nil {
			t.Errorf("Check(%q) = %v, %v; want an error", v, ok, err)
		}
	}
}

func FuzzParseConstraint(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzParseConstraint/.
	f.Fuzz(func(t *testing.T, s, version string) {
		c, err := syntax.ParseConstraint(s)
		if err != nil {
			if !errors.Is(err, syntax.ErrInvalidConstraint) {
				t.Fatalf("error %v does not match ErrInvalidConstraint", err)
			}
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error %q is not one line", msg)
			}
			// A whole constraint offered instead parses.
			if _, near, ok := strings.Cut(msg, "did you mean "); ok && strings.Contains(near, ",") {
				if q, err := strconv.Unquote(strings.TrimSuffix(near, "?")); err != nil {
					t.Fatalf("suggestion in %q: %v", msg, err)
				} else if _, err := syntax.ParseConstraint(q); err != nil {
					t.Fatalf("suggestion %q of %q does not parse: %v", q, s, err)
				}
			}
			return
		}
		// The canonical form parses to the same canonical form.
		c2, err := syntax.ParseConstraint(c.String())
		if err != nil {
			t.Fatalf("canonical %q of %q does not parse: %v", c.String(), s, err)
		}
		if c2.String() != c.String() {
			t.Fatalf("canonical form not stable: %q → %q", c.String(), c2.String())
		}
		ok1, err1 := c.Check(version)
		ok2, err2 := c2.Check(version)
		if ok1 != ok2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("%q and its canonical form disagree on %q", s, version)
		}
		// semver gives the same answer (see semverOracle).
		compareWithSemver(t, c, version)
	})
}

func BenchmarkParseConstraint(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := syntax.ParseConstraint(">=1.0,<2.0"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConstraintCheck(b *testing.B) {
	c, err := syntax.ParseConstraint("^1.2.3")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := c.Check("1.4.0"); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
