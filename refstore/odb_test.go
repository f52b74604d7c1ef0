package refstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// deltaRepo makes a repository whose history is made of many versions of
// a few similar files, so that a repack stores most objects as deltas. It
// is built once per object format and copied for each test: the history
// costs about a hundred git processes.
func deltaRepo(t *testing.T) string {
	t.Helper()
	dir := newRepo(t)
	tmpl, ok := deltaTemplates[mode.format]
	if !ok {
		tmpl = filepath.Join(templateDir(t), "delta-"+mode.format)
		if err := os.CopyFS(tmpl, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		var body strings.Builder
		for i := range 200 {
			fmt.Fprintf(&body, "line %d of a file that changes a little at each commit\n", i)
		}
		text := body.String()
		for i := range 30 {
			text = strings.Replace(text, fmt.Sprintf("line %d ", i*5), fmt.Sprintf("LINE %d (edit %d) ", i*5, i), 1)
			writeFile(t, filepath.Join(tmpl, "big.txt"), text)
			writeFile(t, filepath.Join(tmpl, "sub", fmt.Sprintf("f%d.txt", i%4)), text[:len(text)/(i%4+2)])
			git(t, tmpl, "add", ".")
			git(t, tmpl, "commit", "-q", "-m", fmt.Sprintf("edit %d", i))
		}
		deltaTemplates[mode.format] = tmpl
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dir, os.DirFS(tmpl)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// deltaTemplates are the repositories deltaRepo copies, by object format.
var deltaTemplates = map[string]string{}

// allObjects lists every object git can reach or finds loose or packed.
func allObjects(t *testing.T, dir string) []string {
	t.Helper()
	out := git(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
	return strings.Fields(out)
}

// sameAsGit reads every object with the repository's reader and with
// git cat-file --batch, and fails on any difference.
func sameAsGit(t *testing.T, dir string, r *Repo) {
	t.Helper()
	ids := allObjects(t, dir)
	if len(ids) < 50 {
		t.Fatalf("only %d objects", len(ids))
	}
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(bytes.NewReader(out))
	for _, id := range ids {
		header, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(header)
		size, _ := strconv.Atoi(f[2])
		want := make([]byte, size+1)
		if _, err := br.Read(want[:0]); err != nil {
			t.Fatal(err)
		}
		if _, err := ioReadFull(br, want); err != nil {
			t.Fatal(err)
		}
		typ, data, err := r.odb.read(hashOf(t, id))
		if err != nil {
			t.Fatalf("read %s: %v", id, err)
		}
		if typ.String() != f[1] || !bytes.Equal(data, want[:size]) {
			t.Fatalf("object %s: got %s of %d bytes, git says %s of %d", id, typ, len(data), f[1], size)
		}
		if !r.HasObject(hashOf(t, id)) {
			t.Fatalf("HasObject(%s) is false", id)
		}
	}
}

func ioReadFull(br *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := br.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// deltaCount reports how many objects of the repository's packs are
// stored as deltas, from git verify-pack.
func deltaCount(t *testing.T, dir string) int {
	t.Helper()
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	n := 0
	for _, p := range packs {
		out := git(t, dir, "verify-pack", "-v", p)
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) >= 7 && isID(f[0]) {
				n++ // objects with a base column are deltas
			}
		}
	}
	return n
}

func isID(s string) bool {
	_, ok := ParseHash(s)
	return ok
}

func TestReadLooseObjectsLikeGit(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		dir := deltaRepo(t)
		sameAsGit(t, dir, open(t, dir))
	})
}

func TestReadOffsetDeltasLikeGit(t *testing.T) {
	eachMode(t, fileModes, func(t *testing.T) {
		dir := deltaRepo(t)
		git(t, dir, "repack", "-a", "-d", "-q", "--depth=50", "--window=50")
		if deltaCount(t, dir) < 20 {
			t.Fatal("the repack made too few deltas to test")
		}
		if loose := git(t, dir, "count-objects"); !strings.HasPrefix(loose, "0 objects") {
			git(t, dir, "prune-packed")
		}
		sameAsGit(t, dir, open(t, dir))
	})
}

func TestReadReferenceDeltasLikeGit(t *testing.T) {
	eachMode(t, fileModes, func(t *testing.T) {
		dir := deltaRepo(t)
		// pack-objects without --delta-base-offset writes REF_DELTA entries.
		git(t, dir, "-c", "repack.useDeltaBaseOffset=false", "repack", "-a", "-d", "-q", "-F")
		out := git(t, dir, "verify-pack", "-v", mustGlob(t, filepath.Join(dir, ".git", "objects", "pack", "*.idx")))
		if !strings.Contains(out, "chain length") {
			t.Fatalf("no delta chains in the pack:\n%s", out)
		}
		sameAsGit(t, dir, open(t, dir))
	})
}

func mustGlob(t *testing.T, pattern string) string {
	t.Helper()
	m, _ := filepath.Glob(pattern)
	if len(m) != 1 {
		t.Fatalf("%s matches %v", pattern, m)
	}
	return m[0]
}

// reindex rewrites the repository's pack index with git index-pack and the
// given --index-version.
func reindex(t *testing.T, dir, version string) {
	t.Helper()
	git(t, dir, "repack", "-a", "-d", "-q")
	pk := mustGlob(t, filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	idx := strings.TrimSuffix(pk, ".pack") + ".idx"
	os.Chmod(idx, 0o644)
	os.Remove(idx)
	git(t, dir, "index-pack", "--index-version="+version, "-o", idx, pk)
}

func TestReadIndexVersion1(t *testing.T) {
	eachMode(t, fileModes, func(t *testing.T) {
		dir := deltaRepo(t)
		reindex(t, dir, "1")
		head, _ := os.ReadFile(mustGlob(t, filepath.Join(dir, ".git", "objects", "pack", "*.idx")))
		if bytes.HasPrefix(head, []byte{0xff, 't', 'O', 'c'}) {
			t.Fatal("index-pack wrote a version 2 index")
		}
		sameAsGit(t, dir, open(t, dir))
	})
}

func TestReadLargeOffsets(t *testing.T) {
	eachMode(t, fileModes, func(t *testing.T) {
		dir := deltaRepo(t)
		// Objects past offset 4096 go to the 64-bit offset table. (git
		// refuses an index with every object there.)
		reindex(t, dir, "2,4096")
		idx, _ := os.Stat(mustGlob(t, filepath.Join(dir, ".git", "objects", "pack", "*.idx")))
		n := len(allObjects(t, dir))
		sz := algoOf(mode.format).size()
		if idx.Size() <= int64(8+256*4+(sz+8)*n+2*sz) {
			t.Fatalf("index of %d bytes for %d objects has no 64-bit offsets", idx.Size(), n)
		}
		sameAsGit(t, dir, open(t, dir))
	})
}

func TestReadThroughAlternates(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		src := deltaRepo(t)
		git(t, src, "gc", "-q")
		dir := realpath(t, t.TempDir())
		git(t, dir, "clone", "-q", "--shared", src, "clone")
		dir = filepath.Join(dir, "clone")
		if _, err := os.Stat(filepath.Join(dir, ".git", "objects", "info", "alternates")); err != nil {
			t.Fatal(err)
		}
		r := open(t, dir)
		sameAsGit(t, dir, r)
		// New objects go to the clone, not to the repository it borrows from.
		id, err := r.WriteBlob([]byte("only in the clone\n"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, ".git", "objects", id.String()[:2], id.String()[2:])); err != nil {
			t.Errorf("new object not in the clone: %v", err)
		}
		if _, err := runGit(src, nil, nil, "cat-file", "-e", id.String()); err == nil {
			t.Error("new object visible in the source repository")
		}
	})
}

func TestReadQuarantine(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		dir := newRepo(t)
		q := filepath.Join(dir, ".git", "objects", "incoming-test")
		if err := os.MkdirAll(q, 0o755); err != nil {
			t.Fatal(err)
		}
		// As git runs a pre-receive hook: new objects in a quarantine
		// directory, the repository's own objects as an alternate.
		t.Setenv("GIT_OBJECT_DIRECTORY", q)
		t.Setenv("GIT_ALTERNATE_OBJECT_DIRECTORIES", filepath.Join(dir, ".git", "objects"))
		r := open(t, dir)
		pushed, err := r.WriteBlob([]byte("pushed\n"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(q, pushed.String()[:2], pushed.String()[2:])); err != nil {
			t.Fatalf("object not written to the quarantine: %v", err)
		}
		if b, err := r.ReadBlob(pushed); err != nil || string(b) != "pushed\n" {
			t.Errorf("quarantined blob: %q, %v", b, err)
		}
		head := hashOf(t, git(t, dir, "rev-parse", "HEAD"))
		if _, err := r.ReadCommit(head); err != nil {
			t.Errorf("object of the repository itself: %v", err)
		}
	})
}

func TestReadMissingObject(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		dir := newRepo(t)
		git(t, dir, "gc", "-q")
		r := open(t, dir)
		_, err := r.ReadBlob(missingID())
		if !errors.Is(err, errNoObject) {
			t.Fatalf("missing object: %v", err)
		}
		if r.HasObject(missingID()) {
			t.Error("HasObject of a missing object")
		}
	})
}

// A pack made after the repository was opened, with the object's loose
// copy gone (a concurrent gc), is found.
func TestReadObjectPackedAfterOpen(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		dir := newRepo(t)
		r := open(t, dir)
		head := hashOf(t, git(t, dir, "rev-parse", "HEAD"))
		if _, err := r.ReadCommit(head); err != nil {
			t.Fatal(err)
		}
		blob := hashOf(t, git(t, dir, "rev-parse", "HEAD:README"))
		git(t, dir, "gc", "-q", "--prune=now")
		if b, err := r.ReadBlob(blob); err != nil || string(b) != "hello\n" {
			t.Fatalf("after gc: %q, %v", b, err)
		}
	})
}

func TestCorruptLooseObject(t *testing.T) {
	eachMode(t, fileModes, func(t *testing.T) {
		dir := newRepo(t)
		r := open(t, dir)
		id, err := r.WriteBlob([]byte("soon corrupt\n"))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, ".git", "objects", id.String()[:2], id.String()[2:])
		os.Chmod(path, 0o644)
		raw, _ := os.ReadFile(path)
		for _, bad := range [][]byte{nil, raw[:len(raw)/2], append([]byte{0x78, 0x01}, []byte("not deflate")...)} {
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := open(t, dir).ReadBlob(id); err == nil {
				t.Errorf("a corrupt object of %d bytes reads", len(bad))
			}
		}
	})
}

func TestApplyDelta(t *testing.T) {
	base := []byte("0123456789abcdefghij")
	// base size 20, result size 13: copy 10 bytes at 5, insert "XYZ".
	delta := []byte{20, 13, 0x80 | 0x01 | 0x10, 5, 10, 3, 'X', 'Y', 'Z'}
	got, err := applyDelta(base, delta)
	if err != nil || string(got) != "56789abcdeXYZ" {
		t.Fatalf("applyDelta = %q, %v", got, err)
	}
	for name, d := range map[string][]byte{
		"wrong base size":  {19, 3, 3, 'a', 'b', 'c'},
		"short result":     {20, 4, 3, 'a', 'b', 'c'},
		"copy past base":   {20, 10, 0x80 | 0x01 | 0x10, 15, 10},
		"truncated insert": {20, 3, 5, 'a'},
		"reserved zero":    {20, 1, 0},
		"truncated copy":   {20, 1, 0x80 | 0x01},
		"empty":            {},
	} {
		if _, err := applyDelta(base, d); err == nil {
			t.Errorf("%s: applied", name)
		}
	}
	// A copy with no size bytes copies 0x10000 bytes.
	big := bytes.Repeat([]byte("x"), 0x10000)
	got, err = applyDelta(big, []byte{0x80, 0x80, 0x04, 0x80, 0x80, 0x04, 0x80})
	if err != nil || len(got) != 0x10000 {
		t.Fatalf("size-0 copy: %d bytes, %v", len(got), err)
	}
}

func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("0123456789abcdefghij"), []byte{20, 13, 0x91, 5, 10, 3, 'X', 'Y', 'Z'})
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		out, err := applyDelta(base, delta)
		if err != nil {
			return
		}
		_, rest, _ := deltaSize(delta)
		want, _, _ := deltaSize(rest)
		if uint64(len(out)) != want {
			t.Fatalf("made %d bytes, delta says %d", len(out), want)
		}
	})
}

func TestPackedRefs(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		r, c1, c2 := twoCommits(t)
		dir := r.Dir()
		git(t, dir, "tag", "-a", "-m", "annotated", "v1", c1.String())
		git(t, dir, "update-ref", "refs/liza/state", c1.String())
		git(t, dir, "update-ref", "refs/liza/statex", c2.String())
		git(t, dir, "update-ref", "refs/x/refs/liza/state", c2.String())
		git(t, dir, "pack-refs", "--all")
		if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "liza", "state")); err == nil {
			t.Fatal("pack-refs left the loose ref")
		}
		wantRef(t, r, "refs/liza/state", c1)
		wantRef(t, r, "refs/liza/statex", c2)
		wantRef(t, r, "refs/tags/v1", hashOf(t, git(t, dir, "rev-parse", "refs/tags/v1")))
		wantRef(t, r, "refs/liza/stat", Hash{})
		// A loose ref beats its packed value.
		git(t, dir, "update-ref", "refs/liza/state", c2.String())
		wantRef(t, r, "refs/liza/state", c2)
		// A directory where a ref is looked up is no ref.
		wantRef(t, r, "refs/liza", Hash{})
		for _, bad := range []string{"refs/../config", "HEAD/..", "refs//x", "config", "refs/a\x00b"} {
			if _, _, err := r.ReadRef(bad); err == nil {
				t.Errorf("ReadRef(%q) accepted", bad)
			}
		}
	})
}

// Loose objects are stored uncompressed unless the repository asks for
// compression, and git reads both.
func TestLooseCompression(t *testing.T) {
	eachMode(t, fileModes, func(t *testing.T) {
		big := bytes.Repeat([]byte("a line of the blackboard that repeats\n"), 5000) // several stored blocks
		for _, tc := range []struct {
			config     []string
			compressed bool
		}{
			{nil, false},
			{[]string{"core.compression", "6"}, true},
			{[]string{"core.looseCompression", "1"}, true},
			{[]string{"core.looseCompression", "0"}, false},
		} {
			dir := newRepo(t)
			if tc.config != nil {
				git(t, dir, append([]string{"config"}, tc.config...)...)
			}
			r := open(t, dir)
			for _, data := range [][]byte{nil, []byte("small\n"), big} {
				id, err := r.WriteBlob(data)
				if err != nil {
					t.Fatal(err)
				}
				if got := git(t, dir, "hash-object", "--stdin"); len(data) == 0 && got != id.String() {
					t.Fatalf("empty blob %s, git says %s", id, got)
				}
				cmd := exec.Command("git", "cat-file", "blob", id.String())
				cmd.Dir = dir
				out, err := cmd.Output()
				if err != nil || !bytes.Equal(out, data) {
					t.Fatalf("%v: git reads %d bytes (%v), wrote %d", tc.config, len(out), err, len(data))
				}
				if len(data) == len(big) {
					fi, err := os.Stat(filepath.Join(dir, ".git", "objects", id.String()[:2], id.String()[2:]))
					if err != nil {
						t.Fatal(err)
					}
					if small := fi.Size() < int64(len(big)/4); small != tc.compressed {
						t.Errorf("%v: object of %d bytes for %d of content", tc.config, fi.Size(), len(big))
					}
				}
			}
			fsck(t, dir)
		}
	})
}
