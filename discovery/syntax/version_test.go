package syntax_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/amplidex/amplidex/discovery/syntax"
)

func TestParseVersion(t *testing.T) {
	cases := []struct {
		in   string
		want syntax.Version
	}{
		{"0.0.0", syntax.Version{}},
		{"1.2.3", syntax.Version{Major: 1, Minor: 2, Patch: 3}},
		{"10.20.30", syntax.Version{Major: 10, Minor: 20, Patch: 30}},
		{"1.0.0-rc.1", syntax.Version{Major: 1, Pre: "rc.1"}},
		{"1.0.0-0.3.7", syntax.Version{Major: 1, Pre: "0.3.7"}},
		{"1.0.0-x-y.0a.-", syntax.Version{Major: 1, Pre: "x-y.0a.-"}},
		{"1.0.0+001.sha-5114f85", syntax.Version{Major: 1, Build: "001.sha-5114f85"}},
		{"1.0.0-beta+exp.sha.5114f85", syntax.Version{Major: 1, Pre: "beta", Build: "exp.sha.5114f85"}},
		{"18446744073709551615.0.0", syntax.Version{Major: 1<<64 - 1}},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := syntax.ParseVersion(tc.in)
			if err != nil || got != tc.want {
				t.Fatalf("ParseVersion(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
			if got.String() != tc.in {
				t.Errorf("String() = %q, want %q", got.String(), tc.in)
			}
		})
	}
}

func TestParseVersionErrors(t *testing.T) {
	cases := []struct {
		in, want string
	}{
		{"", `invalid version "": want MAJOR.MINOR.PATCH, such as 1.0.0`},
		{"1", `invalid version "1": want MAJOR.MINOR.PATCH, such as 1.0.0`},
		{"1.2", `invalid version "1.2": want MAJOR.MINOR.PATCH, such as 1.0.0`},
		{"1.2.3.4", `invalid version "1.2.3.4": more than three numbers; want MAJOR.MINOR.PATCH, such as 1.0.0`},
		{"v1.2.3", `invalid version "v1.2.3": want MAJOR.MINOR.PATCH, such as 1.0.0`},
		{"1.x.0", `invalid version "1.x.0": wildcards are not supported`},
		{"01.2.3", `invalid version "01.2.3": leading zero in "01"`},
		{"1.2.03", `invalid version "1.2.03": leading zero in "03"`},
		{"18446744073709551616.0.0", `invalid version "18446744073709551616.0.0": "18446744073709551616" is too large`},
		{"1.2.3-", `invalid version "1.2.3-": bad pre-release ""`},
		{"1.2.3-a..b", `invalid version "1.2.3-a..b": bad pre-release "a..b"`},
		{"1.2.3-a_b", `invalid version "1.2.3-a_b": bad pre-release "a_b"`},
		{"1.2.3-rc.01", `invalid version "1.2.3-rc.01": bad pre-release "rc.01": leading zero in "01"`},
		{"1.2.3+", `invalid version "1.2.3+": bad build metadata ""`},
		{"1.2.3+a+b", `invalid version "1.2.3+a+b": bad build metadata "a+b"`},
		{"1.2.3-é", `invalid version "1.2.3-é": bad pre-release "é"`},
		{" 1.2.3", `invalid version " 1.2.3": want MAJOR.MINOR.PATCH, such as 1.0.0`},
		{strings.Repeat("1", 257), `longer than 256 bytes`},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			v, err := syntax.ParseVersion(tc.in)
			if err == nil {
				t.Fatalf("ParseVersion(%q) = %v, want an error", tc.in, v)
			}
			if !errors.Is(err, syntax.ErrInvalidVersion) {
				t.Errorf("error %v does not match ErrInvalidVersion", err)
			}
			if !strings.HasSuffix(err.Error(), tc.want) {
				t.Errorf("error = %q, want %q", err, tc.want)
			}
		})
	}
}

func TestVersionCompare(t *testing.T) {
	// semver.org's examples of precedence, in order, with build parts
	// that play no part.
	order := []string{
		"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
		"1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "1.9.0", "1.10.0", "2.0.0", "2.1.0", "2.1.1",
	}
	for i, a := range order {
		for j, b := range order {
			va, _ := syntax.ParseVersion(a)
			vb, err := syntax.ParseVersion(b + "+build.7")
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := va.Compare(vb); got != want {
				t.Errorf("%s.Compare(%s) = %d, want %d", a, vb, got, want)
			}
		}
	}
	// Numbers compare by value, beyond 64 bits too.
	a, _ := syntax.ParseVersion("1.0.0-99999999999999999999")
	b, _ := syntax.ParseVersion("1.0.0-100000000000000000000")
	if a.Compare(b) != -1 {
		t.Errorf("%s.Compare(%s) = %d, want -1", a, b, a.Compare(b))
	}
}

// FuzzParseVersion checks ParseVersion and Compare against
// github.com/Masterminds/semver/v3: the same versions accepted, read the
// same, and ordered the same.
func FuzzParseVersion(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzParseVersion/.
	f.Fuzz(func(t *testing.T, a, b string) {
		va, err := syntax.ParseVersion(a)
		sa, serr := semver.StrictNewVersion(a)
		if (err == nil) != (serr == nil) {
			t.Fatalf("ParseVersion(%q): %v; semver: %v", a, err, serr)
		}
		if err != nil {
			if !errors.Is(err, syntax.ErrInvalidVersion) || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("ParseVersion(%q): error %q", a, err)
			}
			return
		}
		if va.Major != sa.Major() || va.Minor != sa.Minor() || va.Patch != sa.Patch() || va.Pre != sa.Prerelease() || va.Build != sa.Metadata() {
			t.Fatalf("ParseVersion(%q) = %+v; semver reads %s", a, va, sa)
		}
		if va.String() != a {
			t.Fatalf("ParseVersion(%q).String() = %q", a, va.String())
		}
		vb, err := syntax.ParseVersion(b)
		sb, serr := semver.StrictNewVersion(b)
		if err != nil || serr != nil {
			return
		}
		got := va.Compare(vb)
		if got != -vb.Compare(va) {
			t.Fatalf("Compare(%q, %q) = %d, but not the other way round", a, b, got)
		}
		// semver orders pre-release numbers over 64 bits as text.
		if hugePreNumber(va.Pre) || hugePreNumber(vb.Pre) {
			return
		}
		if want := sa.Compare(sb); got != want {
			t.Fatalf("Compare(%q, %q) = %d; semver says %d", a, b, got, want)
		}
	})
}
