package refstore

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Object modes used in trees.
const (
	ModeFile = "100644"
	ModeTree = "40000"
)

// Hash is a git object id.
type Hash = plumbing.Hash

// ParseHash reads a full hexadecimal object id.
func ParseHash(s string) (Hash, bool) {
	if !plumbing.IsHash(s) {
		return Hash{}, false
	}
	return plumbing.NewHash(s), true
}

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
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	clean := strings.NewReplacer("<", "", ">", "", "\n", " ", "\x00", "")
	return fmt.Sprintf("%s <%s> %d %c%02d%02d", clean.Replace(s.Name), clean.Replace(s.Email), s.When.Unix(), sign, off/3600, off%3600/60)
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

func (r *Repo) readObject(id Hash, want plumbing.ObjectType) ([]byte, error) {
	obj, err := r.store.EncodedObject(want, id)
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", want, id, err)
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

// writeObject stores a loose object the way git does: deflated, written to
// a temporary file beside its final place, then renamed into it. Writing it
// here rather than through go-git's object writer halves the cost of an
// update, most of which is object writes.
func (r *Repo) writeObject(t plumbing.ObjectType, data []byte) (Hash, error) {
	header := fmt.Sprintf("%s %d\x00", t, len(data))
	h := sha1.New()
	h.Write([]byte(header))
	h.Write(data)
	var id Hash
	copy(id[:], h.Sum(nil))
	hex := id.String()
	dir := filepath.Join(r.CommonDir, "objects", hex[:2])
	final := filepath.Join(dir, hex[2:])
	if _, err := os.Stat(final); err == nil {
		return id, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Hash{}, err
	}
	f, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return Hash{}, err
	}
	defer os.Remove(f.Name())
	// One compressor serves every object of the process: allocating a
	// fresh one per object costs more than compressing.
	if r.zw == nil {
		r.zw, _ = zlib.NewWriterLevel(f, zlib.BestSpeed)
	} else {
		r.zw.Reset(f)
	}
	zw := r.zw
	_, werr := zw.Write([]byte(header))
	if werr == nil {
		_, werr = zw.Write(data)
	}
	if err := zw.Close(); werr == nil {
		werr = err
	}
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = os.Chmod(f.Name(), 0o444)
	}
	if werr == nil {
		werr = os.Rename(f.Name(), final)
	}
	if werr != nil {
		return Hash{}, fmt.Errorf("writing object %s: %w", hex, werr)
	}
	return id, nil
}

// ReadBlob returns a blob's contents.
func (r *Repo) ReadBlob(id Hash) ([]byte, error) {
	return r.readObject(id, plumbing.BlobObject)
}

// WriteBlob stores data as a blob.
func (r *Repo) WriteBlob(data []byte) (Hash, error) {
	return r.writeObject(plumbing.BlobObject, data)
}

// ReadTree returns a tree's entries in tree order.
func (r *Repo) ReadTree(id Hash) ([]TreeEntry, error) {
	data, err := r.readObject(id, plumbing.TreeObject)
	if err != nil {
		return nil, err
	}
	var entries []TreeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+1+20 {
			return nil, fmt.Errorf("tree %s is corrupt", id)
		}
		var h Hash
		copy(h[:], data[nul+1:nul+21])
		entries = append(entries, TreeEntry{Mode: string(data[:sp]), Name: string(data[sp+1 : nul]), ID: h})
		data = data[nul+21:]
	}
	return entries, nil
}

// WriteTree stores a tree. Entries are sorted the way git sorts them, so the
// caller may pass them in any order.
func (r *Repo) WriteTree(entries []TreeEntry) (Hash, error) {
	SortTree(entries)
	var b bytes.Buffer
	for _, e := range entries {
		mode := e.Mode
		if mode == "040000" {
			mode = ModeTree
		}
		b.WriteString(mode)
		b.WriteByte(' ')
		b.WriteString(e.Name)
		b.WriteByte(0)
		b.Write(e.ID[:])
	}
	return r.writeObject(plumbing.TreeObject, b.Bytes())
}

// SortTree sorts entries in git's tree order, where a subtree sorts as if its
// name ended in "/".
func SortTree(entries []TreeEntry) {
	key := func(e TreeEntry) string {
		if e.IsTree() {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
}

// ReadCommit parses a commit object.
func (r *Repo) ReadCommit(id Hash) (*Commit, error) {
	data, err := r.readObject(id, plumbing.CommitObject)
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
			c.Tree = plumbing.NewHash(v)
		case "parent":
			c.Parents = append(c.Parents, plumbing.NewHash(v))
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
	return r.writeObject(plumbing.CommitObject, []byte(b.String()))
}

// HasObject reports whether the object exists.
func (r *Repo) HasObject(id Hash) bool {
	return r.store.HasEncodedObject(id) == nil
}
