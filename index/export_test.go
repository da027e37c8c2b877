package index

// DecodeFile exposes the record decoder to the fuzz target.
func DecodeFile(key, val []byte) (File, error) { return decodeFile(key, val) }

// EncodeFile exposes the record encoder; the path is not part of the value.
func EncodeFile(f File) []byte { return encodeFile(nil, &f) }
