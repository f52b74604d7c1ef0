package refstore

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// fetchedObject is one object of a fetched pack, resolved.
type fetchedObject struct {
	id   Hash
	t    objType
	data []byte
}

// readFetchedPack reads every object of a pack sent whole (gitformat-
// pack(5)): its checksum first, then each entry, inflated within
// bounds, deltas applied to their bases in the pack (by offset or
// id) or in this repository (by id), and each named by its content.
// The bounds are daemonfetch.go's (daemonMaxObjects, daemonMaxUnpack).
func (r *Repo) readFetchedPack(pack []byte) ([]fetchedObject, error) {
	hs := r.algo.size()
	if len(pack) < 12+hs || string(pack[:4]) != "PACK" {
		return nil, errors.New("not a pack")
	}
	if v := binary.BigEndian.Uint32(pack[4:8]); v != 2 && v != 3 {
		return nil, fmt.Errorf("a pack of version %d", v)
	}
	count := binary.BigEndian.Uint32(pack[8:12])
	if count > daemonMaxObjects {
		return nil, fmt.Errorf("a pack of %d objects", count)
	}
	body, trailer := pack[:len(pack)-hs], pack[len(pack)-hs:]
	sum := r.algo.new()
	sum.Write(body)
	if !bytes.Equal(sum.Sum(nil), trailer) {
		return nil, errors.New("the pack's checksum does not match")
	}
	type entry struct {
		off    int
		t      objType
		data   []byte
		base   int // index of an offset delta's base; -1 otherwise
		baseID Hash
		done   bool
	}
	entries := make([]entry, 0, min(count, 1<<16))
	at := map[int]int{} // offset -> index
	pos, total := 12, 0
	for i := uint32(0); i < count; i++ {
		if pos >= len(body) {
			return nil, errors.New("the pack ends before its objects")
		}
		h, err := parseEntryHeader(body[pos:], r.algo)
		if err != nil {
			return nil, fmt.Errorf("the entry at %d: %w", pos, err)
		}
		e := entry{off: pos, base: -1, t: h.t, baseID: h.baseID}
		size := h.size
		if e.t == objOfsDelta {
			b, ok := at[e.off-int(h.rel)] // none before the pack's start
			if !ok {
				return nil, fmt.Errorf("a delta at %d whose base is not an entry", e.off)
			}
			e.base = b
		}
		pos += h.n
		if total += int(min(size, daemonMaxUnpack+1)); total > daemonMaxUnpack {
			return nil, fmt.Errorf("objects of over %d bytes", daemonMaxUnpack)
		}
		if size > uint64(len(body)-pos)*1032+1<<20 {
			// Deflate expands at most about 1032 times.
			return nil, fmt.Errorf("the entry at %d claims %d bytes", e.off, size)
		}
		src := bytes.NewReader(body[pos:])
		zr, err := zlib.NewReader(src)
		if err != nil {
			return nil, fmt.Errorf("the entry at %d: %w", e.off, err)
		}
		e.data = make([]byte, size)
		if _, err := io.ReadFull(zr, e.data); err != nil {
			return nil, fmt.Errorf("the entry at %d: %w", e.off, err)
		}
		// The stream must end there, its checksum read and right.
		if n, err := zr.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			return nil, fmt.Errorf("the entry at %d is longer than it says", e.off)
		}
		pos = len(body) - src.Len()
		at[e.off] = len(entries)
		entries = append(entries, e)
	}
	if pos != len(body) {
		return nil, errors.New("the pack holds more than its objects")
	}
	// Whole objects first, then each delta once its base is known (by
	// offset, or by id in the pack or here), each entry once: a pack
	// ordered to make a search slow makes none.
	objs := make([]fetchedObject, len(entries))
	ofsKids := map[int][]int{}
	refKids := map[Hash][]int{}
	var queue []int
	resolved := 0
	resolve := func(i int, t objType, data []byte) {
		id, _ := r.odb.name(t, data)
		objs[i] = fetchedObject{id: id, t: t, data: data}
		entries[i].done, entries[i].data = true, nil
		resolved++
		queue = append(queue, i)
	}
	apply := func(i int, base *fetchedObject) error {
		e := &entries[i]
		_, rest, ok := deltaSize(e.data)
		dst, _, ok2 := deltaSize(rest)
		if !ok || !ok2 {
			return fmt.Errorf("the delta at %d is corrupt", e.off)
		}
		if total += int(min(dst, daemonMaxUnpack+1)); total > daemonMaxUnpack {
			return fmt.Errorf("objects of over %d bytes", daemonMaxUnpack)
		}
		data, err := applyDelta(base.data, e.data)
		if err != nil {
			return fmt.Errorf("the delta at %d: %w", e.off, err)
		}
		resolve(i, base.t, data)
		return nil
	}
	for i, e := range entries {
		switch e.t {
		case objOfsDelta:
			ofsKids[e.base] = append(ofsKids[e.base], i)
		case objRefDelta:
			refKids[e.baseID] = append(refKids[e.baseID], i)
		default:
			resolve(i, e.t, e.data)
		}
	}
	for {
		for len(queue) > 0 {
			i := queue[0]
			queue = queue[1:]
			base := &objs[i]
			kids := append(ofsKids[i], refKids[base.id]...)
			delete(ofsKids, i)
			delete(refKids, base.id)
			for _, k := range kids {
				if !entries[k].done {
					if err := apply(k, base); err != nil {
						return nil, err
					}
				}
			}
		}
		if resolved == len(entries) {
			return objs, nil
		}
		// What is left waits on bases this repository has, or on none.
		here := false
		for id, kids := range refKids {
			t, data, err := r.odb.read(id)
			if err != nil {
				continue
			}
			here = true
			delete(refKids, id)
			base := &fetchedObject{id: id, t: t, data: data}
			for _, k := range kids {
				if !entries[k].done {
					if err := apply(k, base); err != nil {
						return nil, err
					}
				}
			}
		}
		if !here {
			return nil, errors.New("a delta whose base is neither in the pack nor here")
		}
	}
}
