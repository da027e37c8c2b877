package query

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrInvalidClock is returned when a string is not a clock of the form
// c:<start>:<pid>:<tick>.
var ErrInvalidClock = errors.New("query: invalid clock")

// Clock names a moment in the life of one daemon. Its text form is
// c:<start>:<pid>:<tick>, written in decimal without leading zeros. Start and
// PID identify the daemon instance; Tick grows with every change the daemon
// indexes, so two clocks of the same instance are ordered by their ticks.
//
// In JSON a Clock is its text form; the zero Clock is left out of responses.
type Clock struct {
	// Start is the daemon's start time in Unix nanoseconds.
	Start int64
	// PID is the daemon's process id.
	PID int
	// Tick counts the daemon's index changes; it never decreases within one
	// instance.
	Tick uint64
}

// ParseClock parses the text form of a clock. It accepts exactly what String
// produces: "c:", then three decimal numbers separated by ':', each without
// sign or leading zeros.
func ParseClock(s string) (Clock, error) {
	rest, ok := strings.CutPrefix(s, "c:")
	if !ok {
		return Clock{}, clockError(s, `missing "c:" prefix`)
	}
	start, rest, _ := strings.Cut(rest, ":")
	pid, tick, ok := strings.Cut(rest, ":")
	if !ok {
		return Clock{}, clockError(s, "want three fields c:<start>:<pid>:<tick>")
	}
	var c Clock
	var err error
	if c.Start, err = clockField(start, 64); err != nil {
		return Clock{}, clockError(s, "start: "+err.Error())
	}
	p, err := clockField(pid, 32)
	if err != nil {
		return Clock{}, clockError(s, "pid: "+err.Error())
	}
	c.PID = int(p)
	if c.Tick, err = clockTick(tick); err != nil {
		return Clock{}, clockError(s, "tick: "+err.Error())
	}
	return c, nil
}

// clockField parses a signless decimal without leading zeros that fits in a
// signed integer of bitSize bits.
func clockField(s string, bitSize int) (int64, error) {
	if err := checkDigits(s); err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, bitSize)
	if err != nil {
		return 0, errors.New("out of range")
	}
	return n, nil
}

func clockTick(s string) (uint64, error) {
	if err := checkDigits(s); err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, errors.New("out of range")
	}
	return n, nil
}

func checkDigits(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return fmt.Errorf("unexpected %q", s[i])
		}
	}
	if len(s) > 1 && s[0] == '0' {
		return errors.New("leading zero")
	}
	return nil
}

func clockError(s, why string) error {
	const max = 64
	if len(s) > max {
		s = s[:max] + "…"
	}
	return fmt.Errorf("parse clock %q: %s: %w", s, why, ErrInvalidClock)
}

// String returns the text form c:<start>:<pid>:<tick>.
func (c Clock) String() string {
	b, _ := c.AppendText(make([]byte, 0, 48))
	return string(b)
}

// AppendText appends the text form of c to b, as MarshalText returns it.
func (c Clock) AppendText(b []byte) ([]byte, error) {
	b = append(b, "c:"...)
	b = strconv.AppendInt(b, c.Start, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(c.PID), 10)
	b = append(b, ':')
	return strconv.AppendUint(b, c.Tick, 10), nil
}

// IsZero reports whether c is the zero Clock, which stands for "no clock".
func (c Clock) IsZero() bool {
	return c == Clock{}
}

// SameInstance reports whether c and o come from the same daemon life, so
// that their ticks can be compared.
func (c Clock) SameInstance(o Clock) bool {
	return c.Start == o.Start && c.PID == o.PID
}

// Compare returns -1, 0 or +1 as c is before, equal to or after o. Within one
// instance it orders by tick; across instances it orders by start time, then
// pid, which is a total order but says nothing about which changes either
// clock has seen.
func (c Clock) Compare(o Clock) int {
	return cmp.Or(
		cmp.Compare(c.Start, o.Start),
		cmp.Compare(c.PID, o.PID),
		cmp.Compare(c.Tick, o.Tick),
	)
}

// MarshalText returns the text form of c.
func (c Clock) MarshalText() ([]byte, error) {
	return c.AppendText(nil)
}

// UnmarshalText parses the text form of a clock into c.
func (c *Clock) UnmarshalText(text []byte) error {
	parsed, err := ParseClock(string(text))
	if err != nil {
		return err
	}
	*c = parsed
	return nil
}
