package syntax_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/amplidex/amplidex/discovery/syntax"
)

func TestFindMentions(t *testing.T) {
	src := "---\nname: x\n---\n" +
		"See @foundation:context/a.md and (@dev:context/b.md).\n" +
		"Mail me@example.com, or `@code:span.md`, or \"@quoted:x.md\".\n" +
		"```\n@fenced:x.md\n```\n" +
		"~~~~md\n@tilde:x.md\n```\nstill fenced @t2:y.md\n~~~~\n" +
		"漢字 @cjk:context/c.md, 🎉 @emoji:d.md.\n" +
		"@bad:../../etc/passwd @nocolon @Upper:x.md\n"
	lines := syntax.NewLineIndex([]byte(src))
	got := syntax.FindMentions([]byte(src), len("---\nname: x\n---\n"), lines)
	var s []string
	for _, m := range got {
		s = append(s, fmt.Sprintf("%d:%d-%d %s", m.Range.Start.Line, m.Range.Start.Character, m.Range.End.Character, m.Text()))
	}
	want := []string{
		"3:4-28 foundation:context/a.md",
		"3:34-51 dev:context/b.md",
		"13:3-20 cjk:context/c.md",     // CJK counts one UTF-16 unit a character
		"13:25-36 emoji:d.md",          // the emoji counts two
		"14:0-21 bad:../../etc/passwd", // found here, rejected when resolved
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("mentions:\n%q\nwant:\n%q", s, want)
	}
}
