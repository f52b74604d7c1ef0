package refstore

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Object modes used in trees.
const (
	ModeFile = "100644"
	ModeTree = "40000"
)

// TreeEntry is one entry of a tree object.
type TreeEntry struct {
	Mode string
	Name string
	ID   Hash
}

// IsTree reports whether the entry names a subtree.
func (e TreeEntry) IsTree() bool { return e.Mode == ModeTree || e.Mode == "040000" }

// Commit is the part of a commit object git-liza reads.
type Commit struct {
	ID        Hash
	Tree      Hash
	Parents   []Hash
	Author    Signature
	Committer Signature
	Message   string
}

// Signature is an author or committer line.
type Signature struct {
	Name  string
	Email string
	When  time.Time
}

func (s Signature) encode() string {
	_, off := s.When.Zone()
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	b := make([]byte, 0, len(s.Name)+len(s.Email)+32)
	b = appendIdentity(b, s.Name)
	b = append(b, " <"...)
	b = appendIdentity(b, s.Email)
	b = append(b, "> "...)
	b = strconv.AppendInt(b, s.When.Unix(), 10)
	b = append(b, ' ', sign)
	b = appendTwoDigits(b, off/3600)
	b = appendTwoDigits(b, off%3600/60)
	return string(b)
}

// appendIdentity appends a name or an email as a signature line may hold
// it: without '<', '>' or NUL, a newline made a space.
func appendIdentity(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '<', '>', 0:
		case '\n':
			b = append(b, ' ')
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendTwoDigits appends n, at least two digits (as %02d).
func appendTwoDigits(b []byte, n int) []byte {
	if n < 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, int64(n), 10)
}

func parseSignature(s string) Signature {
	var sig Signature
	lt, gt := strings.IndexByte(s, '<'), strings.LastIndexByte(s, '>')
	if lt < 0 || gt < lt {
		sig.Name = s
		return sig
	}
	sig.Name = strings.TrimSpace(s[:lt])
	sig.Email = s[lt+1 : gt]
	f := strings.Fields(s[gt+1:])
	if len(f) >= 1 {
		if sec, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			loc := time.UTC
			if len(f) >= 2 && len(f[1]) == 5 {
				h, _ := strconv.Atoi(f[1][1:3])
				m, _ := strconv.Atoi(f[1][3:5])
				off := h*3600 + m*60
				if f[1][0] == '-' {
					off = -off
				}
				loc = time.FixedZone(f[1], off)
			}
			sig.When = time.Unix(sec, 0).In(loc)
		}
	}
	return sig
}

// noLimit is the cap of a read that takes an object of any size.
const noLimit = -1

// TooLargeError is what a capped read (ReadBlobMax, ReadTreeMax,
// ReadCommitMax) returns for an object larger than its cap. The object's
// size was read from its header: the object itself was not inflated.
type TooLargeError struct {
	ID   Hash
	Kind string // blob, tree, commit, or object for a delta's result
	Size int64
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s %s is %d bytes, over the cap of %s", e.Kind, e.ID.String()[:12], e.Size, ByteSize(e.Max))
}

// ByteSize writes a size for people: in GiB, MiB or KiB when it is a whole
// number of them, else in bytes.
func ByteSize(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// limit is the cap of one read: the object asked for (for messages) and
// the most bytes it, and anything it is built from in a pack, may hold;
// negative for no cap.
type limit struct {
	id  Hash
	max int64
}

// check refuses size, of an object of kind, when it is over the cap.
func (l limit) check(kind string, size int64) error {
	if l.max >= 0 && size > l.max {
		return &TooLargeError{ID: l.id, Kind: kind, Size: size, Max: l.max}
	}
	return nil
}

func (r *Repo) readObject(id Hash, want objType) ([]byte, error) {
	return r.readObjectMax(id, want, noLimit)
}

// readObjectMax reads an object of type want holding at most max bytes
// (any size when max is negative). An object over the cap is refused
// with a *TooLargeError (wrapped) before it is read.
func (r *Repo) readObjectMax(id Hash, want objType, max int64) ([]byte, error) {
	t, data, err := r.odb.readMax(id, max)
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", want, id, err)
	}
	if t != want {
		return nil, fmt.Errorf("reading %s %s: it is a %s", want, id, t)
	}
	return data, nil
}

// looseCompression is the zlib level for loose objects: core.looseCompression,
// else core.compression, as git reads them. Unset, git-liza stores its
// objects uncompressed: they are small, most are replaced by the next
// operation, and the first gc packs them (with deltas, which compress the
// blackboard's history far better than zlib does one object at a time),
// while a compressor costs a short-lived process more than the bytes it
// saves.
func (r *Repo) looseCompression() int {
	for _, key := range []string{"core.looseCompression", "core.compression"} {
		v, ok := r.Config(key)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			continue
		}
		if n == -1 {
			return zlib.DefaultCompression
		}
		if n >= 0 && n <= 9 {
			return n
		}
	}
	return zlib.NoCompression
}

// ReadBlob returns a blob's contents.
func (r *Repo) ReadBlob(id Hash) ([]byte, error) {
	return r.readObject(id, objBlob)
}

// ReadBlobMax is ReadBlob for a blob of at most max bytes: a larger one
// is refused, with a *TooLargeError, on the size its header states and
// without being inflated. It is for objects whose size an adversary
// chooses and a reader has no use for beyond a bound (the blackboard's
// files); code is read with ReadBlob.
func (r *Repo) ReadBlobMax(id Hash, max int64) ([]byte, error) {
	return r.readObjectMax(id, objBlob, max)
}

// WriteBlob stores data as a blob.
func (r *Repo) WriteBlob(data []byte) (Hash, error) {
	return r.odb.write(objBlob, data)
}

// ReadTree returns a tree's entries in tree order.
func (r *Repo) ReadTree(id Hash) ([]TreeEntry, error) { return r.ReadTreeMax(id, noLimit) }

// ReadTreeMax is ReadTree for a tree object of at most max bytes (see
// ReadBlobMax); a negative max takes any size.
func (r *Repo) ReadTreeMax(id Hash, max int64) ([]TreeEntry, error) {
	data, err := r.readObjectMax(id, objTree, max)
	if err != nil {
		return nil, err
	}
	return parseTree(id, data, r.algo)
}

// parseTree reads the entries of tree id, whose content is data.
func parseTree(id Hash, data []byte, algo hashAlgo) ([]TreeEntry, error) {
	// Each entry is "<mode> <name>\0" and the id in binary, as long as
	// the repository's ids.
	end := 1 + algo.size()
	n := 0
	for rest := data; len(rest) > 0; n++ {
		nul := bytes.IndexByte(rest, 0)
		if nul < 0 || len(rest) < nul+end {
			return nil, fmt.Errorf("tree %s is corrupt", id)
		}
		rest = rest[nul+end:]
	}
	entries := make([]TreeEntry, 0, n)
	// The names are cut from one copy of the tree: one allocation, not
	// one a name (a tree of the claim queue has hundreds).
	text := string(data)
	for at := 0; at < len(data); {
		rest := data[at:]
		sp := bytes.IndexByte(rest, ' ')
		nul := bytes.IndexByte(rest, 0)
		if sp < 0 || nul < sp {
			return nil, fmt.Errorf("tree %s is corrupt", id)
		}
		h := hashFromBytes(algo, rest[nul+1:nul+end])
		entries = append(entries, TreeEntry{Mode: internMode(rest[:sp]), Name: text[at+sp+1 : at+nul], ID: h})
		at += nul + end
	}
	return entries, nil
}

// internMode returns the usual modes without allocating.
func internMode(b []byte) string {
	switch string(b) {
	case ModeFile:
		return ModeFile
	case ModeTree:
		return ModeTree
	case "100755":
		return "100755"
	case "120000":
		return "120000"
	case "160000":
		return "160000"
	}
	return string(b)
}

// WriteTree stores a tree. Entries are sorted the way git sorts them, so the
// caller may pass them in any order.
func (r *Repo) WriteTree(entries []TreeEntry) (Hash, error) {
	SortTree(entries)
	size := 0
	for _, e := range entries {
		if err := r.checkFormat(e.ID); err != nil {
			return Hash{}, fmt.Errorf("tree entry %s: %w", e.Name, err)
		}
		size += len(e.Mode) + len(e.Name) + 2 + r.algo.size()
	}
	b := make([]byte, 0, size)
	for _, e := range entries {
		mode := e.Mode
		if mode == "040000" {
			mode = ModeTree
		}
		b = append(b, mode...)
		b = append(b, ' ')
		b = append(b, e.Name...)
		b = append(b, 0)
		b = append(b, e.ID.bytes()...)
	}
	return r.odb.write(objTree, b)
}

// SortTree sorts entries in git's tree order, where a subtree sorts as if its
// name ended in "/".
func SortTree(entries []TreeEntry) {
	if slices.IsSortedFunc(entries, compareEntries) {
		return
	}
	slices.SortFunc(entries, compareEntries)
}

// compareEntries orders two entries as git orders a tree.
func compareEntries(a, b TreeEntry) int {
	return compareTreeNames(a.Name, a.IsTree(), b.Name, b.IsTree())
}

// compareTreeNames compares names in tree order: byte by byte, with a
// tree's name followed by an implicit "/".
func compareTreeNames(a string, aTree bool, b string, bTree bool) int {
	n := min(len(a), len(b))
	if c := strings.Compare(a[:n], b[:n]); c != 0 {
		return c
	}
	next := func(s string, tree bool) int {
		if len(s) > n {
			return int(s[n])
		}
		if tree {
			return '/'
		}
		return 0
	}
	return next(a, aTree) - next(b, bTree)
}

// FindEntry looks name up in entries sorted in tree order, whether it names
// a file or a subtree.
func FindEntry(entries []TreeEntry, name string) (TreeEntry, bool) {
	for _, tree := range []bool{false, true} {
		i, ok := slices.BinarySearchFunc(entries, name, func(e TreeEntry, name string) int {
			return compareTreeNames(e.Name, e.IsTree(), name, tree)
		})
		if ok {
			return entries[i], true
		}
	}
	return TreeEntry{}, false
}

// EditTree applies edits to entries sorted in tree order and returns the
// new list, also sorted: an edit with a zero ID deletes the entry of that
// name, any other adds or replaces it. entries is not changed.
func EditTree(entries []TreeEntry, edits []TreeEntry) []TreeEntry {
	last := make(map[string]TreeEntry, len(edits)) // the last edit of each name wins
	for _, e := range edits {
		last[e.Name] = e
	}
	put := make([]TreeEntry, 0, len(last))
	for _, e := range last {
		if !e.ID.IsZero() {
			put = append(put, e)
		}
	}
	SortTree(put)
	out := make([]TreeEntry, 0, len(entries)+len(put))
	i := 0
	for _, p := range put {
		for ; i < len(entries) && compareEntries(entries[i], p) < 0; i++ {
			if _, ok := last[entries[i].Name]; !ok {
				out = append(out, entries[i])
			}
		}
		out = append(out, p)
	}
	for ; i < len(entries); i++ {
		if _, ok := last[entries[i].Name]; !ok {
			out = append(out, entries[i])
		}
	}
	return out
}

// ReadCommit parses a commit object.
func (r *Repo) ReadCommit(id Hash) (*Commit, error) { return r.ReadCommitMax(id, noLimit) }

// ReadCommitMax is ReadCommit for a commit object of at most max bytes
// (see ReadBlobMax); a negative max takes any size.
func (r *Repo) ReadCommitMax(id Hash, max int64) (*Commit, error) {
	data, err := r.readObjectMax(id, objCommit, max)
	if err != nil {
		return nil, err
	}
	c := &Commit{ID: id}
	header, msg, _ := bytes.Cut(data, []byte("\n\n"))
	c.Message = string(msg)
	for _, line := range strings.Split(string(header), "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "tree":
			c.Tree = mustHash(v)
		case "parent":
			c.Parents = append(c.Parents, mustHash(v))
		case "author":
			c.Author = parseSignature(v)
		case "committer":
			c.Committer = parseSignature(v)
		}
	}
	if c.Tree.IsZero() {
		return nil, fmt.Errorf("commit %s has no tree", id)
	}
	return c, nil
}

// WriteCommit stores a commit with the given tree, parents, author and
// message; the committer is the author.
func (r *Repo) WriteCommit(tree Hash, parents []Hash, author Signature, message string) (Hash, error) {
	for _, id := range append([]Hash{tree}, parents...) {
		if err := r.checkFormat(id); err != nil {
			return Hash{}, fmt.Errorf("writing a commit: %w", err)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", tree)
	for _, p := range parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	sig := author.encode()
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\n%s", sig, sig, message)
	if !strings.HasSuffix(message, "\n") {
		b.WriteByte('\n')
	}
	return r.odb.write(objCommit, []byte(b.String()))
}

// checkFormat refuses an id of the other object format than the
// repository's, which would make a corrupt object.
func (r *Repo) checkFormat(id Hash) error {
	if id.algo() != r.algo {
		return fmt.Errorf("%s is not a %s object id", id, r.algo)
	}
	return nil
}

// HasObject reports whether the object exists.
func (r *Repo) HasObject(id Hash) bool {
	return r.odb.has(id)
}
