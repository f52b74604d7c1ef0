package refstore

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"sync/atomic"
)

// pack is one pack file and its index (gitformat-pack(5)). The index is
// read with positioned reads as it is searched, never loaded whole, so
// finding an object costs the same in a pack of a hundred objects as in
// one of millions.
type pack struct {
	path string   // without .idx or .pack
	algo hashAlgo // the length of the ids in the index

	once   sync.Once
	err    error
	idx    *packFile
	pkOnce sync.Once // the .pack is opened at the first entry read
	pkErr  error
	pk     *packFile
	size   int64 // of the .pack
	// fresh says this process set the pack's time (odb.present).
	fresh atomic.Bool
	// gone says the pack was let go of (close).
	gone   atomic.Bool
	v2     bool
	count  uint32
	fanout [256]uint32
}

func (p *pack) open() error {
	p.once.Do(func() { p.err = p.load() })
	return p.err
}

func (p *pack) load() error {
	idx, err := openPackFile(p.path + ".idx")
	if err != nil {
		return err
	}
	p.idx = idx
	var head [8 + 256*4]byte
	if _, err := idx.ReadAt(head[:], 0); err != nil {
		return fmt.Errorf("%s.idx: %w", p.path, err)
	}
	table := head[:256*4]
	if bytes.Equal(head[:4], []byte{0xff, 't', 'O', 'c'}) {
		if v := binary.BigEndian.Uint32(head[4:8]); v != 2 {
			return fmt.Errorf("%s.idx: unsupported index version %d", p.path, v)
		}
		p.v2, table = true, head[8:]
	}
	for i := range p.fanout {
		p.fanout[i] = binary.BigEndian.Uint32(table[4*i:])
		if i > 0 && p.fanout[i] < p.fanout[i-1] {
			return fmt.Errorf("%s.idx: corrupt fan-out table", p.path)
		}
	}
	p.count = p.fanout[255]
	// The index holds what its count says, as git checks: an id and an
	// offset per object (and a CRC-32, in version 2), then two checksums.
	sz := int64(p.algo.size())
	need := int64(256*4) + int64(p.count)*(4+sz) + 2*sz
	if p.v2 {
		need = 8 + int64(256*4) + int64(p.count)*(4+4+sz) + 2*sz
	}
	if idx.size < need {
		return fmt.Errorf("%s.idx: %d objects in a file of %d bytes", p.path, p.count, idx.size)
	}
	return nil
}

// openPack opens the .pack, once: many packs are looked in and only some
// read from.
func (p *pack) openPack() error {
	if err := p.open(); err != nil {
		return err
	}
	p.pkOnce.Do(func() {
		if p.pk, p.pkErr = openPackFile(p.path + ".pack"); p.pkErr == nil {
			p.size = p.pk.size
		}
	})
	return p.pkErr
}

// nameAt is where the id of the i-th object in index order starts: in a
// version 1 index each entry is a 4-byte offset and the id; in version 2
// the ids come as one table after the fan-out.
func (p *pack) nameAt(i uint32) int64 {
	sz := int64(p.algo.size())
	if !p.v2 {
		return int64(256*4) + int64(i)*(4+sz) + 4
	}
	return 8 + 256*4 + int64(i)*sz
}

// find looks id up in the index and returns its offset in the pack.
func (p *pack) find(id Hash) (int64, bool, error) {
	if err := p.open(); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// Tidied away (tidyPacks) since the list was made: a miss,
			// after which the reader lists the packs again.
			return 0, false, nil
		}
		return 0, false, err
	}
	want := id.bytes()
	if len(want) != p.algo.size() {
		return 0, false, nil
	}
	lo := uint32(0)
	if want[0] > 0 {
		lo = p.fanout[want[0]-1]
	}
	hi := p.fanout[want[0]]
	var buf [sha256Size]byte
	name := buf[:len(want)]
	for lo < hi {
		mid := lo + (hi-lo)/2
		if _, err := p.idx.ReadAt(name, p.nameAt(mid)); errors.Is(err, errPackClosed) {
			return 0, false, nil // let go of since: as when tidied away before it was opened
		} else if err != nil {
			return 0, false, fmt.Errorf("%s.idx: %w", p.path, err)
		}
		switch c := bytes.Compare(want, name); {
		case c == 0:
			off, err := p.offset(mid)
			if errors.Is(err, errPackClosed) {
				return 0, false, nil // let go of between the two reads
			}
			return off, err == nil, err
		case c < 0:
			hi = mid
		default:
			lo = mid + 1
		}
	}
	return 0, false, nil
}

// offset reads the pack offset of the i-th object in index order.
func (p *pack) offset(i uint32) (int64, error) {
	var b [8]byte
	if !p.v2 {
		if _, err := p.idx.ReadAt(b[:4], p.nameAt(i)-4); err != nil {
			return 0, err
		}
		return int64(binary.BigEndian.Uint32(b[:4])), nil
	}
	// After the ids: a CRC-32 per object, then a 4-byte offset per
	// object, then the 8-byte offsets that do not fit in 31 bits.
	n := int64(p.count)
	small := p.nameAt(p.count) + n*4
	if _, err := p.idx.ReadAt(b[:4], small+int64(i)*4); err != nil {
		return 0, err
	}
	off := binary.BigEndian.Uint32(b[:4])
	if off&0x80000000 == 0 {
		return int64(off), nil
	}
	large := small + n*4 + int64(off&0x7fffffff)*8
	if _, err := p.idx.ReadAt(b[:], large); err != nil {
		return 0, err
	}
	return int64(binary.BigEndian.Uint64(b[:])), nil
}

// packEntry is one entry of a pack: a whole object, or a delta with where
// its base is.
type packEntry struct {
	t      objType
	data   []byte // the object, or the delta
	base   int64  // offset of the base of an offset delta
	baseID Hash   // the base of a reference delta
}

// entry reads the entry at off. Under a limit its size is checked before
// it is inflated, and a delta's result size as soon as the delta's first
// bytes are. top says the entry is the object asked for, not a base.
// A delta is inflated only when whole is set; else its data is nil.
func (p *pack) entry(off int64, lim limit, top, whole bool) (*packEntry, error) {
	if err := p.openPack(); err != nil {
		return nil, err
	}
	if off < 12 || off >= p.size {
		return nil, fmt.Errorf("offset %d out of range", off)
	}
	var head [64]byte
	n, err := p.pk.ReadAt(head[:], off)
	if err != nil && !(errors.Is(err, io.EOF) && n > 0) {
		return nil, err
	}
	h, err := parseEntryHeader(head[:n], p.algo)
	if err != nil {
		return nil, err
	}
	e := &packEntry{t: h.t, baseID: h.baseID}
	size, i := h.size, h.n
	if e.t == objOfsDelta {
		if h.rel > off {
			return nil, fmt.Errorf("delta base offset %d out of range", h.rel)
		}
		e.base = off - h.rel
	}
	// A delta is never larger than what it makes (git keeps one only when
	// it is smaller), so it is held to the same limit.
	delta := e.t == objOfsDelta || e.t == objRefDelta
	kind := e.t.String()
	if delta || !top {
		kind = "object"
	}
	if err := lim.check(kind, int64(min(size, 1<<62))); err != nil {
		return nil, err
	}
	if size > uint64(p.size)*1032+1<<20 {
		// Deflate expands at most about 1032 times.
		return nil, fmt.Errorf("entry claims %d bytes", size)
	}
	start := off + int64(i)
	if !delta {
		if data, ok := readStored(p.pk, start, size); ok {
			e.data = data
			return e, nil
		}
	}
	if delta && !whole && lim.max < 0 {
		return e, nil
	}
	zr, err := newInflater(bufio.NewReaderSize(io.NewSectionReader(p.pk, start, p.size-start), 4096))
	if err != nil {
		return nil, err
	}
	defer putInflater(zr)
	if delta && lim.max >= 0 {
		// The sizes of the base and of the result come first: the
		// result's is checked before the rest is inflated.
		head := make([]byte, min(size, 20))
		if _, err := io.ReadFull(zr, head); err != nil {
			return nil, fmt.Errorf("inflating entry at %d: %w", off, err)
		}
		if _, rest, ok := deltaSize(head); ok {
			if dst, _, ok := deltaSize(rest); ok {
				if err := lim.check("object", int64(min(dst, 1<<62))); err != nil {
					return nil, err
				}
			}
		}
		if !whole {
			return e, nil
		}
		e.data = make([]byte, size)
		copy(e.data, head)
		if _, err := io.ReadFull(zr, e.data[len(head):]); err != nil {
			return nil, fmt.Errorf("inflating entry at %d: %w", off, err)
		}
		return e, nil
	}
	e.data = make([]byte, size)
	if _, err := io.ReadFull(zr, e.data); err != nil {
		return nil, fmt.Errorf("inflating entry at %d: %w", off, err)
	}
	return e, nil
}

// entryHeader is what the header of a pack entry says: the entry's type
// and size, how far back an offset delta's base starts (rel), a reference
// delta's base (baseID), and how many bytes the header took (n).
type entryHeader struct {
	t      objType
	size   uint64
	rel    int64
	baseID Hash
	n      int
}

// parseEntryHeader reads the header of a pack entry at the start of b:
// the type and size in groups of seven bits, then an offset delta's
// distance back to its base or a reference delta's base id.
func parseEntryHeader(b []byte, algo hashAlgo) (entryHeader, error) {
	if len(b) == 0 {
		return entryHeader{}, errors.New("corrupt entry header")
	}
	h := entryHeader{t: objType(b[0] >> 4 & 7), size: uint64(b[0] & 15)}
	i, shift := 1, 4
	for c := b[0]; c&0x80 != 0; shift += 7 {
		if i >= len(b) || shift > 60 {
			return entryHeader{}, errors.New("corrupt entry header")
		}
		c = b[i]
		i++
		h.size |= uint64(c&0x7f) << shift
	}
	switch h.t {
	case objCommit, objTree, objBlob, objTag:
	case objOfsDelta:
		if i >= len(b) {
			return entryHeader{}, errors.New("corrupt delta offset")
		}
		c := b[i]
		i++
		h.rel = int64(c & 0x7f)
		for c&0x80 != 0 {
			if i >= len(b) || h.rel > 1<<55 {
				return entryHeader{}, errors.New("corrupt delta offset")
			}
			c = b[i]
			i++
			h.rel = (h.rel+1)<<7 | int64(c&0x7f)
		}
		if h.rel <= 0 {
			return entryHeader{}, fmt.Errorf("delta base offset %d out of range", h.rel)
		}
	case objRefDelta:
		sz := algo.size()
		if i+sz > len(b) {
			return entryHeader{}, errors.New("corrupt delta base id")
		}
		h.baseID = hashFromBytes(algo, b[i:i+sz])
		i += sz
	default:
		return entryHeader{}, fmt.Errorf("unknown entry type %d", h.t)
	}
	h.n = i
	return h, nil
}

// applyDelta rebuilds an object from its base and a delta: the sizes of
// the base and the result, then instructions that copy a range of the base
// or insert literal bytes.
func applyDelta(base, delta []byte) ([]byte, error) {
	src, delta, ok := deltaSize(delta)
	if !ok || src != uint64(len(base)) {
		return nil, fmt.Errorf("delta expects a base of %d bytes, got %d", src, len(base))
	}
	dst, delta, ok := deltaSize(delta)
	if !ok || dst > 1<<40 {
		return nil, errors.New("corrupt delta: result size")
	}
	out := make([]byte, 0, dst)
	for len(delta) > 0 {
		cmd := delta[0]
		delta = delta[1:]
		switch {
		case cmd&0x80 != 0:
			var off, size uint64
			for i := range 7 {
				if cmd&(1<<i) == 0 {
					continue
				}
				if len(delta) == 0 {
					return nil, errors.New("corrupt delta: truncated copy")
				}
				if i < 4 {
					off |= uint64(delta[0]) << (8 * i)
				} else {
					size |= uint64(delta[0]) << (8 * (i - 4))
				}
				delta = delta[1:]
			}
			if size == 0 {
				size = 0x10000
			}
			if off+size > uint64(len(base)) || uint64(len(out))+size > dst {
				return nil, errors.New("corrupt delta: copy out of range")
			}
			out = append(out, base[off:off+size]...)
		case cmd != 0:
			n := int(cmd)
			if n > len(delta) || uint64(len(out)+n) > dst {
				return nil, errors.New("corrupt delta: truncated insert")
			}
			out = append(out, delta[:n]...)
			delta = delta[n:]
		default:
			return nil, errors.New("corrupt delta: reserved instruction")
		}
	}
	if uint64(len(out)) != dst {
		return nil, fmt.Errorf("delta made %d bytes, expected %d", len(out), dst)
	}
	return out, nil
}

// deltaSize reads a size at the start of a delta: little-endian groups of
// seven bits, the high bit saying another follows.
func deltaSize(b []byte) (uint64, []byte, bool) {
	var v uint64
	for i, shift := 0, 0; i < len(b) && shift < 64; i, shift = i+1, shift+7 {
		v |= uint64(b[i]&0x7f) << shift
		if b[i]&0x80 == 0 {
			return v, b[i+1:], true
		}
	}
	return 0, nil, false
}
