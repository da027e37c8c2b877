package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// UnmarshalJSON reads a JSON object as MarshalJSON writes one: keys in
// their order, numbers with a fraction or an exponent as Float, other
// numbers as int64 (or *big.Int beyond it), arrays as []any, objects as
// *Map. What MarshalJSON wrote reads back to a Map that writes the same
// bytes, so that an answer decoded on the other side of the socket prints
// as the one made in process.
func (m *Map) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeJSON(dec, 0)
	if err != nil {
		return fmt.Errorf("decode mapping: %w", err)
	}
	mm, ok := v.(*Map)
	if !ok {
		return fmt.Errorf("decode mapping: got %s", TypeName(v))
	}
	*m = *mm
	return nil
}

func decodeJSON(dec *json.Decoder, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("nested deeper than %d", MaxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var mb MapBuilder
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeJSON(dec, depth+1)
				if err != nil {
					return nil, err
				}
				mb.Set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return mb.Map(), nil
		case '[':
			list := []any{}
			for dec.More() {
				v, err := decodeJSON(dec, depth+1)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return list, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		s := t.String()
		if strings.ContainsAny(s, ".eE") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, err
			}
			return Float(f), nil
		}
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
		n, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("bad number %q", s)
		}
		return n, nil
	}
	return tok, nil // nil, bool, string
}
