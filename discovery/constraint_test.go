package discovery_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery"
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
	}
	for _, tc := range cases {
		t.Run(tc.constraint, func(t *testing.T) {
			c, err := discovery.ParseConstraint(tc.constraint)
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
		{">=1.0 <2.0", `invalid constraint ">=1.0 <2.0": clauses are separated by commas; did you mean ">=1.0,<2.0"?`},
		{">= 1.0 < 2.0", `invalid constraint ">= 1.0 < 2.0": "1.0 < 2.0" is not a version: want X, X.Y or X.Y.Z`},
		{"^1.0 || ^2.0", `invalid constraint "^1.0 || ^2.0": "||" alternatives are not supported; want one range, such as >=1.0,<3.0`},
		{"99999999999999999999.0.0", `invalid constraint "99999999999999999999.0.0": "99999999999999999999.0.0" is not a version: "99999999999999999999" is too large`},
		{strings.Repeat("1,", 200) + "1", `longer than 256 bytes`},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			c, err := discovery.ParseConstraint(tc.in)
			if err == nil {
				t.Fatalf("ParseConstraint(%q) = %v, want an error", tc.in, c)
			}
			if !errors.Is(err, discovery.ErrInvalidConstraint) {
				t.Errorf("error %v does not match ErrInvalidConstraint", err)
			}
			if !strings.HasSuffix(err.Error(), tc.want) {
				t.Errorf("error = %q, want %q", err, tc.want)
			}
		})
	}
}

func TestConstraintCheckInvalidVersion(t *testing.T) {
	c, err := discovery.ParseConstraint("^1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"", "1.0", "v1.0.0", "latest", "01.0.0"} {
		if ok, err := c.Check(v); ok || err == nil {
			t.Errorf("Check(%q) = %v, %v; want an error", v, ok, err)
		}
	}
}

func TestModuleType(t *testing.T) {
	cases := []struct{ dir, want string }{
		{"tool-custom", "tool"},
		{"tool-issue", "tool"},
		{"hooks-logger", "hook"},
		{"hook-issue-auto-work", "hook"},
		{"provider-anthropic", "provider"},
		{"loop-streaming", "orchestrator"},
		{"orchestrator-basic", "orchestrator"},
		{"context-simple", "context"},
		{"amplifier-module-loop-streaming", "orchestrator"},
		{"Tool-Upper", "tool"},
		{"issue-manager", "unknown"},
		{"tool-", "unknown"},
		{"tools", "unknown"},
		{"", "unknown"},
		{"anthropic-provider", "unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.dir, func(t *testing.T) {
			if got := discovery.ModuleType(tc.dir); got != tc.want {
				t.Errorf("ModuleType(%q) = %q, want %q", tc.dir, got, tc.want)
			}
		})
	}
}

func FuzzParseConstraint(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzParseConstraint/.
	f.Fuzz(func(t *testing.T, s, version string) {
		c, err := discovery.ParseConstraint(s)
		if err != nil {
			if !errors.Is(err, discovery.ErrInvalidConstraint) {
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
				} else if _, err := discovery.ParseConstraint(q); err != nil {
					t.Fatalf("suggestion %q of %q does not parse: %v", q, s, err)
				}
			}
			return
		}
		// The canonical form parses to the same canonical form.
		c2, err := discovery.ParseConstraint(c.String())
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
	})
}

func BenchmarkParseConstraint(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := discovery.ParseConstraint(">=1.0,<2.0"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConstraintCheck(b *testing.B) {
	c, err := discovery.ParseConstraint("^1.2.3")
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
