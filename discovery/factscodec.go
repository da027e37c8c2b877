package discovery

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/suppress"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// The binary form of Facts: what the daemon keeps in its index for every
// file, so that a restart decodes it instead of reading the file again.
// It puts first what answers need at once (Brief), so that a decoder can
// stop there, and after it the rest: mentions, front matter and
// diagnostics, which are decoded only when a check or a query asks.
//
//	version byte (factsVersion)
//	kind string
//	name, description strings; extends (flag, ref); agents mode string;
//	agents (count, refs); metadata (flag, fields); diagnostic counts
//	(errors, warnings, infos); mention count; front matter blocks;
//	suppression comments (count; each a range, a file flag, a problem
//	string and its codes with their ranges)
//	length of the rest, then: mentions; front matter (flag, value);
//	diagnostics
//
// Strings and lists are prefixed by their length as uvarints; a range is
// four uvarints. Front matter values are a tag byte and the value; a
// mapping's keys are in its order.

// factsVersion is the version of the binary form and of what it holds:
// Facts of another version are analyzed again. Version 1 kept mappings in
// sorted key order and floats as float64; version 2 kept every diagnostic
// of a file, before diag.MaxPerArea; version 3 had no suppression
// comments; version 4 had none from a Markdown body.
const factsVersion = 5

// ErrBadFacts is returned by DecodeFacts when the bytes are not Facts
// this version of the package encoded.
var ErrBadFacts = errors.New("discovery: undecodable facts")

// AppendBinary appends the binary form of f to dst.
func (f *Facts) AppendBinary(dst []byte) []byte {
	e := encoder{b: dst}
	e.b = append(e.b, factsVersion)
	e.str(string(f.Kind))
	e.str(f.Name)
	e.str(f.Description)
	if f.Extends != nil {
		e.b = append(e.b, 1)
		e.ref(*f.Extends)
	} else {
		e.b = append(e.b, 0)
	}
	e.str(f.AgentsMode)
	e.uint(uint64(len(f.Agents)))
	for _, a := range f.Agents {
		e.ref(a)
	}
	e.metadata(f.Metadata)
	c := f.Counts()
	e.uint(uint64(c.Errors))
	e.uint(uint64(c.Warnings))
	e.uint(uint64(c.Infos))
	mentions := len(f.Mentions)
	blocks, front := profileBlocks(f.Front), f.Front != nil
	if f.brief {
		mentions, blocks, front = 0, f.blocks, f.front
		if f.mentions {
			mentions = 1
		}
	}
	e.uint(uint64(mentions))
	switch {
	case !front:
		e.b = append(e.b, 0)
	case blocks == "":
		e.b = append(e.b, 1)
	default:
		e.b = append(e.b, 2)
		e.str(blocks)
	}
	e.uint(uint64(len(f.Suppressions)))
	for _, sup := range f.Suppressions {
		e.rng(sup.Range)
		if sup.File {
			e.b = append(e.b, 1)
		} else {
			e.b = append(e.b, 0)
		}
		e.str(sup.Problem)
		e.uint(uint64(len(sup.Codes)))
		for _, c := range sup.Codes {
			e.str(c.Code)
			e.rng(c.Range)
		}
	}

	var rest encoder
	rest.uint(uint64(len(f.Mentions)))
	for _, m := range f.Mentions {
		rest.str(m.Collection)
		rest.str(m.Path)
		rest.rng(m.Range)
	}
	if f.Front != nil {
		rest.b = append(rest.b, 1)
		rest.value(f.Front)
	} else {
		rest.b = append(rest.b, 0)
	}
	rest.uint(uint64(len(f.Diagnostics)))
	for _, d := range f.Diagnostics {
		rest.str(d.Code)
		rest.str(string(d.Severity))
		rest.str(d.Path)
		rest.rng(d.Range)
		rest.str(d.Message)
		rest.str(d.Collection)
	}
	e.uint(uint64(len(rest.b)))
	e.b = append(e.b, rest.b...)
	return e.b
}

// DecodeFacts decodes the binary form of Facts. With brief set it decodes
// only what Brief keeps, and returns brief Facts. The error wraps
// ErrBadFacts.
func DecodeFacts(b []byte, brief bool) (f *Facts, err error) {
	mode := decodeFull
	if brief {
		mode = decodeBrief
	}
	return decodeFacts(b, mode)
}

// DecodeMentions decodes, of the binary form of Facts, what Brief keeps
// and the mentions, which it returns, and not the front matter and
// diagnostics that follow them. The error wraps ErrBadFacts.
func DecodeMentions(b []byte) ([]syntax.Mention, error) {
	f, err := decodeFacts(b, decodeMentions)
	if err != nil {
		return nil, err
	}
	return f.Mentions, nil
}

// How much of the binary form decodeFacts decodes.
type decodeMode int

const (
	decodeBrief decodeMode = iota
	decodeMentions
	decodeFull
)

func decodeFacts(b []byte, mode decodeMode) (f *Facts, err error) {
	d := decoder{b: b}
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(decodeError); ok {
				f, err = nil, fmt.Errorf("%w: %s at byte %d", ErrBadFacts, string(e), d.i)
				return
			}
			panic(r)
		}
	}()
	if d.byte() != factsVersion {
		return nil, fmt.Errorf("%w: version %d", ErrBadFacts, b[0])
	}
	f = &Facts{Kind: Kind(d.str())}
	f.Name = d.str()
	f.Description = d.str()
	if d.byte() == 1 {
		r := d.ref()
		f.Extends = &r
	}
	f.AgentsMode = d.str()
	if n := d.count(); n > 0 {
		f.Agents = make([]syntax.Ref, n)
		for i := range f.Agents {
			f.Agents[i] = d.ref()
		}
	}
	f.Metadata = d.metadata()
	f.counts = countsOf(DiagnosticCounts{Errors: d.int(), Warnings: d.int(), Infos: d.int()})
	mentions := d.int()
	switch d.byte() {
	case 0:
	case 1:
		f.front = true
	case 2:
		f.front = true
		f.blocks = d.str()
	default:
		d.fail("bad front matter flag")
	}
	if n := d.count(); n > 0 {
		f.Suppressions = make([]suppress.Comment, n)
		for i := range f.Suppressions {
			sup := suppress.Comment{Range: d.rng()}
			switch d.byte() {
			case 0:
			case 1:
				sup.File = true
			default:
				d.fail("bad suppression flag")
			}
			sup.Problem = d.str()
			if m := d.count(); m > 0 {
				sup.Codes = make([]suppress.Code, m)
				for j := range sup.Codes {
					sup.Codes[j] = suppress.Code{Code: d.str(), Range: d.rng()}
				}
			}
			f.Suppressions[i] = sup
		}
	}
	restLen := d.count()
	if mode != decodeBrief {
		f.blocks, f.front = "", false
	}
	if mode == decodeBrief {
		f.brief = true
		f.mentions = mentions > 0
		return f, nil
	}
	end := d.i + restLen
	if n := d.count(); n > 0 {
		f.Mentions = make([]syntax.Mention, n)
		for i := range f.Mentions {
			f.Mentions[i] = syntax.Mention{Collection: d.str(), Path: d.str(), Range: d.rng()}
		}
	}
	if mode == decodeMentions {
		if d.i > end || end > len(d.b) {
			d.fail("mentions overrun their section")
		}
		return f, nil
	}
	if d.byte() == 1 {
		v := d.value(0)
		m, ok := v.(*syntax.Map)
		if !ok {
			d.fail("front matter is not a mapping")
		}
		f.Front = m
	}
	if n := d.count(); n > 0 {
		f.Diagnostics = make([]diag.Diagnostic, n)
		for i := range f.Diagnostics {
			f.Diagnostics[i] = diag.Diagnostic{Code: d.str(), Severity: diag.Severity(d.str()), Path: d.str(),
				Range: d.rng(), Message: d.str(), Collection: d.str()}
		}
	}
	if d.i != end || d.i != len(d.b) {
		d.fail("trailing bytes")
	}
	return f, nil
}

type encoder struct{ b []byte }

func (e *encoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

func (e *encoder) str(s string) {
	e.uint(uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *encoder) rng(r diag.Range) {
	e.uint(uint64(r.Start.Line))
	e.uint(uint64(r.Start.Character))
	e.uint(uint64(r.End.Line))
	e.uint(uint64(r.End.Character))
}

func (e *encoder) ref(r syntax.Ref) {
	e.str(r.Value)
	e.rng(r.Range)
}

func (e *encoder) metadata(m *Metadata) {
	if m == nil {
		e.b = append(e.b, 0)
		return
	}
	e.b = append(e.b, 1)
	e.str(m.Name)
	e.str(m.Version)
	e.str(m.Description)
	keys := make([]string, 0, len(m.URLs))
	for k := range m.URLs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	e.uint(uint64(len(keys)))
	for _, k := range keys {
		e.str(k)
		e.str(m.URLs[k])
	}
	e.str(m.Author)
	e.uint(uint64(len(m.Capabilities)))
	for _, c := range m.Capabilities {
		e.str(c)
	}
	e.uint(uint64(len(m.Requires)))
	for _, r := range m.Requires {
		e.str(r.Name)
		e.str(r.Constraint)
		e.rng(r.Range)
	}
}

// Value tags of the front matter's encoding.
const (
	tagNil byte = iota
	tagFalse
	tagTrue
	tagInt
	tagFloat64
	tagString
	tagList
	tagMap
	tagJSON
	tagFloat  // a Float
	tagBigInt // a *big.Int, as its decimal text
)

func (e *encoder) value(v any) {
	switch v := v.(type) {
	case nil:
		e.b = append(e.b, tagNil)
	case bool:
		if v {
			e.b = append(e.b, tagTrue)
		} else {
			e.b = append(e.b, tagFalse)
		}
	case int:
		e.b = append(e.b, tagInt)
		e.b = binary.AppendVarint(e.b, int64(v))
	case int64:
		e.b = append(e.b, tagInt)
		e.b = binary.AppendVarint(e.b, v)
	case float64:
		e.b = append(e.b, tagFloat64)
		e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v))
	case syntax.Float:
		e.b = append(e.b, tagFloat)
		e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(float64(v)))
	case *big.Int:
		e.b = append(e.b, tagBigInt)
		e.str(v.String())
	case string:
		e.b = append(e.b, tagString)
		e.str(v)
	case []any:
		e.b = append(e.b, tagList)
		e.uint(uint64(len(v)))
		for _, x := range v {
			e.value(x)
		}
	case *syntax.Map:
		e.b = append(e.b, tagMap)
		e.uint(uint64(v.Len()))
		for k, x := range v.All() {
			e.str(k)
			e.value(x)
		}
	default:
		// Values of tags YAML resolves (timestamps, say) travel as JSON.
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte("null")
		}
		e.b = append(e.b, tagJSON)
		e.str(string(b))
	}
}

// decodeError is what decoder panics with; DecodeFacts recovers it.
type decodeError string

type decoder struct {
	b []byte
	i int
}

func (d *decoder) fail(msg string) { panic(decodeError(msg)) }

func (d *decoder) byte() byte {
	if d.i >= len(d.b) {
		d.fail("truncated")
	}
	c := d.b[d.i]
	d.i++
	return c
}

func (d *decoder) uint() uint64 {
	v, n := binary.Uvarint(d.b[d.i:])
	if n <= 0 {
		d.fail("bad uvarint")
	}
	d.i += n
	return v
}

// int decodes a uvarint that must fit an int.
func (d *decoder) int() int {
	v := d.uint()
	if v > math.MaxInt32 {
		d.fail("number too large")
	}
	return int(v)
}

// count decodes a length, which cannot exceed what is left to read.
func (d *decoder) count() int {
	v := d.uint()
	if v > uint64(len(d.b)-d.i) {
		d.fail("length beyond the end")
	}
	return int(v)
}

func (d *decoder) str() string {
	n := d.count()
	s := string(d.b[d.i : d.i+n])
	d.i += n
	return s
}

func (d *decoder) rng() diag.Range {
	return diag.Range{Start: diag.Position{Line: d.int(), Character: d.int()}, End: diag.Position{Line: d.int(), Character: d.int()}}
}

func (d *decoder) ref() syntax.Ref { return syntax.Ref{Value: d.str(), Range: d.rng()} }

func (d *decoder) metadata() *Metadata {
	if d.byte() == 0 {
		return nil
	}
	m := &Metadata{Name: d.str(), Version: d.str(), Description: d.str()}
	if n := d.count(); n > 0 {
		m.URLs = make(map[string]string, n)
		for range n {
			k := d.str()
			m.URLs[k] = d.str()
		}
	}
	m.Author = d.str()
	if n := d.count(); n > 0 {
		m.Capabilities = make([]string, n)
		for i := range m.Capabilities {
			m.Capabilities[i] = d.str()
		}
	}
	if n := d.count(); n > 0 {
		m.Requires = make([]Requirement, n)
		for i := range m.Requires {
			m.Requires[i] = Requirement{Name: d.str(), Constraint: d.str(), Range: d.rng()}
		}
	}
	return m
}

func (d *decoder) value(depth int) any {
	if depth > syntax.MaxValueDepth {
		d.fail("value nested too deep")
	}
	switch tag := d.byte(); tag {
	case tagNil:
		return nil
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagInt:
		v, n := binary.Varint(d.b[d.i:])
		if n <= 0 {
			d.fail("bad varint")
		}
		d.i += n
		if int64(int(v)) == v {
			return int(v)
		}
		return v
	case tagFloat64, tagFloat:
		if len(d.b)-d.i < 8 {
			d.fail("truncated")
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(d.b[d.i:]))
		d.i += 8
		if tag == tagFloat {
			return syntax.Float(v)
		}
		return v
	case tagBigInt:
		x, ok := new(big.Int).SetString(d.str(), 10)
		if !ok {
			d.fail("bad integer")
		}
		return x
	case tagString:
		return d.str()
	case tagList:
		n := d.count()
		out := make([]any, n)
		for i := range out {
			out[i] = d.value(depth + 1)
		}
		return out
	case tagMap:
		n := d.count()
		out := syntax.NewMap(n)
		for range n {
			k := d.str()
			out.Set(k, d.value(depth+1))
		}
		return out
	case tagJSON:
		var v any
		if err := json.Unmarshal([]byte(d.str()), &v); err != nil {
			d.fail("bad JSON value")
		}
		return v
	}
	d.fail("unknown value tag")
	return nil
}

// decodeValue decodes one value of the front matter's encoding.
func decodeValue(b []byte) (v any, err error) {
	d := decoder{b: b}
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(decodeError); ok {
				v, err = nil, fmt.Errorf("%w: %s at byte %d", ErrBadFacts, string(e), d.i)
				return
			}
			panic(r)
		}
	}()
	v = d.value(0)
	if d.i != len(d.b) {
		d.fail("trailing bytes")
	}
	return v, nil
}
