package query

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
)

// The command line asks one question and exits. The first time
// encoding/json meets a struct type it builds field tables and encoders
// for every type that struct reaches: for resolve's params and answer
// about 0.3 ms, a twentieth of a whole `amplidex query resolve` process.
// The questions scripts ask most (resolve and collections) are therefore
// encoded and decoded here without reflection: the params written by hand
// (as encodeRequest writes the request line), the answer decoded into
// interface values, which needs no type tables, and copied from them.
//
// Both produce exactly what encoding/json does: the tests compare them
// with it on random values of every field, so that a field added to one
// of these types and not here fails them.

// paramsAppender is a params type that writes its own JSON: what
// json.Marshal writes of it, byte for byte.
type paramsAppender interface {
	appendJSON(b []byte) []byte
}

// appendFields appends c's fields, each followed by a comma, omitting the
// empty ones as their omitempty tags do.
func (c Common) appendFields(b []byte) []byte {
	if c.Project != "" {
		b = append(appendJSONString(append(b, `"project":`...), c.Project), ',')
	}
	if c.NoSync {
		b = append(b, `"no_sync":true,`...)
	}
	if r := c.Roots; r != nil {
		b = append(b, `"roots":{`...)
		n := len(b)
		if r.Home != "" {
			b = append(appendJSONString(append(b, `"home":`...), r.Home), ',')
		}
		if len(r.Bundled) > 0 {
			b = append(b, `"bundled":[`...)
			for i, s := range r.Bundled {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, s)
			}
			b = append(b, "],"...)
		}
		if r.Collection != "" {
			b = append(appendJSONString(append(b, `"collection":`...), r.Collection), ',')
		}
		if len(b) > n {
			b = b[:len(b)-1] // the last comma
		}
		b = append(b, "},"...)
	}
	if s := c.Bundles; s != nil {
		b = appendJSONString(append(b, `"bundles":{"work_dir":`...), s.WorkDir)
		for _, f := range [...]struct{ k, v string }{{`,"amplifier_home":`, s.AmplifierHome}, {`,"home":`, s.Home}, {`,"project_dir":`, s.ProjectDir}} {
			if f.v != "" {
				b = appendJSONString(append(b, f.k...), f.v)
			}
		}
		b = append(b, "},"...)
	}
	return b
}

// appendObject closes the object that b opened with the Common fields in
// it: the last comma goes, the brace comes.
func appendObject(b []byte) []byte {
	if b[len(b)-1] == ',' {
		b = b[:len(b)-1]
	}
	return append(b, '}')
}

func (p ListParams) appendJSON(b []byte) []byte {
	return appendObject(p.Common.appendFields(append(b, '{')))
}

func (p NameParams) appendJSON(b []byte) []byte {
	b = p.Common.appendFields(append(b, '{'))
	return append(appendJSONString(append(b, `"name":`...), p.Name), '}')
}

func (p RefParams) appendJSON(b []byte) []byte {
	b = p.Common.appendFields(append(b, '{'))
	return append(appendJSONString(append(b, `"ref":`...), p.Ref), '}')
}

// valueTarget returns how to fill result, a pointer to a method's result,
// from the interface value encoding/json decoded the result into; nil
// when result is of a type decoded with reflection.
func valueTarget(result any) func(v any, at string) error {
	switch r := result.(type) {
	case **ResolveResult:
		return func(v any, at string) error {
			if v == nil {
				*r = nil
				return nil
			}
			if *r == nil {
				*r = new(ResolveResult)
			}
			return (*r).fromValue(v, at)
		}
	case *[]CollectionInfo:
		return func(v any, at string) error { return collectionInfos(v, at, r) }
	}
	return nil
}

// decodeValueResponse is decodeResponse for a result that fill copies
// from an interface value.
func decodeValueResponse(line []byte, method string, fill func(v any, at string) error) (Clock, error) {
	var clock Clock
	answer, err := decodeEnvelope(line, &clock, fill)
	if answer != nil {
		return clock, answer
	}
	if err != nil {
		return clock, fmt.Errorf("call %s: decode result: %w", method, err)
	}
	return clock, nil
}

// decodeEnvelope reads a response line's clock and either its error
// answer or its result.
func decodeEnvelope(line []byte, clock *Clock, fill func(v any, at string) error) (answer *Error, err error) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber() // integers exactly, as a typed decode reads them
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(line[d.InputOffset():])) > 0 {
		return nil, errors.New("invalid character after top-level value")
	}
	o, ok := v.(map[string]any)
	if !ok {
		return nil, wrongType("response", "an object", v)
	}
	if c, ok := o["clock"]; ok && c != nil {
		s, ok := c.(string)
		if !ok {
			return nil, wrongType("clock", "a string", c)
		}
		if err := clock.UnmarshalText([]byte(s)); err != nil {
			return nil, err
		}
	}
	if e, ok := o["error"]; ok && e != nil {
		answer = new(Error)
		err := readObject(e, "error", func(r *reader, o map[string]any) {
			r.str(o, "code", (*string)(&answer.Code))
			r.str(o, "message", &answer.Message)
		})
		if err != nil {
			return nil, err
		}
		return answer, nil
	}
	if res, ok := o["result"]; ok {
		return nil, fill(res, "result")
	}
	return nil, nil
}

// reader copies fields out of one decoded object, keeping the first
// error and where it was.
type reader struct {
	at  string // the path of the object read, for errors
	err error
}

// readObject calls fields with a reader of v, which must be an object at
// the path at, and returns the first error the reader met.
func readObject(v any, at string, fields func(r *reader, o map[string]any)) error {
	o, ok := v.(map[string]any)
	if !ok {
		return wrongType(at, "an object", v)
	}
	r := reader{at: at}
	fields(&r, o)
	return r.err
}

// field returns o[key] when it is there and not null.
func (r *reader) field(o map[string]any, key string) (any, bool) {
	if r.err != nil {
		return nil, false
	}
	v, ok := o[key]
	return v, ok && v != nil
}

func (r *reader) str(o map[string]any, key string, dst *string) {
	if v, ok := r.field(o, key); ok {
		if s, ok := v.(string); ok {
			*dst = s
		} else {
			r.err = wrongType(r.at+"."+key, "a string", v)
		}
	}
}

func (r *reader) boolean(o map[string]any, key string, dst *bool) {
	if v, ok := r.field(o, key); ok {
		if b, ok := v.(bool); ok {
			*dst = b
		} else {
			r.err = wrongType(r.at+"."+key, "a boolean", v)
		}
	}
}

func (r *reader) integer(o map[string]any, key string, dst *int) {
	if v, ok := r.field(o, key); ok {
		n, isNumber := v.(json.Number)
		i, err := strconv.ParseInt(string(n), 10, strconv.IntSize)
		switch {
		case !isNumber:
			r.err = wrongType(r.at+"."+key, "an integer", v)
		case err != nil:
			r.err = fmt.Errorf("%s.%s: %s is not an int", r.at, key, n)
		default:
			*dst = int(i)
		}
	}
}

// nested reads o[key], when it is there and not null, with decode.
func (r *reader) nested(o map[string]any, key string, decode func(v any, at string) error) {
	if v, ok := r.field(o, key); ok {
		r.err = decode(v, r.at+"."+key)
	}
}

// wrongType is the error for a value of the wrong JSON type.
func wrongType(at, want string, v any) error {
	var got string
	switch v.(type) {
	case map[string]any:
		got = "an object"
	case []any:
		got = "an array"
	case string:
		got = "a string"
	case json.Number:
		got = "a number"
	case bool:
		got = "a boolean"
	default:
		got = "null"
	}
	return fmt.Errorf("%s: want %s, got %s", at, want, got)
}

// sliceOf fills *dst from v, an array, with one element read by decode
// each; null leaves *dst nil and [] makes it empty, as encoding/json does.
func sliceOf[T any](v any, at string, dst *[]T, decode func(v any, at string, e *T) error) error {
	if v == nil {
		*dst = nil
		return nil
	}
	a, ok := v.([]any)
	if !ok {
		return wrongType(at, "an array", v)
	}
	s := make([]T, len(a))
	for i, e := range a {
		if err := decode(e, at+"["+strconv.Itoa(i)+"]", &s[i]); err != nil {
			return err
		}
	}
	*dst = s
	return nil
}

func (res *ResolveResult) fromValue(v any, at string) error {
	return readObject(v, at, func(r *reader, o map[string]any) {
		r.str(o, "name", &res.Name)
		r.boolean(o, "found", &res.Found)
		if w, ok := o["winner"]; ok && r.err == nil {
			if w == nil {
				res.Winner = nil
			} else {
				if res.Winner == nil {
					res.Winner = new(CollectionInfo)
				}
				r.err = res.Winner.fromValue(w, at+".winner")
			}
		}
		r.nested(o, "shadowed", func(v any, at string) error { return collectionInfos(v, at, &res.Shadowed) })
		r.nested(o, "skipped", func(v any, at string) error { return collectionInfos(v, at, &res.Skipped) })
		r.boolean(o, "unverified", &res.Unverified)
		r.str(o, "did_you_mean", &res.DidYouMean)
	})
}

// collectionInfos fills *dst from an array of collections.
func collectionInfos(v any, at string, dst *[]CollectionInfo) error {
	return sliceOf(v, at, dst, func(v any, at string, c *CollectionInfo) error { return c.fromValue(v, at) })
}

func (c *CollectionInfo) fromValue(v any, at string) error {
	return readObject(v, at, func(r *reader, o map[string]any) {
		r.str(o, "name", &c.Name)
		r.str(o, "version", &c.Version)
		r.str(o, "description", &c.Description)
		r.str(o, "root", (*string)(&c.Root))
		r.str(o, "root_path", &c.RootPath)
		r.str(o, "dir", &c.Dir)
		r.str(o, "real_dir", &c.RealDir)
		r.str(o, "base", &c.Base)
		r.str(o, "layout", (*string)(&c.Layout))
		r.boolean(o, "valid", &c.Valid)
		r.str(o, "problem", &c.Problem)
		r.str(o, "status", &c.Status)
		r.nested(o, "counts", c.Counts.fromValue)
		r.nested(o, "requires", func(v any, at string) error {
			return sliceOf(v, at, &c.Requires, requirementFromValue)
		})
	})
}

func (n *Counts) fromValue(v any, at string) error {
	return readObject(v, at, func(r *reader, o map[string]any) {
		r.integer(o, "profiles", &n.Profiles)
		r.integer(o, "agents", &n.Agents)
		r.integer(o, "context", &n.Context)
		r.integer(o, "scenario_tools", &n.ScenarioTools)
		r.integer(o, "modules", &n.Modules)
	})
}

func requirementFromValue(v any, at string, q *discovery.Requirement) error {
	return readObject(v, at, func(r *reader, o map[string]any) {
		r.str(o, "name", &q.Name)
		r.str(o, "constraint", &q.Constraint)
		r.nested(o, "range", func(v any, at string) error {
			return readObject(v, at, func(r *reader, o map[string]any) {
				r.nested(o, "start", func(v any, at string) error { return positionFromValue(v, at, &q.Range.Start) })
				r.nested(o, "end", func(v any, at string) error { return positionFromValue(v, at, &q.Range.End) })
			})
		})
	})
}

func positionFromValue(v any, at string, p *diag.Position) error {
	return readObject(v, at, func(r *reader, o map[string]any) {
		r.integer(o, "line", &p.Line)
		r.integer(o, "character", &p.Character)
	})
}
