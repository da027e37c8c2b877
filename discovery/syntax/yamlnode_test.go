package syntax_test

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"testing"

	"github.com/amplidex/amplidex/discovery/syntax"
)

// The regular expressions of the YAML 1.1 resolver (PyYAML's), which the
// hand-written matchers must agree with on every string.
var yaml11Ref = []struct {
	name  string
	re    *regexp.Regexp
	match func(string) bool
}{
	{"bool", regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`), syntax.IsYAML11Bool},
	{"int", regexp.MustCompile(`^[-+]?(?:0b[01_]+|0[0-7_]+|0|[1-9][0-9_]*|0x[0-9a-fA-F_]+|[1-9][0-9_]*(?::[0-5]?[0-9])+)$`), syntax.IsYAML11Int},
	{"float", regexp.MustCompile(`^(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`), syntax.IsYAML11Float},
	{"null", regexp.MustCompile(`^(?:~|null|Null|NULL|)$`), syntax.IsYAML11Null},
}

func checkYAML11Matchers(t *testing.T, s string) {
	t.Helper()
	for _, r := range yaml11Ref {
		if want, got := r.re.MatchString(s), r.match(s); got != want {
			t.Errorf("%s matcher on %q = %v, the expression says %v", r.name, s, got, want)
		}
	}
}

func TestYAML11MatchersTable(t *testing.T) {
	for _, s := range []string{
		"", "~", "null", "Null", "NULL", "nULL", "nul", "null ",
		"yes", "Yes", "YES", "yES", "y", "Y", "n", "no", "NO", "on", "On", "ON", "off", "OFF", "oFF", "true", "True", "tRUE", "false", "False",
		"0", "-0", "+0", "00", "07", "08", "0_7", "0_", "0b", "0b1", "0b102", "0b_", "-0b1", "0x", "0x1F", "0xg", "0X1", "0x_", "0o7",
		"1", "12", "1_000", "1__", "-1", "+1", "--1", "+-1", "1a", "a1", "_1", "1:0", "1:00", "1:59", "1:60", "1:5:3", "1:123", "1:", ":1",
		"0:30", "-1:30", "1_0:30", "190:20:30", "1:30.", "1:30.5", "1:30.5_", "1:60.5", "1::3",
		"1.", "1.0", "-1.0", "+1.0", "1.0e+3", "1.0e3", "1.0E-3", "1e3", "1e+3", "1.e+3", "1.0e+", "1_0.0_1", "1.2.3", "1.0e+3x",
		".5", ".5e+3", "-.5", "+.5", "._5", ".", "-.", "._",
		".inf", ".Inf", ".INF", "-.inf", "+.inf", ".iNF", "inf", ".nan", ".NaN", ".NAN", "-.nan", "+.NaN", "nan",
		"1.0.0", "v1", "0.1.0", "2001-12-14", "12:30:45", "1,000", "1 000", "١٢", "1\n",
	} {
		checkYAML11Matchers(t, s)
	}
}

// TestYAML11MatchersRandom compares the matchers with the expressions on
// random strings over the bytes that matter to them.
func TestYAML11MatchersRandom(t *testing.T) {
	const alphabet = "0123456789_+-.:eEbxXaAfFgiInNoOtTyYlLsS~ "
	rng := rand.New(rand.NewPCG(1, 2))
	n := 300_000
	if testing.Short() {
		n = 30_000
	}
	buf := make([]byte, 0, 16)
	for range n {
		buf = buf[:0]
		for range rng.IntN(12) {
			// Digits, signs, dots and colons often, to reach deep into the
			// number forms.
			if rng.IntN(3) > 0 {
				buf = append(buf, "0123456789.:_-+e"[rng.IntN(16)])
			} else {
				buf = append(buf, alphabet[rng.IntN(len(alphabet))])
			}
		}
		checkYAML11Matchers(t, string(buf))
		if t.Failed() {
			return
		}
	}
}

// FuzzYAML11Matchers compares the matchers with the expressions on any
// string.
func FuzzYAML11Matchers(f *testing.F) {
	for _, s := range []string{"", "0b1", "1:30", "1:30.5", ".inf", "-.5", "1.0e+3", "yes", "~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkYAML11Matchers(t, s)
	})
}

// yamlErrLineRef is the expression go-yaml's messages were read with
// before the hand-written matcher.
var yamlErrLineRef = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

func checkYAMLErrLine(t *testing.T, msg string) {
	t.Helper()
	line, rest, ok := syntax.CutYAMLErrLine(msg)
	m := yamlErrLineRef.FindStringSubmatch(msg)
	if ok != (m != nil) {
		t.Fatalf("CutYAMLErrLine(%q) ok = %v, the expression says %v", msg, ok, m != nil)
	}
	if m == nil {
		return
	}
	if n, _ := strconv.Atoi(m[1]); line != n || rest != m[2] {
		t.Fatalf("CutYAMLErrLine(%q) = %d, %q; the expression says %d, %q", msg, line, rest, n, m[2])
	}
}

func TestYAMLErrLineMatcher(t *testing.T) {
	for _, s := range []string{
		"", "yaml: line 3: mapping values are not allowed in this context", "line 12: did not find expected key",
		"yaml: line 3:", "yaml: line 3: ", "yaml: line : x", "yaml: line x: y", "yaml: line 3 : x", "yaml: line 3: a: b",
		"yaml: yaml: line 3: x", "yaml:line 3: x", "yaml: line 3: x\ny", "yaml: line 3: x\r", "line 99999999999999999999: big",
		"yaml: unmarshal errors:\n  line 3: cannot unmarshal", "yaml: line ١: x", "yaml: line 3: \xff",
	} {
		checkYAMLErrLine(t, s)
	}
}

// FuzzYAMLErrLine compares the matcher with the expression on any
// message.
func FuzzYAMLErrLine(f *testing.F) {
	for _, s := range []string{"yaml: line 3: x", "line 1: y", "yaml: line 2: a\nb", "yaml: line: 3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkYAMLErrLine(t, s)
	})
}
