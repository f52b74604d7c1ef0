package refstore

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/liza-dev/git-liza/proc"
)

// Tidying. Every operation adds a small pack; when the repository's own
// object directory has more than packsBeforeTidy packs that tidyPacks may
// merge, it merges the smallest of them into one, so that each pack left
// is at least twice the size of all the smaller ones together (the rule of
// git repack --geometric=2). The packs stay few (after a tidy, at most
// about log2 of tidyMaxPack over the smallest pack's size, plus the
// packsBeforeTidy written before the next) and each object is copied
// about log2 times over its life, not at every tidy. An object stored
// whole is copied as it is stored, its CRC-32 checked against the index;
// only deltas (in packs git made) are resolved and stored again.
//
// A pack may be merged when it is at most tidyMaxPack (larger ones are
// git gc's, which runs past gc.autoPackLimit, 50 packs) and git gives it
// no meaning of its own: a .keep, a .promisor (a partial clone's), a
// .mtimes (a cruft pack) or a .bitmap beside it leave it alone.
//
// The new pack is whole under its final name before any merged pack is
// removed, index first; a reader that listed the packs before finds an
// index gone, takes it as a miss and lists them again (readListed), and
// git does the same. A process killed in between leaves both, every
// object readable, and the next tidy merges them. One process tidies at a
// time (a flock on tidyLock, released by the kernel however it ends); the
// others go on without waiting.
const (
	packsBeforeTidy = 8
	tidyMaxPack     = 64 << 20
)

type tidyCandidate struct {
	path string
	size int64
}

// tidyCandidates are the packs of dir tidyPacks may merge, smallest first.
func tidyCandidates(dir string) ([]tidyCandidate, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	have := map[string]fs.DirEntry{}
	for _, e := range ents {
		have[e.Name()] = e
	}
	var list []tidyCandidate
	for name := range have {
		base, ok := strings.CutSuffix(name, ".idx")
		if !ok || !strings.HasPrefix(base, "pack-") {
			continue
		}
		if slices.ContainsFunc([]string{".keep", ".promisor", ".mtimes", ".bitmap"}, func(ext string) bool { return have[base+ext] != nil }) {
			continue
		}
		pk := have[base+".pack"]
		if pk == nil {
			continue
		}
		fi, err := pk.Info()
		if err != nil || fi.Size() > tidyMaxPack {
			continue
		}
		list = append(list, tidyCandidate{filepath.Join(dir, base), fi.Size()})
	}
	slices.SortFunc(list, func(a, b tidyCandidate) int {
		return cmp.Or(cmp.Compare(a.size, b.size), strings.Compare(a.path, b.path))
	})
	return list, nil
}

// toMerge is the smallest packs of list (smallest first) to merge so that
// each one left is at least twice the size of all smaller ones together.
func toMerge(list []tidyCandidate) []tidyCandidate {
	var total int64
	n := 0
	for i, c := range list {
		if i > 0 && c.size < 2*total {
			n = i + 1
		}
		total += c.size
	}
	return list[:n]
}

// tidyPacks merges small packs when there are more than packsBeforeTidy
// (see above).
func (o *odb) tidyPacks() error {
	dir := filepath.Join(o.dirs[0], "pack")
	if n, known := o.localPacks(dir); known && n <= packsBeforeTidy {
		// As this process last listed them, with what it wrote since:
		// too few to tidy. Packs written meanwhile by others are theirs
		// to count; the listing a tidy needs costs an operation a tenth
		// of a millisecond.
		return nil
	}
	list, err := tidyCandidates(dir)
	if err != nil || len(list) <= packsBeforeTidy || o.tidyLock == "" {
		return err
	}
	// Opened for reading, a flock needs no more: a process whose sandbox
	// keeps liza/ read-only (an agent's) tidies too, once the lock file is
	// there.
	f, err := openRead(o.tidyLock)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(o.tidyLock), 0o755); err == nil {
			f, err = openFile(o.tidyLock, os.O_RDWR|os.O_CREATE, 0o644)
		}
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if held, err := flockFile(f, false); err != nil || !held {
		return err // another process tidies
	}
	// Another may have tidied since the list was made.
	if list, err = tidyCandidates(dir); err != nil || len(list) <= packsBeforeTidy {
		return err
	}
	merge := toMerge(list)
	if len(merge) < 2 {
		return nil
	}
	return o.mergePacks(dir, merge)
}

// localPacks is how many packs of dir this process knows (the list it
// read, with the packs it wrote since), when it has read the list.
func (o *odb) localPacks(dir string) (int, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.scanned {
		return 0, false
	}
	n := 0
	for _, p := range o.packs {
		if filepath.Dir(p.path) == dir {
			n++
		}
	}
	return n, true
}

// packIndexEntry is one object of a pack's index.
type packIndexEntry struct {
	id  Hash
	off int64
	end int64  // where the next entry (or the checksum) starts
	crc uint32 // of the entry as stored; a version 1 index has none
}

// mergePacks writes every object of merge into one new pack, then removes
// merge. A corrupt pack stops the tidy, and nothing is removed.
func (o *odb) mergePacks(dir string, merge []tidyCandidate) error {
	type entry struct {
		p *pack
		packIndexEntry
	}
	var ents []entry
	seen := map[Hash]bool{}
	for _, c := range merge {
		p := &pack{path: c.path, algo: o.algo}
		defer p.close()
		list, err := p.all()
		if err != nil {
			return err
		}
		for _, e := range list {
			if !seen[e.id] {
				seen[e.id] = true
				ents = append(ents, entry{p, e})
			}
		}
	}
	var about int64
	for _, c := range merge {
		about += c.size
	}
	pw, err := newPackWriter(dir, o.algo, o.compression(), uint32(len(ents)), about)
	if err != nil {
		return err
	}
	var raw []byte
	for _, e := range ents {
		err := func() error {
			// A whole object in a version 2 index is copied as stored.
			if n := e.end - e.off; e.p.v2 && n > 0 && n < 1<<30 {
				raw = slices.Grow(raw[:0], int(n))[:n]
				if _, err := e.p.pk.ReadAt(raw, e.off); err != nil {
					return err
				}
				if t := objType(raw[0] >> 4 & 7); t >= objCommit && t <= objTag {
					if crc32.ChecksumIEEE(raw) != e.crc {
						return fmt.Errorf("object %s: CRC-32 mismatch", e.id)
					}
					return pw.addRaw(e.id, raw, e.crc)
				}
			}
			t, data, err := o.unpack(e.p, e.off, limit{e.id, noLimit})
			if err == nil {
				err = checkName(o.algo, e.id, t, data)
			}
			if err == nil {
				err = pw.add(e.id, t, data)
			}
			return err
		}()
		if err != nil {
			pw.abort()
			return fmt.Errorf("tidying %s.pack: %w", filepath.Base(e.p.path), err)
		}
	}
	path, err := pw.finish()
	if err != nil {
		return err
	}
	proc.CrashPoint("pack:tidied")
	for _, c := range merge {
		if c.path == path {
			continue // the same objects, merged to the same pack
		}
		// The index first: without it the pack is not read.
		for _, ext := range []string{".idx", ".pack", ".rev"} {
			if ext == ".rev" && !exists(c.path+ext) {
				continue
			}
			if err := os.Remove(c.path + ext); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	o.mu.Lock()
	o.scanned = false // list them again at the next read
	o.mu.Unlock()
	return nil
}

// all reads the whole index: every object of the pack, where its entry
// starts and ends, and its CRC-32.
func (p *pack) all() ([]packIndexEntry, error) {
	if err := p.openPack(); err != nil {
		return nil, err
	}
	sz := int64(p.algo.size())
	n := int64(p.count)
	list := make([]packIndexEntry, n)
	var table []byte
	if p.v2 {
		// The ids, then their CRC-32s: read in one go.
		table = make([]byte, n*(sz+4))
		if _, err := p.idx.ReadAt(table, p.nameAt(0)); err != nil {
			return nil, fmt.Errorf("%s.idx: %w", p.path, err)
		}
	}
	name := make([]byte, sz)
	for i := range list {
		if p.v2 {
			name = table[int64(i)*sz : int64(i+1)*sz]
			list[i].crc = binary.BigEndian.Uint32(table[n*sz+int64(i)*4:])
		} else if _, err := p.idx.ReadAt(name, p.nameAt(uint32(i))); err != nil {
			return nil, fmt.Errorf("%s.idx: %w", p.path, err)
		}
		list[i].id = hashFromBytes(p.algo, name)
		off, err := p.offset(uint32(i))
		if err != nil {
			return nil, fmt.Errorf("%s.idx: %w", p.path, err)
		}
		list[i].off = off
	}
	// An entry ends where the next in the pack starts.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(list[a].off, list[b].off) })
	for k, i := range order {
		list[i].end = p.size - sz
		if k+1 < len(order) {
			list[i].end = list[order[k+1]].off
		}
	}
	return list, nil
}

// close lets go of a pack's files: one opened outside the odb's list (a
// tidy's), or one a listing no longer finds (tidied away). A process that
// runs for hours (a supervisor) otherwise kept every pack it had read
// mapped, thousands after a few hundred tasks, each holding its deleted
// file's space on disk and a mapping toward the system's limit. A reader
// that still holds the pack finds it gone, as one whose files went before
// it opened them, and lists the packs again; what it was reading is
// unmapped once that read is done (packFile.Close).
func (p *pack) close() {
	p.gone.Store(true)
	p.once.Do(func() { p.err = fs.ErrNotExist })
	p.pkOnce.Do(func() { p.pkErr = fs.ErrNotExist })
	if p.idx != nil {
		p.idx.Close()
	}
	if p.pk != nil {
		p.pk.Close()
	}
}
