package index

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"math"
)

// File is what the store keeps about one path: enough of its stat data and
// content hash to tell, after a restart, whether the file changed, plus an
// opaque payload owned by the caller.
type File struct {
	// Path is the absolute, cleaned path of the file; it is the key.
	Path string
	// Size is the file size in bytes.
	Size int64
	// ModTime is the modification time in Unix nanoseconds.
	ModTime int64
	// Ctime is the inode change time (st_ctim) in Unix nanoseconds, or 0
	// where the platform does not report one (Windows). Unlike ModTime it
	// cannot be set back: a rewrite that restores the modification time
	// (cp -p, tar x, touch -r) still changes it.
	Ctime int64
	// Inode is the file's inode number.
	Inode uint64
	// Mode holds the file mode bits, including the type bits.
	Mode uint32
	// Hash is the SHA-256 of the file's bytes; zero for directories.
	Hash [32]byte
	// Root is the root the file was found under.
	Root string
	// Data is an opaque payload; an empty payload reads back as nil.
	Data []byte
}

// StatOf returns the stat data of fi as a File: Size, ModTime, Ctime,
// Inode and Mode are set, the other fields are zero. Inode and Ctime come
// from fi.Sys() and are 0 where the platform does not report them
// (Windows, or a FileInfo that is not from the os package).
func StatOf(fi fs.FileInfo) File {
	inode, ctime := sysStat(fi)
	return File{
		Size:    fi.Size(),
		ModTime: fi.ModTime().UnixNano(),
		Ctime:   ctime,
		Inode:   inode,
		Mode:    uint32(fi.Mode()),
	}
}

// SameStat reports whether f and g hold the same stat data: size,
// modification time, change time, inode and mode. A caller that trusts a
// record while its file's stat data is unchanged should compare the record
// with StatOf of a fresh stat using SameStat: comparing size and ModTime
// alone misses a rewrite that restores the modification time.
func (f File) SameStat(g File) bool {
	return f.Size == g.Size && f.ModTime == g.ModTime && f.Ctime == g.Ctime &&
		f.Inode == g.Inode && f.Mode == g.Mode
}

// The record encoding, after the key (the path):
//
//	varint  Size
//	varint  ModTime
//	varint  Ctime
//	uvarint Inode
//	uvarint Mode
//	byte    flags (flagHash: 32 bytes of Hash follow)
//	[32]byte Hash, when flagHash is set
//	uvarint root: n<<1 when Root is Path[:n], len<<1|1 followed by the bytes otherwise
//	uvarint len(Data), then the bytes
//
// Nothing may follow the payload.
const flagHash = 1 << 0

// maxHeader bounds the bytes of a record that are neither root nor data:
// five varints, the flags, the hash and two length prefixes.
const maxHeader = 5*binary.MaxVarintLen64 + 1 + 32 + 2*binary.MaxVarintLen64

// encodeFile appends the encoding of f's fields, its path excepted, to dst.
func encodeFile(dst []byte, f *File) []byte {
	dst = binary.AppendVarint(dst, f.Size)
	dst = binary.AppendVarint(dst, f.ModTime)
	dst = binary.AppendVarint(dst, f.Ctime)
	dst = binary.AppendUvarint(dst, f.Inode)
	dst = binary.AppendUvarint(dst, uint64(f.Mode))
	if f.Hash == ([32]byte{}) {
		dst = append(dst, 0)
	} else {
		dst = append(dst, flagHash)
		dst = append(dst, f.Hash[:]...)
	}
	if len(f.Root) <= len(f.Path) && f.Path[:len(f.Root)] == f.Root {
		dst = binary.AppendUvarint(dst, uint64(len(f.Root))<<1)
	} else {
		dst = binary.AppendUvarint(dst, uint64(len(f.Root))<<1|1)
		dst = append(dst, f.Root...)
	}
	dst = binary.AppendUvarint(dst, uint64(len(f.Data)))
	return append(dst, f.Data...)
}

// decodeFile decodes the record stored under key. The result shares no
// memory with key or val.
func decodeFile(key, val []byte) (File, error) {
	return decodeRecord(string(key), val, true)
}

// decodeRecord decodes the record of path stored as val. With copyData
// unset, the result's Data is a part of val.
func decodeRecord(path string, val []byte, copyData bool) (File, error) {
	f := File{Path: path}
	d := decoder{buf: val}
	f.Size = d.varint("size")
	f.ModTime = d.varint("mtime")
	f.Ctime = d.varint("ctime")
	f.Inode = d.uvarint("inode")
	mode := d.uvarint("mode")
	if d.err == nil && mode > math.MaxUint32 {
		d.fail("mode out of range")
	}
	f.Mode = uint32(mode)
	flags := d.bytes(1, "flags")
	if d.err == nil && flags[0]&^flagHash != 0 {
		d.fail("unknown flags")
	}
	if d.err == nil && flags[0]&flagHash != 0 {
		copy(f.Hash[:], d.bytes(uint64(len(f.Hash)), "hash"))
	}
	root := d.uvarint("root")
	if d.err == nil {
		n := root >> 1
		switch {
		case root&1 == 1:
			f.Root = string(d.bytes(n, "root"))
		case n > uint64(len(f.Path)):
			d.fail("root prefix longer than path")
		default:
			f.Root = f.Path[:n]
		}
	}
	size := d.uvarint("data length")
	data := d.bytes(size, "data")
	if d.err == nil && size > 0 {
		f.Data = data
		if copyData {
			f.Data = append([]byte(nil), data...)
		}
	}
	if d.err == nil && len(d.buf) != 0 {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return File{}, fmt.Errorf("decode record %s: %w", path, d.err)
	}
	return f, nil
}

// decoder reads a record field by field; after the first error every read
// returns a zero value and the error stays.
type decoder struct {
	buf []byte
	off int
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s at byte %d", ErrCorrupt, what, d.off)
	}
}

func (d *decoder) varint(what string) int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.fail("bad " + what)
		return 0
	}
	d.buf = d.buf[n:]
	d.off += n
	return v
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail("bad " + what)
		return 0
	}
	d.buf = d.buf[n:]
	d.off += n
	return v
}

// bytes returns the next n bytes, aliasing the buffer.
func (d *decoder) bytes(n uint64, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.buf)) {
		d.fail("short " + what)
		return nil
	}
	b := d.buf[:n]
	d.buf = d.buf[n:]
	d.off += int(n)
	return b
}
