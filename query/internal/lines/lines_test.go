package lines_test

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/query/internal/lines"
)

func TestReadLine(t *testing.T) {
	const max = 32
	long := strings.Repeat("x", max+1)
	huge := strings.Repeat("y", 5000)
	input := "one\r\n" + long + "\ntwo\n" + huge + "\n\nexact" + strings.Repeat("z", max-5) + "\nlast"
	// A tiny buffer makes the reader take the long-line path.
	lr := &lines.Reader{R: bufio.NewReaderSize(strings.NewReader(input), 16), Max: max}
	want := []struct {
		line string
		err  error
	}{
		{"one", nil},
		{"", lines.ErrTooLong},
		{"two", nil},
		{"", lines.ErrTooLong},
		{"", nil},
		{"exact" + strings.Repeat("z", max-5), nil},
		{"last", nil},
		{"", io.EOF},
	}
	for i, w := range want {
		line, _, err := lr.Next()
		if string(line) != w.line || !errors.Is(err, w.err) {
			t.Fatalf("line %d: got %q, %v; want %q, %v", i, line, err, w.line, w.err)
		}
	}
}
