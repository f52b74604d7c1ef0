package refstore

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/liza-dev/git-liza/proc"
)

// An operation's new objects go to the object directory as one pack and
// its index (gitformat-pack(5): pack version 2, index version 2, whole
// objects, no deltas), which every git reads: two new files where loose
// objects took one each. Creating a file is most of what writing a small
// object costs (the kernel allocating an inode), so an operation of a
// dozen objects writes about a sixth of the files it did.
//
// Packs then accumulate, one per operation, and a reader looks an object
// up in every pack: tidyPacks merges the small ones (see there).

// packWriter writes a pack of a known number of objects to a temporary
// file, then its index, then moves both to their final names.
type packWriter struct {
	dir   string
	algo  hashAlgo
	level int
	f     *os.File
	tmp   string
	w     *bufio.Writer
	sum   hash.Hash // of the pack so far
	off   int64
	left  uint32 // objects still to come
	ents  []packed
}

// packed is one object of a pack being written, for its index.
type packed struct {
	id  Hash
	off int64
	crc uint32
}

// newPackWriter starts a pack of count objects in dir; about is roughly
// how many bytes they take, which sizes the write buffer (an operation's
// pack is a few kilobytes; a zeroed 64 KiB buffer cost it more than its
// writes).
func newPackWriter(dir string, algo hashAlgo, level int, count uint32, about int64) (*packWriter, error) {
	f, tmp, err := createTemp(dir, "tmp_pack_")
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(dir, 0o755); err == nil {
			f, tmp, err = createTemp(dir, "tmp_pack_")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("writing a pack: %w", err)
	}
	pw := &packWriter{dir: dir, algo: algo, level: level, f: f, tmp: tmp, w: bufio.NewWriterSize(f, int(min(max(about+int64(count)*32+64, 4<<10), 64<<10))), sum: algo.new(), left: count}
	var head [12]byte
	copy(head[:], "PACK")
	binary.BigEndian.PutUint32(head[4:], 2)
	binary.BigEndian.PutUint32(head[8:], count)
	pw.write(head[:])
	return pw, nil
}

func (pw *packWriter) write(b []byte) {
	pw.w.Write(b) // an error stays in pw.w and comes back from Flush
	pw.sum.Write(b)
	pw.off += int64(len(b))
}

// add writes one object, whole: its type and size, then its zlib stream.
func (pw *packWriter) add(id Hash, t objType, data []byte) error {
	if pw.left == 0 {
		return errors.New("internal error: more objects than the pack's header says")
	}
	pw.left--
	var head [16]byte
	size := uint64(len(data))
	b, n := byte(t)<<4|byte(size&15), 0
	for size >>= 4; size > 0; size >>= 7 {
		head[n] = b | 0x80
		n++
		b = byte(size & 0x7f)
	}
	head[n] = b
	n++
	z := deflate(pw.level, "", data)
	defer putBuffer(z)
	crc := crc32.Update(crc32.ChecksumIEEE(head[:n]), crc32.IEEETable, z.Bytes())
	pw.ents = append(pw.ents, packed{id, pw.off, crc})
	pw.write(head[:n])
	pw.write(z.Bytes())
	return nil
}

// addRaw writes one entry as another pack stored it, with its CRC-32.
func (pw *packWriter) addRaw(id Hash, entry []byte, crc uint32) error {
	if pw.left == 0 {
		return errors.New("internal error: more objects than the pack's header says")
	}
	pw.left--
	pw.ents = append(pw.ents, packed{id, pw.off, crc})
	pw.write(entry)
	return nil
}

// abort removes the temporary file.
func (pw *packWriter) abort() {
	pw.f.Close()
	os.Remove(pw.tmp)
}

// finish ends the pack with its checksum, writes its index, and moves the
// pack, then the index, to their final names: pack-<checksum>. A reader
// (git's, or this package's packList) takes a pack by its index, so a pack
// is never seen before it is whole; a process killed between the two
// renames leaves a pack with no index, which nothing reads. It returns the
// final path without .pack or .idx.
func (pw *packWriter) finish() (string, error) {
	fail := func(err error) (string, error) {
		pw.abort()
		return "", fmt.Errorf("writing a pack: %w", err)
	}
	if pw.left != 0 {
		return fail(errors.New("internal error: fewer objects than the pack's header says"))
	}
	trailer := pw.sum.Sum(nil)
	pw.w.Write(trailer)
	if err := pw.w.Flush(); err != nil {
		return fail(err)
	}
	if err := pw.f.Close(); err != nil {
		return fail(err)
	}
	idx := pw.index(trailer)
	f, tmpIdx, err := createTemp(pw.dir, "tmp_idx_")
	if err != nil {
		return fail(err)
	}
	_, err = f.Write(idx)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	final := filepath.Join(pw.dir, "pack-"+fmt.Sprintf("%x", trailer))
	if err == nil {
		err = os.Rename(pw.tmp, final+".pack")
	}
	if err == nil {
		proc.CrashPoint("pack:renamed")
		err = os.Rename(tmpIdx, final+".idx")
	}
	if err != nil {
		os.Remove(tmpIdx)
		return fail(err)
	}
	return final, nil
}

// index is the version 2 index of the pack: a fan-out table of the
// count of ids up to each first byte, the sorted ids, their CRC-32s, their
// offsets (those past 2 GiB in a table of 8-byte ones), the pack's
// checksum and the index's own.
func (pw *packWriter) index(trailer []byte) []byte {
	ents := pw.ents
	slices.SortFunc(ents, func(a, b packed) int { return bytes.Compare(a.id.bytes(), b.id.bytes()) })
	var b bytes.Buffer
	b.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	var fan [256]uint32
	for _, e := range ents {
		fan[e.id.bytes()[0]]++
	}
	var n uint32
	for i := range fan {
		n += fan[i]
		b.Write(binary.BigEndian.AppendUint32(nil, n))
	}
	for _, e := range ents {
		b.Write(e.id.bytes())
	}
	for _, e := range ents {
		b.Write(binary.BigEndian.AppendUint32(nil, e.crc))
	}
	var large []int64
	for _, e := range ents {
		if e.off < 1<<31 {
			b.Write(binary.BigEndian.AppendUint32(nil, uint32(e.off)))
			continue
		}
		b.Write(binary.BigEndian.AppendUint32(nil, 1<<31|uint32(len(large))))
		large = append(large, e.off)
	}
	for _, off := range large {
		b.Write(binary.BigEndian.AppendUint64(nil, uint64(off)))
	}
	b.Write(trailer)
	h := pw.algo.new()
	h.Write(b.Bytes())
	b.Write(h.Sum(nil))
	return b.Bytes()
}

// writePack writes objs (named ids) as one pack in the repository's own
// object directory, and puts it first in the list of packs this process
// reads.
func (o *odb) writePack(ids []Hash, objs []heldObject) error {
	var about int64
	for _, x := range objs {
		about += int64(len(x.data))
	}
	pw, err := newPackWriter(filepath.Join(o.dirs[0], "pack"), o.algo, o.compression(), uint32(len(ids)), about)
	if err != nil {
		return err
	}
	for i, x := range objs {
		if err := pw.add(ids[i], x.t, x.data); err != nil {
			pw.abort()
			return err
		}
	}
	path, err := pw.finish()
	if err != nil {
		return err
	}
	o.mu.Lock()
	if o.scanned && !slices.ContainsFunc(o.packs, func(p *pack) bool { return p.path == path }) {
		// A new list: other goroutines may be reading the old one.
		o.packs = append([]*pack{{path: path, algo: o.algo}}, o.packs...)
	}
	o.mu.Unlock()
	return nil
}
