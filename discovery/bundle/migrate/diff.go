package migrate

import (
	"bytes"
	"unicode/utf8"
)

// binary reports whether data is not text a line diff can show.
func binary(data []byte) bool {
	return bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data)
}
