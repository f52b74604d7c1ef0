package refstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"
)

// heldObjects are the objects written while a hold is open (Repo.Hold):
// kept in memory, readable by this process, until a flush writes them
// all at once.
type heldObjects struct {
	mu    sync.Mutex
	open  int  // holds open
	wrote bool // a flush of these holds wrote a pack
	objs  map[Hash]heldObject
	order []Hash // as written, for a pack in that order
	size  int    // bytes held
}

// heldMax bounds the memory a hold keeps: past it, what is held is
// written at once (an import of a large board writes several packs). An
// object on disk before a ref names it is harmless: git gc prunes it in
// time if none ever does.
const heldMax = 32 << 20

type heldObject struct {
	t    objType
	data []byte
}

// holding are the object databases holding objects, of every Repo of
// this process: what a git command or a ref move may need is flushed
// first (flushAllHeld), whichever goroutine wrote it and whichever Repo
// it went through. An object written outside any hold, while another
// goroutine holds, is held with that goroutine's.
var holding struct {
	mu   sync.Mutex
	odbs map[*odb]bool
}

// flushAllHeld writes every object held in this process (see Hold).
func flushAllHeld() error {
	holding.mu.Lock()
	list := make([]*odb, 0, len(holding.odbs))
	for o := range holding.odbs {
		list = append(list, o)
	}
	holding.mu.Unlock()
	for _, o := range list {
		if err := o.flush(); err != nil {
			return err
		}
	}
	return nil
}

// get returns a held object; the caller must not change data.
func (h *heldObjects) get(id Hash) (objType, []byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	o, ok := h.objs[id]
	return o.t, o.data, ok
}

// put keeps an object when a hold is open, and reports whether it did.
func (h *heldObjects) put(id Hash, t objType, data []byte) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open == 0 {
		return false
	}
	if _, ok := h.objs[id]; !ok {
		if h.objs == nil {
			h.objs = map[Hash]heldObject{}
		}
		// The writer may reuse its buffer once write returns.
		h.objs[id] = heldObject{t, slices.Clone(data)}
		h.order = append(h.order, id)
		h.size += len(data)
	}
	return true
}

// Hold keeps the objects written from now on in memory, where this
// process reads them, until FlushObjects writes them together: an
// operation's dozen new objects then cost one pack and its index, not a
// file each. The returned function ends the hold; when the last hold ends,
// what is still held is written, and when a flush of these holds wrote a
// pack, the repository's small packs are tidied (tidyPacks). Holds nest
// and may be open in several goroutines at once: a flush writes what all
// of them hold, and what another goroutine wrote meanwhile, outside any
// hold, is held with them. So nothing held is dropped: a reviewer's merge
// lane (a goroutine of its supervisor) wrote a merge commit while the
// supervisor's claim of a review held, and was about to name it to git,
// which found no such object once that hold ended and dropped it. An
// operation that failed before its flush leaves its objects on disk,
// unreachable, as git does; git gc prunes them in time. A repository read
// through git's plumbing writes through it, unheld.
func (r *Repo) Hold() (end func()) {
	o := r.odb
	if o.plumbing {
		return func() {}
	}
	o.held.mu.Lock()
	o.held.open++
	o.held.mu.Unlock()
	holding.mu.Lock()
	if holding.odbs == nil {
		holding.odbs = map[*odb]bool{}
	}
	holding.odbs[o] = true
	holding.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			o.held.mu.Lock()
			o.held.open--
			last := o.held.open == 0
			o.held.mu.Unlock()
			if !last {
				return
			}
			// Best effort: what cannot be written now is written by no
			// one; a git command that names it says so.
			_ = o.flush()
			o.held.mu.Lock()
			tidy := o.held.open == 0 && o.held.wrote
			if o.held.open == 0 {
				// A hold opened meanwhile keeps what was written since.
				o.held.objs, o.held.order, o.held.wrote, o.held.size = nil, nil, false, 0
				holding.mu.Lock()
				delete(holding.odbs, o)
				holding.mu.Unlock()
			}
			o.held.mu.Unlock()
			if tidy {
				// Best effort: a tidy that fails leaves the packs as
				// they were, every object in place.
				_ = o.tidyPacks()
			}
		})
	}
}

// FlushObjects writes the objects held (see Hold) to the object directory:
// one pack when there are more than two, else loose files as git writes
// them. They are all on disk, under their final names, when it returns
// without error; a ref may then point at them.
func (r *Repo) FlushObjects() error { return r.odb.flush() }

func (o *odb) flush() error {
	o.held.mu.Lock()
	ids := append([]Hash(nil), o.held.order...)
	objs := make([]heldObject, len(ids))
	for i, id := range ids {
		objs[i] = o.held.objs[id]
	}
	o.held.mu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	if len(ids) <= 2 {
		for _, x := range objs {
			if _, err := o.writeLoose(x.t, x.data); err != nil {
				return err
			}
		}
	} else if err := o.writePack(ids, objs); err != nil {
		return err
	}
	// Only what was written leaves the hold: another goroutine's objects
	// held since are flushed by its own flush.
	o.held.mu.Lock()
	for i, id := range ids {
		if _, ok := o.held.objs[id]; ok {
			delete(o.held.objs, id)
			o.held.size -= len(objs[i].data)
		}
	}
	rest := o.held.order[:0]
	for _, id := range o.held.order {
		if _, ok := o.held.objs[id]; ok {
			rest = append(rest, id)
		}
	}
	o.held.order = rest
	o.held.wrote = o.held.wrote || len(ids) > 2
	o.held.mu.Unlock()
	return nil
}

// present reports whether an object is in this repository's own object
// directory already, loose or in a pack known to this process (packs are
// not listed again for it: an object missed that way is only written
// twice). Like git, it freshens what it finds (the loose file's time, or
// the pack's, once a process): git gc keeps unreachable objects that are
// recent, so an old unreachable copy that a new commit is about to name is
// not pruned before the ref names it. What cannot be freshened counts as
// absent, and is written.
func (o *odb) present(id Hash) bool {
	hex := id.String()
	loose := filepath.Join(o.dirs[0], hex[:2], hex[2:])
	if _, err := os.Stat(loose); err == nil {
		now := time.Now()
		return os.Chtimes(loose, now, now) == nil
	}
	return o.inPacks(id, true)
}

// rescanPacks has the next look at the packs list them again.
func (o *odb) rescanPacks() {
	o.mu.Lock()
	o.scanned = false
	o.mu.Unlock()
}

// inPacks reports whether one of the packs known to this process holds
// id; with freshen, only one whose time this process could set (see
// present).
func (o *odb) inPacks(id Hash, freshen bool) bool {
	packs, err := o.packList(false)
	if err != nil {
		return false
	}
	found, _ := o.findIn(packs, id, freshen)
	return found
}

// findIn reports whether one of packs holds the object (see inPacks), and
// whether a pack of them was gone when it came to be read (tidied away
// since the list was made).
func (o *odb) findIn(packs []*pack, id Hash, freshen bool) (found, vanished bool) {
	for _, p := range packs {
		if errors.Is(p.open(), fs.ErrNotExist) {
			vanished = true
			continue
		}
		if _, ok, err := p.find(id); ok && err == nil && (!freshen || p.freshen()) {
			return true, vanished
		}
	}
	return false, vanished
}

// freshen sets the pack's time to now, once a process.
func (p *pack) freshen() bool {
	if p.fresh.Load() {
		return true
	}
	// A cruft pack's objects carry their own times (its .mtimes), which
	// git gc reads instead of the pack's: its time keeps none of them.
	// An object found only there is written again, as git writes it
	// (freshen_packed_object skips cruft packs).
	if exists(p.path + ".mtimes") {
		return false
	}
	now := time.Now()
	if os.Chtimes(p.path+".pack", now, now) != nil {
		return false
	}
	p.fresh.Store(true)
	return true
}

// name is the id of an object of type t holding data, and its header.
func (o *odb) name(t objType, data []byte) (Hash, string) {
	header := t.String() + " " + strconv.Itoa(len(data)) + "\x00"
	h := o.algo.new()
	io.WriteString(h, header)
	h.Write(data)
	var sum [sha256Size]byte
	return hashFromBytes(o.algo, h.Sum(sum[:0])), header
}

// write stores an object: held in memory while a hold is open (see Hold),
// else as a loose object.
func (o *odb) write(t objType, data []byte) (Hash, error) {
	if o.plumbing {
		return o.git.write(t, data, o.algo)
	}
	id, header := o.name(t, data)
	if o.present(id) {
		// Already here: an operation's unchanged subtrees, a state built
		// again to verify a fetched commit (whose objects came packed).
		return id, nil
	}
	if o.held.put(id, t, data) {
		o.held.mu.Lock()
		full := o.held.size > heldMax
		o.held.mu.Unlock()
		if full {
			return id, o.flush()
		}
		return id, nil
	}
	return o.storeLoose(id, header, data)
}

// writeLoose stores data as a loose object of type t the way git does: the
// header and data deflated into a temporary file beside its final place,
// which is then renamed into place. An object that exists already is not
// written again.
func (o *odb) writeLoose(t objType, data []byte) (Hash, error) {
	id, header := o.name(t, data)
	if o.present(id) {
		return id, nil
	}
	return o.storeLoose(id, header, data)
}

// storeLoose is writeLoose once the object is known to be missing.
func (o *odb) storeLoose(id Hash, header string, data []byte) (Hash, error) {
	hex := id.String()
	dir := filepath.Join(o.dirs[0], hex[:2])
	final := filepath.Join(dir, hex[2:])
	buf := deflate(o.compression(), header, data)
	defer putBuffer(buf)
	f, tmp, err := createTemp(dir, "tmp_obj_")
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(dir, 0o755); err == nil {
			f, tmp, err = createTemp(dir, "tmp_obj_")
		}
	}
	if err != nil {
		return Hash{}, fmt.Errorf("writing object %s: %w", hex, err)
	}
	_, err = f.Write(buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		os.Remove(tmp)
		return Hash{}, fmt.Errorf("writing object %s: %w", hex, err)
	}
	return id, nil
}

// createTemp makes a new read-only file in dir for an object or a pack
// being written, named as git names its own (tmp_obj_*, tmp_pack_*,
// tmp_idx_*), which git gc removes when a killed process leaves one.
func createTemp(dir, prefix string) (*os.File, string, error) {
	for range 100 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := openFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", fmt.Errorf("no free temporary name in %s", dir)
}
