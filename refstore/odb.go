package refstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// objType is a git object type, numbered as in pack files.
type objType byte

const (
	objCommit   objType = 1
	objTree     objType = 2
	objBlob     objType = 3
	objTag      objType = 4
	objOfsDelta objType = 6
	objRefDelta objType = 7
)

func (t objType) String() string {
	switch t {
	case objCommit:
		return "commit"
	case objTree:
		return "tree"
	case objBlob:
		return "blob"
	case objTag:
		return "tag"
	}
	return "type-" + strconv.Itoa(int(t))
}

func parseObjType(s string) (objType, bool) {
	switch s {
	case "commit":
		return objCommit, true
	case "tree":
		return objTree, true
	case "blob":
		return objBlob, true
	case "tag":
		return objTag, true
	}
	return 0, false
}

// errNoObject is wrapped by reads of an object the repository does not
// have.
var errNoObject = errors.New("object not found")

// odb is a repository's object database: loose objects and packs in its
// objects directory and in its alternates. It reads the formats directly
// (zlib, pack index version 1 and 2, offset and reference deltas) so that
// a command opens no more than the files it needs: an object is found in
// a pack by a binary search of the pack's index on disk, not by loading
// the index.
//
// It is safe for concurrent use.
type odb struct {
	// dirs are the object directories, the repository's own first (where
	// new objects go), then its alternates.
	dirs []string
	algo hashAlgo

	// git reads and writes objects through git's plumbing: every object
	// when plumbing is set, else only those a partial clone lacks, which
	// git fetches from the promisor remote. promisorOf says, when first
	// asked, whether this is a partial clone; fill, run at the first
	// object found missing there, fetches in one go what the clone lacks
	// of the blackboard.
	git          *gitObjects
	plumbing     bool
	promisorOf   func() bool
	promisorOnce sync.Once
	isPromisor   bool
	fill         func()
	fillOnce     sync.Once

	mu      sync.Mutex
	packs   []*pack
	scanned bool
	cache   map[cacheKey]cachedObject // resolved delta bases
	cached  int                       // bytes held by cache

	// levelOf reads the zlib level for new loose objects; it is asked
	// once, at the first write.
	levelOf   func() int
	levelOnce sync.Once
	level     int

	held     heldObjects // objects written while held (see Repo.Hold)
	tidyLock string      // the lock file of tidyPacks
}

// compression is the zlib level of new loose objects.
func (o *odb) compression() int {
	o.levelOnce.Do(func() {
		if o.levelOf != nil {
			o.level = o.levelOf()
		}
	})
	return o.level
}

// maxCached bounds the memory kept for delta bases.
const maxCached = 32 << 20

type cacheKey struct {
	p   *pack
	off int64
}

type cachedObject struct {
	t    objType
	data []byte
}

// newODB opens the object database whose own directory is objects,
// honouring GIT_OBJECT_DIRECTORY and GIT_ALTERNATE_OBJECT_DIRECTORIES as git
// does (git sets both for hooks that run during a push).
func newODB(objects string, algo hashAlgo) *odb {
	if d := os.Getenv("GIT_OBJECT_DIRECTORY"); d != "" {
		objects = d
	}
	o := &odb{algo: algo, cache: map[cacheKey]cachedObject{}}
	seen := map[string]bool{}
	var add func(dir string, depth int)
	add = func(dir string, depth int) {
		dir = filepath.Clean(dir)
		if seen[dir] || depth > 5 {
			return
		}
		seen[dir] = true
		o.dirs = append(o.dirs, dir)
		b, err := ReadFile(filepath.Join(dir, "info", "alternates"))
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || line[0] == '#' {
				continue
			}
			if line[0] == '"' {
				if u, err := strconv.Unquote(line); err == nil {
					line = u
				}
			}
			add(absFrom(dir, line), depth+1)
		}
	}
	add(objects, 0)
	for _, d := range filepath.SplitList(os.Getenv("GIT_ALTERNATE_OBJECT_DIRECTORIES")) {
		if d != "" {
			add(d, 1)
		}
	}
	return o
}

// promisor reports whether objects may be missing because a promisor
// remote holds them.
func (o *odb) promisor() bool {
	o.promisorOnce.Do(func() {
		if o.promisorOf != nil {
			o.isPromisor = o.promisorOf()
		}
	})
	return o.isPromisor
}

// read returns an object's type and contents.
func (o *odb) read(id Hash) (objType, []byte, error) { return o.readMax(id, noLimit) }

// readMax is read with a cap: an object of more than max bytes is refused
// with a *TooLargeError before it is inflated (see the limit type). A
// negative max reads objects of any size.
func (o *odb) readMax(id Hash, max int64) (objType, []byte, error) {
	t, data, err := o.readUnchecked(id, max)
	if err == nil {
		err = checkName(o.algo, id, t, data)
	}
	return t, data, err
}

func (o *odb) readUnchecked(id Hash, max int64) (objType, []byte, error) {
	if o.plumbing {
		return o.readThroughGit(id, max)
	}
	if t, data, ok := o.held.get(id); ok {
		return t, slices.Clone(data), limit{id, max}.check(t.String(), int64(len(data)))
	}
	if id.algo() != o.algo {
		return 0, nil, fmt.Errorf("%w: %s is not a %s id", errNoObject, id, o.algo)
	}
	lim := limit{id, max}
	packs, err := o.packList(false)
	if err != nil {
		return 0, nil, err
	}
	t, data, ok, _, err := o.readIn(id, packs, lim)
	if ok || err != nil {
		return t, data, err
	}
	// A concurrent gc may have moved the object from a loose file into a
	// pack this process has not seen: look again.
	if t, data, ok, err = o.readListed(id, lim); ok || err != nil {
		return t, data, err
	}
	if !o.promisor() {
		return 0, nil, fmt.Errorf("%w: %s", errNoObject, id)
	}
	// A partial clone lacks it: fetch what the clone lacks of the
	// blackboard, in one go and once per process, and look again; then
	// ask git, which fetches any other object from the promisor remote.
	if o.fillNow() {
		if t, data, ok, err = o.readListed(id, lim); ok || err != nil {
			return t, data, err
		}
	}
	return o.readThroughGit(id, max)
}

// fillNow runs fill unless it has run, and reports whether it ran now.
func (o *odb) fillNow() bool {
	ran := false
	if o.fill != nil {
		o.fillOnce.Do(func() { o.fill(); ran = true })
	}
	return ran
}

// readThroughGit reads an object with git cat-file, which fetches what a
// partial clone lacks from its promisor remote.
func (o *odb) readThroughGit(id Hash, max int64) (objType, []byte, error) {
	t, data, ok, err := o.git.read(id, max)
	if err != nil {
		return 0, nil, err
	}
	if !ok {
		return 0, nil, fmt.Errorf("%w: %s", errNoObject, id)
	}
	return t, data, nil
}

// has reports whether the object exists, without reading it.
func (o *odb) has(id Hash) bool {
	if o.plumbing {
		ok, err := o.git.has(id)
		return ok && err == nil
	}
	if id.algo() != o.algo {
		return false
	}
	if _, _, ok := o.held.get(id); ok || o.hasLocal(id) {
		return true
	}
	if o.promisor() {
		ok, err := o.git.has(id)
		return ok && err == nil
	}
	return false
}

func (o *odb) readLoose(id Hash, lim limit) (objType, []byte, bool, error) {
	hex := id.String()
	for _, d := range o.dirs {
		f, err := openRead(filepath.Join(d, hex[:2], hex[2:]))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, nil, false, err
		}
		t, data, err := inflateLoose(f, lim)
		f.Close()
		var big *TooLargeError
		if errors.As(err, &big) {
			return 0, nil, false, err
		}
		if err != nil {
			return 0, nil, false, fmt.Errorf("loose object %s: %w", id, err)
		}
		return t, data, true, nil
	}
	return 0, nil, false, nil
}

// inflateLoose decodes a loose object file: zlib over "TYPE SIZE\0DATA".
// The size in the header is checked against lim before anything past the
// header is inflated, and against what the file can hold: deflate makes
// at most about 1032 bytes of each byte, so a header claiming more than
// that is a corrupt (or crafted) file, not one to allocate for.
func inflateLoose(f *os.File, lim limit) (objType, []byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, nil, err
	}
	// Small files, the usual case, are read in one go as before.
	var src io.Reader = f
	if fi.Size() > 64<<10 {
		src = bufio.NewReaderSize(f, 64<<10)
	} else {
		raw := make([]byte, fi.Size())
		if _, err := io.ReadFull(f, raw); err != nil {
			return 0, nil, err
		}
		src = bytes.NewReader(raw)
	}
	zr, err := newInflater(src)
	if err != nil {
		return 0, nil, err
	}
	defer putInflater(zr)
	br := bufio.NewReaderSize(zr, 64)
	header, err := br.ReadString(0)
	if err != nil {
		return 0, nil, fmt.Errorf("no header: %w", err)
	}
	kind, sizeText, ok := strings.Cut(strings.TrimSuffix(header, "\x00"), " ")
	t, known := parseObjType(kind)
	size, serr := strconv.ParseInt(sizeText, 10, 64)
	if !ok || !known || serr != nil || size < 0 {
		return 0, nil, fmt.Errorf("bad header %q", header)
	}
	if err := lim.check(t.String(), size); err != nil {
		return 0, nil, err
	}
	if size > fi.Size()*1032+1<<10 {
		return 0, nil, fmt.Errorf("header claims %d bytes in a file of %d", size, fi.Size())
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(br, data); err != nil {
		return 0, nil, fmt.Errorf("short object: %w", err)
	}
	return t, data, nil
}

// unpack reads the object at off in p, resolving its chain of deltas.
// Under a limit, every entry of the chain is held to it before it is
// inflated: the object's own size (a delta's result size, which a delta
// states first), each delta, and each base. Git keeps a delta only when
// it is smaller than the object it makes, and takes bases within a few
// times the object's size, so a legitimate object well within the limit
// has a chain within it too. As git does, the chain is walked first by
// its entries' headers, then the base is read and each delta inflated
// and applied in turn: what is held at once is the base, one delta and
// its result, however long the chain. A reference delta's base is looked
// for in the same pack only, as git looks for it (a pack git keeps is
// never thin): no chain leads from pack to pack, and so round a cycle.
func (o *odb) unpack(p *pack, off int64, lim limit) (objType, []byte, error) {
	var keys []cacheKey // the deltas, the object asked for first
	var t objType
	var data []byte
	for {
		key := cacheKey{p, off}
		o.mu.Lock()
		c, hit := o.cache[key]
		o.mu.Unlock()
		if hit {
			t, data = c.t, c.data
			if err := lim.check(t.String(), int64(len(data))); err != nil {
				return 0, nil, err
			}
			if len(keys) == 0 {
				// The caller owns what it gets; the cache keeps its copy.
				data = slices.Clone(data)
			}
			break
		}
		e, err := p.entry(off, lim, len(keys) == 0, false)
		if err != nil {
			return 0, nil, err
		}
		if e.t != objOfsDelta && e.t != objRefDelta {
			t, data = e.t, e.data
			break
		}
		keys = append(keys, key)
		if len(keys) > 10000 {
			return 0, nil, errors.New("delta chain too long")
		}
		if e.t == objOfsDelta {
			off = e.base
			continue
		}
		boff, ok, err := p.find(e.baseID)
		if err != nil {
			return 0, nil, err
		}
		if !ok && p.gone.Load() {
			return 0, nil, errPackClosed
		}
		if !ok {
			return 0, nil, fmt.Errorf("delta base %s is not in the pack", e.baseID)
		}
		off = boff
	}
	for i := len(keys) - 1; i >= 0; i-- {
		e, err := p.entry(keys[i].off, lim, i == 0, true)
		if err != nil {
			return 0, nil, err
		}
		if data, err = applyDelta(data, e.data); err != nil {
			return 0, nil, err
		}
		if i > 0 {
			// Only bases: the object asked for goes to the caller.
			o.remember(keys[i], t, data)
		}
	}
	return t, data, nil
}

// remember keeps a resolved delta base for the next object built on it.
func (o *odb) remember(key cacheKey, t objType, data []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cached+len(data) > maxCached {
		clear(o.cache)
		o.cached = 0
	}
	if _, ok := o.cache[key]; !ok {
		o.cache[key] = cachedObject{t, data}
		o.cached += len(data)
	}
}
