package refstore

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/adler32"
	"io"
	"sync"
)

// The zlib streams of objects: pooled compressors and decompressors.

var (
	bufferPool   = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	deflaterPool sync.Pool // *deflater
	inflaterPool sync.Pool
)

// deflater is a reusable zlib writer and its level.
type deflater struct {
	w     *zlib.Writer
	level int
}

// deflate encodes header and data as one zlib stream at level, 0 meaning
// stored without compression.
func deflate(level int, header string, data []byte) *bytes.Buffer {
	buf := bufferPool.Get().(*bytes.Buffer)
	buf.Reset()
	if level == 0 {
		storeZlib(buf, header, data)
		return buf
	}
	d, ok := deflaterPool.Get().(*deflater)
	if ok && d.level == level {
		d.w.Reset(buf)
	} else {
		w, _ := zlib.NewWriterLevel(buf, level)
		d = &deflater{w, level}
	}
	io.WriteString(d.w, header)
	d.w.Write(data)
	d.w.Close()
	deflaterPool.Put(d)
	return buf
}

// storeZlib writes a zlib stream of stored (uncompressed) deflate blocks
// (RFC 1950, RFC 1951 section 3.2.4): what git writes with
// core.looseCompression 0.
func storeZlib(buf *bytes.Buffer, header string, data []byte) {
	buf.Grow(len(header) + len(data) + 16 + 5*(len(data)/0xffff))
	buf.Write([]byte{0x78, 0x01})
	total := len(header) + len(data)
	for pos, first := 0, true; first || pos < total; first = false {
		n := min(total-pos, 0xffff)
		final := byte(0)
		if pos+n == total {
			final = 1
		}
		buf.Write([]byte{final, byte(n), byte(n >> 8), ^byte(n), ^byte(n >> 8)})
		end := pos + n
		if pos < len(header) {
			h := min(end, len(header))
			buf.WriteString(header[pos:h])
			pos = h
		}
		if pos < end {
			buf.Write(data[pos-len(header) : end-len(header)])
		}
		pos = end
	}
	sum := adler32.New()
	io.WriteString(sum, header)
	sum.Write(data)
	buf.Write(sum.Sum(nil))
}

func putBuffer(b *bytes.Buffer) {
	if b.Cap() <= 1<<20 {
		bufferPool.Put(b)
	}
}

// newInflater returns a zlib reader of r, reusing a pooled decompressor.
func newInflater(r io.Reader) (io.ReadCloser, error) {
	if zr, ok := inflaterPool.Get().(io.ReadCloser); ok {
		if err := zr.(zlib.Resetter).Reset(r, nil); err != nil {
			return nil, err
		}
		return zr, nil
	}
	return zlib.NewReader(r)
}

func putInflater(zr io.ReadCloser) {
	inflaterPool.Put(zr)
}

// readStored reads, at off in r, a zlib stream of size bytes stored
// without compression (what git-liza writes, see storeZlib) straight into
// the object's buffer: no decompressor, no window, one copy. ok is false
// for anything else (a compressed stream, one cut short or whose checksum
// fails), which the caller then inflates, and so reports as it reports
// any stream it cannot read.
func readStored(r io.ReaderAt, off int64, size uint64) (data []byte, ok bool) {
	var head [5]byte
	if _, err := r.ReadAt(head[:2], off); err != nil {
		return nil, false
	}
	if head[0]&0x0f != 8 || head[1]&0x20 != 0 || (uint(head[0])<<8|uint(head[1]))%31 != 0 {
		return nil, false // not deflate, or a preset dictionary
	}
	off += 2
	got := uint64(0)
	for {
		if _, err := r.ReadAt(head[:], off); err != nil {
			return nil, false
		}
		final, kind := head[0]&1, head[0]>>1&3
		n := uint64(head[1]) | uint64(head[2])<<8
		if kind != 0 || head[3] != ^head[1] || head[4] != ^head[2] || got+n > size {
			return nil, false
		}
		if data == nil {
			// Made once the stream is known stored: a compressed one
			// (git's) is left to the inflater before anything is made.
			data = make([]byte, size)
		}
		off += 5
		if n > 0 {
			if _, err := r.ReadAt(data[got:got+n], off); err != nil {
				return nil, false
			}
		}
		got += n
		off += int64(n)
		if final == 1 {
			break
		}
	}
	var sum [4]byte
	if got != size {
		return nil, false
	}
	if _, err := r.ReadAt(sum[:], off); err != nil {
		return nil, false
	}
	return data, binary.BigEndian.Uint32(sum[:]) == adler32.Checksum(data)
}
