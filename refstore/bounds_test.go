package refstore

import (
	"bytes"
	"compress/zlib"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// allocated is how many bytes fn allocates on the heap.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// wantTooLarge fails unless err is a *TooLargeError stating size and max.
func wantTooLarge(t *testing.T, err error, size, max int64) {
	t.Helper()
	var big *TooLargeError
	if !errors.As(err, &big) {
		t.Fatalf("error %v (%T) is not a *TooLargeError", err, err)
	}
	if big.Size != size || big.Max != max {
		t.Fatalf("error %q states %d bytes over %d, want %d over %d", err, big.Size, big.Max, size, max)
	}
}

// A loose object whose header says 300 MB is refused by a capped read on
// its header: nothing near its size is allocated (the file holds only the
// header and a few bytes, so reading it whole would fail later, as short).
// A capped read of an object within its cap is the same as ReadBlob.
func TestReadMaxRefusesOnTheHeader(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		dir := newRepo(t)
		const claim = 300 << 20
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		zw.Write([]byte("blob 314572800\x00state: a few bytes of 300 MB\n"))
		zw.Close()
		// Its name is an id of the right length; no reader checks the
		// hash of what it reads.
		id := hashOf(t, strings.Repeat("ab", algoOf(mode.format).size()))
		hex := id.String()
		path := filepath.Join(dir, ".git", "objects", hex[:2], hex[2:])
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, z.Bytes(), 0o444); err != nil {
			t.Fatal(err)
		}
		r := open(t, dir)
		r.HasObject(id) // start cat-file, in plumbing mode, before counting
		var err error
		n := allocated(func() { _, err = r.ReadBlobMax(id, 1<<20) })
		wantTooLarge(t, err, claim, 1<<20)
		if !strings.Contains(err.Error(), "blob "+hex[:12]+" is 314572800 bytes, over the cap of 1 MiB") {
			t.Fatalf("error %q does not say the size and the cap", err)
		}
		if n > 1<<20 {
			t.Fatalf("the refused read allocated %d bytes", n)
		}
		if !mode.plumbing {
			// (git cat-file, asked for the contents of this truncated
			// object, states its header and then never answers.)
			if _, err := r.ReadBlob(id); err == nil || errors.As(err, new(*TooLargeError)) {
				t.Fatalf("ReadBlob of a truncated object: %v", err)
			}
		}

		readme := hashOf(t, git(t, dir, "rev-parse", "HEAD:README"))
		got, err := r.ReadBlobMax(readme, 6)
		if err != nil || string(got) != "hello\n" {
			t.Fatalf("ReadBlobMax at its size: %q, %v", got, err)
		}
		_, err = r.ReadBlobMax(readme, 5)
		wantTooLarge(t, err, 6, 5)
		if _, err := r.ReadTreeMax(hashOf(t, git(t, dir, "rev-parse", "HEAD^{tree}")), 10); !errors.As(err, new(*TooLargeError)) {
			t.Fatalf("ReadTreeMax under a tree's size: %v", err)
		}
		if _, err := r.ReadCommitMax(hashOf(t, git(t, dir, "rev-parse", "HEAD")), 10); !errors.As(err, new(*TooLargeError)) {
			t.Fatalf("ReadCommitMax under a commit's size: %v", err)
		}
		if c, err := r.ReadCommitMax(hashOf(t, git(t, dir, "rev-parse", "HEAD")), 1<<20); err != nil || c.Message != "first\n" {
			t.Fatalf("ReadCommitMax: %v", err)
		}
	})
}

// In a pack, a capped read refuses a large object on its entry's header,
// and one stored as a delta on the result size the delta states first,
// without inflating either; ReadBlob still reads both (a task's code may be
// that large).
func TestReadMaxPackedAndDeltas(t *testing.T) {
	eachMode(t, fileModes, func(t *testing.T) {
		dir := newRepo(t)
		const size = 20 << 20
		line := []byte("the same line of a file that is far too large for a state file\n")
		big := bytes.Repeat(line, size/len(line))
		a := hashOf(t, gitIn(t, dir, big, "hash-object", "-w", "--stdin"))
		b := hashOf(t, gitIn(t, dir, append(big, "one more line\n"...), "hash-object", "-w", "--stdin"))
		// Two refs keep both in the pack, one as a delta of the other.
		git(t, dir, "update-ref", "refs/big/a", a.String())
		git(t, dir, "update-ref", "refs/big/b", b.String())
		git(t, dir, "repack", "-a", "-d", "-q")
		git(t, dir, "prune-packed")
		if deltaCount(t, dir) == 0 {
			t.Fatal("no delta in the pack")
		}
		r := open(t, dir)
		for _, id := range []Hash{a, b} {
			var err error
			n := allocated(func() { _, err = r.ReadBlobMax(id, 1<<20) })
			if !errors.As(err, new(*TooLargeError)) {
				t.Fatalf("ReadBlobMax(%s): %v", id, err)
			}
			if n > 1<<20 {
				t.Fatalf("the refused read of %s allocated %d bytes", id, n)
			}
			data, err := r.ReadBlob(id)
			if err != nil || len(data) < len(big) {
				t.Fatalf("ReadBlob(%s): %d bytes, %v", id, len(data), err)
			}
		}
	})
}
