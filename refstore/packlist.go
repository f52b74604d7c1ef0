package refstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Listing the packs. A process lists the packs once and reads from that
// list; an object it does not find there may be in a pack written since,
// so it lists them again before it says the object is missing. Another
// process may tidy the packs meanwhile (tidyPacks, or git's repack): it
// writes the pack it merges into, whole, before it removes the packs it
// merged. A listing caught between the two steps can hold neither: it
// read the directory before the new pack was there, and looked at a
// merged pack's files after they were gone. So one listing more is no
// answer, and neither is a listing that found a pack gone, while it was
// made or when it came to be read: the pack the gone one was merged into
// may have gone too, by the next listing, which is then alike. Two
// listings in a row alike, with no pack gone in either, are an answer.
// The second began after the first ended, so it holds any pack that was
// written while the first was made.

// maxRelists bounds how many times a look lists the packs again.
const maxRelists = 8

// relist lists the packs again and gives each listing to look, until look
// finds the object or two listings in a row are alike with no pack gone
// in either (see above). A missing object costs two listings.
func (o *odb) relist(look func(packs []*pack) (found, vanished bool, err error)) (bool, error) {
	var last []*pack
	lastGone := true
	for range maxRelists {
		packs, gone, err := o.listPacks(true)
		if err != nil {
			return false, err
		}
		if afterRelist != nil {
			afterRelist()
		}
		found, vanished, err := look(packs)
		if found || err != nil {
			return found, err
		}
		gone = gone || vanished
		if !gone && !lastGone && slices.Equal(packs, last) {
			break
		}
		last, lastGone = packs, gone
	}
	return false, nil
}

// readListed reads the object from the packs listed again (relist).
func (o *odb) readListed(id Hash, lim limit) (t objType, data []byte, ok bool, err error) {
	ok, err = o.relist(func(packs []*pack) (found, vanished bool, err error) {
		t, data, found, vanished, err = o.readIn(id, packs, lim)
		return found, vanished, err
	})
	return t, data, ok, err
}

// readIn looks in packs first, as git does: git-liza writes an
// operation's objects as a pack, and a mapped index answers without a
// system call where a loose object's absence costs one.
func (o *odb) readIn(id Hash, packs []*pack, lim limit) (t objType, data []byte, ok, vanished bool, err error) {
	t, data, ok, vanished, err = o.readPacked(id, packs, lim)
	if ok || err != nil {
		return t, data, ok, vanished, err
	}
	t, data, ok, err = o.readLoose(id, lim)
	return t, data, ok, vanished, err
}

// hasLocal reports whether the object is in the object directories: in
// the packs as last listed, loose, or in the packs listed again (relist).
func (o *odb) hasLocal(id Hash) bool {
	packs, err := o.packList(false)
	if err != nil {
		return false
	}
	if found, _ := o.findIn(packs, id, false); found || o.hasLoose(id) {
		return true
	}
	found, _ := o.relist(func(packs []*pack) (bool, bool, error) {
		found, vanished := o.findIn(packs, id, false)
		return found || o.hasLoose(id), vanished, nil
	})
	return found
}

// hasLoose reports whether the object is a loose file.
func (o *odb) hasLoose(id Hash) bool {
	hex := id.String()
	for _, d := range o.dirs {
		if _, err := os.Stat(filepath.Join(d, hex[:2], hex[2:])); err == nil {
			return true
		}
	}
	return false
}

// packList returns the packs of every object directory, newest first,
// looking at the directories again when rescan is set. The list returned
// is never changed afterwards (see writePack): callers read it unlocked.
func (o *odb) packList(rescan bool) ([]*pack, error) {
	packs, _, err := o.listPacks(rescan)
	return packs, err
}

// listPacks is packList, and reports whether a pack whose index was listed
// was gone when its pack file was looked at: tidied away while the list
// was made.
func (o *odb) listPacks(rescan bool) (packs []*pack, gone bool, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.scanned && !rescan {
		return o.packs, false, nil
	}
	known := map[string]*pack{}
	for _, p := range o.packs {
		known[p.path] = p
	}
	type found struct {
		p     *pack
		mtime int64
	}
	var list []found
	for _, d := range o.dirs {
		names, err := filepath.Glob(filepath.Join(d, "pack", "pack-*.idx"))
		if err != nil {
			return nil, false, err
		}
		if afterGlob != nil {
			afterGlob()
		}
		for _, idx := range names {
			path := strings.TrimSuffix(idx, ".idx")
			fi, err := os.Stat(path + ".pack")
			if err != nil {
				gone = gone || errors.Is(err, fs.ErrNotExist)
				continue
			}
			p := known[path]
			if p == nil || p.gone.Load() {
				p = &pack{path: path, algo: o.algo}
			}
			list = append(list, found{p, fi.ModTime().UnixNano()})
		}
	}
	slices.SortStableFunc(list, func(a, b found) int {
		switch {
		case a.mtime > b.mtime:
			return -1
		case a.mtime < b.mtime:
			return 1
		}
		return 0
	})
	// A new list, never the old one changed in place: readers of other
	// goroutines go on with the list they were given.
	packs = make([]*pack, 0, len(list))
	for _, f := range list {
		packs = append(packs, f.p)
	}
	// What the listing no longer finds was tidied away: let go of.
	for _, p := range o.packs {
		if !slices.Contains(packs, p) {
			p.close()
		}
	}
	o.packs, o.scanned = packs, true
	return o.packs, gone, nil
}

// readPacked looks in packs. vanished reports a pack listed that was gone
// when it came to be read.
func (o *odb) readPacked(id Hash, packs []*pack, lim limit) (t objType, data []byte, ok, vanished bool, err error) {
	for _, p := range packs {
		if errors.Is(p.open(), fs.ErrNotExist) {
			vanished = true // tidied away since the list was made
			continue
		}
		off, ok, err := p.find(id)
		if err != nil {
			return 0, nil, false, vanished, err
		}
		if !ok {
			continue
		}
		t, data, err := o.unpack(p, off, lim)
		var big *TooLargeError
		if errors.As(err, &big) {
			return 0, nil, false, vanished, err
		}
		if errors.Is(err, fs.ErrNotExist) {
			vanished = true // its .pack tidied away since the index was read
			continue
		}
		if err != nil {
			return 0, nil, false, vanished, fmt.Errorf("object %s in %s.pack: %w", id, filepath.Base(p.path), err)
		}
		return t, data, true, vanished, nil
	}
	return 0, nil, false, vanished, nil
}

// afterGlob, when set (by a test), runs each time the packs are listed,
// after a directory's indexes are read and before their packs are looked at.
var afterGlob func()

// afterRelist, when set (by a test), runs each time a read has listed the
// packs again, before it looks in them.
var afterRelist func()
