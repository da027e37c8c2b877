package lines

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// MaxLine is the longest line, in bytes and without its newline, of a
// request or a notification (query.MaxLineSize).
const MaxLine = 16 << 20

// ErrTooLong is returned by Reader.Next for a line longer than the
// Reader's Max; package query returns it as its own ErrLineTooLong.
var ErrTooLong = fmt.Errorf("query: line longer than %d bytes", MaxLine)

// ErrOverBudget is returned by Reader.Next for a line whose bytes the
// Budget cannot hold.
var ErrOverBudget = errors.New("query: request budget exhausted")

// HeadSize is how much of a refused line a Reader keeps (Reader.Head).
const HeadSize = 1 << 10

// Reader reads the lines of one connection. A line that fits in the
// buffered reader is returned as a slice of its buffer; a longer one is
// gathered into a slice of its own, whose capacity is reserved from
// Budget, when there is one, as it grows.
type Reader struct {
	R      *bufio.Reader
	Max    int
	Budget *Budget

	// head is the start of the last line that was too long or over budget,
	// so that the answer can name its id.
	head []byte
	// owned tells that the last line is a slice of its own, not of the
	// reader's buffer: it stays valid after the next read.
	owned bool
}

// Head returns the start of the last line Next refused, at most HeadSize
// bytes of it.
func (lr *Reader) Head() []byte { return lr.head }

// Owned reports whether the last line Next returned is a slice of its
// own, which stays valid after the next call.
func (lr *Reader) Owned() bool { return lr.owned }

// Next returns the next line without its "\n" or "\r\n", and the bytes it
// reserved from the budget, which the caller releases once done with the
// line (and whatever was decoded from it). The line is valid until the next
// call. A last line without a newline is returned as a line; then io.EOF.
//
// A line longer than Max is consumed whole and reported as ErrTooLong;
// one that would take the budget over its limit likewise, as ErrOverBudget.
// Neither is held: its bytes are dropped as they are read, so that the next
// call starts on the next line.
func (lr *Reader) Next() (line []byte, held int64, err error) {
	lr.head = lr.head[:0]
	lr.owned = false
	chunk, err := lr.R.ReadSlice('\n')
	if err == nil || (err == io.EOF && len(chunk) > 0) {
		line, err := trimEOL(chunk, lr.Max)
		if err != nil {
			lr.keepHead(chunk)
		}
		return line, 0, err
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, 0, err
	}
	lr.keepHead(chunk)
	var long []byte
	var refused error
	for {
		if refused == nil {
			long, held, refused = lr.gather(long, held, chunk)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			chunk, err = lr.R.ReadSlice('\n')
			continue
		}
		if err != nil && err != io.EOF {
			lr.Budget.Release(held)
			return nil, 0, err
		}
		// The line ended, with its newline or with the input.
		if refused != nil {
			return nil, 0, refused
		}
		line, err = trimEOL(long, lr.Max)
		if err != nil {
			lr.Budget.Release(held)
			return nil, 0, err
		}
		lr.owned = true
		return line, held, nil
	}
}

// gather appends chunk to long, growing it within Max and the budget. When
// it cannot, it drops long, releases what it held, and says why.
func (lr *Reader) gather(long []byte, held int64, chunk []byte) ([]byte, int64, error) {
	need := len(long) + len(chunk)
	limit := lr.Max + len("\r\n")
	if need > limit {
		lr.Budget.Release(held)
		return nil, 0, ErrTooLong
	}
	if need > cap(long) {
		// Grow by half, not double, so that a line reserves little more
		// than its length.
		size := min(max(cap(long)+cap(long)/2, need), limit)
		if !lr.Budget.Reserve(int64(size - cap(long))) {
			lr.Budget.Release(held)
			return nil, 0, ErrOverBudget
		}
		held += int64(size - cap(long))
		grown := make([]byte, len(long), size)
		copy(grown, long)
		long = grown
	}
	return append(long, chunk...), held, nil
}

func (lr *Reader) keepHead(chunk []byte) {
	lr.head = append(lr.head[:0], chunk[:min(len(chunk), HeadSize)]...)
}

func trimEOL(line []byte, max int) ([]byte, error) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) > max {
		return nil, ErrTooLong
	}
	return line, nil
}

// HeadID returns the id of a line from its start, when the line begins
// with it, as every line of the protocol does.
func HeadID(head []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(head))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	if tok, err := dec.Token(); err != nil || tok != "id" {
		return nil
	}
	var id json.RawMessage
	if dec.Decode(&id) != nil || !ValidID(id) {
		return nil
	}
	return id
}

// ValidID reports whether id is a JSON number or string.
func ValidID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	c := id[0]
	return c == '"' || c == '-' || ('0' <= c && c <= '9')
}

// Budget bounds the bytes a server holds at once, over all its
// connections: of request lines, or of answers not yet written. A nil
// *Budget allows everything.
type Budget struct {
	Limit int64

	mu   sync.Mutex // guards fields below
	used int64
	peak int64
}

// Reserve takes n bytes from the budget, or reports that they would take
// it over its limit.
func (b *Budget) Reserve(n int64) bool {
	if b == nil || n <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.Limit {
		return false
	}
	b.used += n
	b.peak = max(b.peak, b.used)
	return true
}

// ReserveAlone takes n bytes from the budget like Reserve, and also when
// they are more than its limit but nothing else is held: the one answer
// larger than the whole budget still goes, alone.
func (b *Budget) ReserveAlone(n int64) bool {
	if b == nil || n <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.Limit && b.used > 0 {
		return false
	}
	b.used += n
	b.peak = max(b.peak, b.used)
	return true
}

// Release gives back n bytes taken by Reserve or ReserveAlone.
func (b *Budget) Release(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
}

// Usage returns the bytes held now and the most ever held at once.
func (b *Budget) Usage() (used, peak int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.peak
}
