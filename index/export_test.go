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

// OpenWithStatistics is Open keeping bbolt's statistics, for
// PagesAllocated.
func OpenWithStatistics(path string, opts Options) (*Store, error) {
	opts.statistics = true
	return Open(path, opts)
}

// PagesAllocated is how many bytes of pages the write transactions of a
// store opened by OpenWithStatistics have allocated so far.
func PagesAllocated(s *Store) int64 {
	st := s.db.Stats()
	return st.TxStats.GetPageAlloc()
}
