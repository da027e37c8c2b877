package index

import "os"

// DecodeFile exposes the record decoder to the fuzz target.
func DecodeFile(key, val []byte) (File, error) { return decodeFile(key, val) }

// EncodeFile exposes the record encoder; the path is not part of the value.
func EncodeFile(f File) []byte { return encodeFile(nil, &f) }

// OpenWithOpenFile is Open with the function that opens the database file
// replaced, to simulate file systems the test cannot make.
func OpenWithOpenFile(path string, opts Options, openFile func(name string, flag int, perm os.FileMode) (*os.File, error)) (*Store, error) {
	opts.openFile = openFile
	return Open(path, opts)
}
