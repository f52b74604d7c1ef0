package refstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/proc"
)

// objectFiles lists the files under dir's objects directory, relative to
// it, info/ left out.
func objectFiles(t *testing.T, dir string) []string {
	t.Helper()
	root := filepath.Join(dir, ".git", "objects")
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && rel == "info" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// newFiles is what after holds that before did not.
func newFiles(before, after []string) []string {
	var out []string
	for _, f := range after {
		if !slices.Contains(before, f) {
			out = append(out, f)
		}
	}
	return out
}

// writeOperation writes, under a hold, what an operation writes: n blobs,
// a tree of them and a commit, and flushes them; it returns their ids.
func writeOperation(t *testing.T, r *Repo, tag string, n int) []Hash {
	t.Helper()
	end := r.Hold()
	defer end()
	var ids []Hash
	var entries []TreeEntry
	for i := range n {
		id, err := r.WriteBlob([]byte(fmt.Sprintf("%s: blob %d\n", tag, i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		entries = append(entries, TreeEntry{Mode: ModeFile, Name: fmt.Sprintf("f%d", i), ID: id})
	}
	tree, err := r.WriteTree(entries)
	if err != nil {
		t.Fatal(err)
	}
	commit, err := r.WriteCommit(tree, nil, Signature{Name: "a", Email: "a@b", When: time.Unix(1_790_000_000, 0)}, tag+"\n")
	if err != nil {
		t.Fatal(err)
	}
	// What is held reads back before it is on disk.
	if got, err := r.ReadBlob(ids[0]); err != nil || !strings.HasPrefix(string(got), tag) {
		t.Fatalf("held blob reads %q, %v", got, err)
	}
	if err := r.FlushObjects(); err != nil {
		t.Fatal(err)
	}
	return append(ids, tree, commit)
}

// checkWithGit asserts that git reads every id and that git fsck finds
// nothing wrong.
func checkWithGit(t *testing.T, dir string, ids []Hash) {
	t.Helper()
	var in strings.Builder
	for _, id := range ids {
		in.WriteString(id.String() + "\n")
	}
	out := gitIn(t, dir, []byte(in.String()), "cat-file", "--batch-check")
	if strings.Contains(out, "missing") {
		t.Fatalf("git cat-file --batch-check:\n%s", out)
	}
	git(t, dir, "fsck", "--strict", "--no-dangling")
}

// An operation's objects go to disk as one pack and its index, which git
// reads: two new files, however many objects.
func TestHoldWritesOnePack(t *testing.T) {
	eachMode(t, fileModes, func(t *testing.T) {
		dir := newRepo(t)
		r := open(t, dir)
		before := objectFiles(t, dir)
		ids := writeOperation(t, r, "op", 11)
		got := newFiles(before, objectFiles(t, dir))
		slices.Sort(got)
		if len(got) != 2 || !strings.HasSuffix(got[0], ".idx") || !strings.HasSuffix(got[1], ".pack") {
			t.Fatalf("new files in objects/: %v, want one pack and its index", got)
		}
		checkWithGit(t, dir, ids)
		out := git(t, dir, "verify-pack", "-v", filepath.Join(dir, ".git", "objects", got[1]))
		if !strings.Contains(out, ": ok") {
			t.Fatalf("git verify-pack:\n%s", out)
		}
		// Another process reads them from the pack.
		fresh := open(t, dir)
		for _, id := range ids {
			if _, _, err := fresh.odb.read(id); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// One or two objects are written loose, as before: a pack would cost as
// many files.
func TestHoldFewObjectsLoose(t *testing.T) {
	dir := newRepo(t)
	r := open(t, dir)
	before := objectFiles(t, dir)
	end := r.Hold()
	id, err := r.WriteBlob([]byte("alone\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.FlushObjects(); err != nil {
		t.Fatal(err)
	}
	end()
	hex := id.String()
	if got := newFiles(before, objectFiles(t, dir)); !slices.Equal(got, []string{filepath.Join(hex[:2], hex[2:])}) {
		t.Fatalf("new files: %v, want the loose object", got)
	}
}

// Objects still held when the last hold ends are written, not dropped:
// another goroutine may have written them meanwhile, outside any hold (a
// reviewer's merge lane beside its supervisor's claim of a review), and be
// about to name them to git. A soak of a team lost such a merge commit about
// once in 80 merges ("invalid reference" from git worktree add).
func TestHoldEndWritesWhatIsHeld(t *testing.T) {
	dir := newRepo(t)
	r := open(t, dir)
	end := r.Hold()
	var lane sync.WaitGroup
	var commit Hash
	lane.Go(func() {
		var entries []TreeEntry
		for i := range 3 {
			id, err := r.WriteBlob(fmt.Appendf(nil, "merged %d\n", i))
			if err != nil {
				t.Error(err)
				return
			}
			entries = append(entries, TreeEntry{Mode: ModeFile, Name: fmt.Sprint(i), ID: id})
		}
		tree, err := r.WriteTree(entries)
		if err == nil {
			commit, err = r.WriteCommit(tree, nil, Signature{Name: "a", Email: "a@b", When: time.Unix(1_790_000_000, 0)}, "merge\n")
		}
		if err != nil {
			t.Error(err)
		}
	})
	lane.Wait()
	end() // the other operation ends, without a flush of its own
	git(t, dir, "cat-file", "-e", commit.String())
	git(t, dir, "fsck", "--strict", "--no-dangling")
	if _, err := open(t, dir).ReadCommit(commit); err != nil {
		t.Fatalf("another process reads the commit: %v", err)
	}
}

// A ref moved through git while objects are held finds them on disk.
func TestHoldFlushedBeforeRefMoves(t *testing.T) {
	dir := newRepo(t)
	r := open(t, dir)
	end := r.Hold()
	defer end()
	var entries []TreeEntry
	for i := range 4 {
		id, err := r.WriteBlob([]byte(fmt.Sprintf("blob %d\n", i)))
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, TreeEntry{Mode: ModeFile, Name: fmt.Sprint(i), ID: id})
	}
	tree, err := r.WriteTree(entries)
	if err != nil {
		t.Fatal(err)
	}
	commit, err := r.WriteCommit(tree, nil, Signature{Name: "a", Email: "a@b", When: time.Unix(1_790_000_000, 0)}, "m\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRefs(t.Context(), "test", RefUpdate{Name: "refs/test/held", New: commit}); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "fsck", "--strict", "--no-dangling")
	if got := git(t, dir, "rev-parse", "refs/test/held^{tree}"); got != tree.String() {
		t.Fatalf("tree %s, want %s", got, tree)
	}
}

// indexCount is the number of pack indexes in dir: the packs a reader
// takes.
func indexCount(t *testing.T, dir string) int {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.idx"))
	if err != nil {
		t.Fatal(err)
	}
	return len(names)
}

// Packs do not accumulate: after many operations they stay few, every
// object readable by git-liza and by git, and git's gc and repack work on
// what is left.
func TestTidyBoundsPacks(t *testing.T) {
	eachMode(t, fileModes, func(t *testing.T) {
		dir := newRepo(t)
		var all []Hash
		most := 0
		for i := range 80 {
			r := open(t, dir) // a process per operation
			all = append(all, writeOperation(t, r, fmt.Sprintf("op %d", i), 3+i%7)...)
			r.Close()
			most = max(most, indexCount(t, dir))
		}
		// After a tidy the packs are a geometric series, at most
		// log2(total/smallest) of them (here about 6), plus the new ones
		// before the next tidy (packsBeforeTidy, 8).
		if most > 16 {
			t.Fatalf("%d packs at most over 80 operations", most)
		}
		if n := indexCount(t, dir); n > 16 {
			t.Fatalf("%d packs after 80 operations", n)
		}
		fresh := open(t, dir)
		for _, id := range all {
			if _, _, err := fresh.odb.read(id); err != nil {
				t.Fatal(err)
			}
		}
		checkWithGit(t, dir, all)
		// Only what a ref reaches survives gc: keep it all reachable.
		git(t, dir, "update-ref", "refs/test/last", all[len(all)-1].String())
		git(t, dir, "repack", "-a", "-d", "-q")
		git(t, dir, "gc", "-q")
		checkWithGit(t, dir, all[len(all)-1:])
	})
}

// A process that knows few packs (its own list, with what it wrote since)
// does not list the directory to tidy; packs others wrote meanwhile are
// tidied by the next process that lists them.
func TestTidyCountsKnownPacks(t *testing.T) {
	dir := newRepo(t)
	early := open(t, dir)
	writeOperation(t, early, "early", 4)
	if _, err := early.odb.packList(true); err != nil {
		t.Fatal(err)
	}
	for i := range packsBeforeTidy + 2 { // packs git makes, unknown to early
		id := strings.TrimSpace(gitIn(t, dir, []byte(fmt.Sprintf("loose %d\n", i)), "hash-object", "-w", "--stdin"))
		gitIn(t, dir, []byte(id+"\n"), "pack-objects", "-q", filepath.Join(".git", "objects", "pack", "pack"))
	}
	piled := indexCount(t, dir)
	if piled <= packsBeforeTidy {
		t.Fatalf("only %d packs made", piled)
	}
	writeOperation(t, early, "early again", 4)
	if n := indexCount(t, dir); n != piled+1 {
		t.Fatalf("%d packs after the early process wrote one to %d: it listed the directory", n, piled)
	}
	late := open(t, dir)
	if _, err := late.odb.packList(true); err != nil {
		t.Fatal(err)
	}
	writeOperation(t, late, "late", 4)
	if n := indexCount(t, dir); n > packsBeforeTidy {
		t.Fatalf("%d packs after a process that listed them wrote one", n)
	}
}

// A reader that listed the packs before another process tidied them
// away still finds every object: a pack gone is a miss, and the reader
// lists the packs again.
func TestTidyReaderWithOldList(t *testing.T) {
	dir := newRepo(t)
	w := open(t, dir)
	var all []Hash
	for i := range packsBeforeTidy {
		all = append(all, writeOperation(t, w, fmt.Sprintf("op %d", i), 4)...)
	}
	reader := open(t, dir)
	// One pack read from (the newest), the others' indexes looked in
	// (has), their .pack files not yet opened.
	if _, _, err := reader.odb.read(all[len(all)-1]); err != nil {
		t.Fatal(err)
	}
	for _, id := range all {
		if !reader.odb.has(id) {
			t.Fatalf("has(%s) is false", id)
		}
	}
	before := indexCount(t, dir)
	all = append(all, writeOperation(t, w, "the tidy's", 4)...)
	if n := indexCount(t, dir); n >= before {
		t.Fatalf("%d packs before, %d after the operation that should tidy", before, n)
	}
	for _, id := range all {
		if _, _, err := reader.odb.read(id); err != nil {
			t.Fatalf("reader with the old list: %v", err)
		}
		if !reader.odb.has(id) {
			t.Fatalf("has(%s) is false", id)
		}
	}
}

// Packs git gives a meaning of their own are never merged, and packs git
// made with deltas are merged with their objects whole.
func TestTidyLeavesKeptPacksMergesGitOnes(t *testing.T) {
	dir := deltaRepo(t)
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	git(t, dir, "repack", "-a", "-d", "-q", "--depth=50", "--window=50")
	if deltaCount(t, dir) == 0 {
		t.Fatal("the repository has no deltas")
	}
	deltas := mustGlob(t, filepath.Join(packDir, "pack-*.pack"))
	// A second pack of git's, kept.
	writeFile(t, filepath.Join(dir, "more.txt"), "more\n")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "more")
	git(t, dir, "repack", "-d", "-q")
	var kept string
	for _, p := range mustGlobAll(t, filepath.Join(packDir, "pack-*.pack")) {
		if p != deltas {
			kept = p
		}
	}
	writeFile(t, strings.TrimSuffix(kept, ".pack")+".keep", "")
	want := allObjects(t, dir)
	w := open(t, dir)
	// git's pack is merged once ours together reach half its size.
	for i := 0; exists(deltas); i++ {
		if i == 500 {
			t.Fatal("git's pack with deltas was not merged in 500 operations")
		}
		writeOperation(t, w, fmt.Sprintf("op %d", i), 3)
		if _, err := os.Stat(kept); err != nil {
			t.Fatalf("the kept pack: %v", err)
		}
	}
	fresh := open(t, dir)
	for _, hex := range want {
		id, _ := ParseHash(hex)
		if _, _, err := fresh.odb.read(id); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "fsck", "--strict", "--no-dangling")
}

func mustGlobAll(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A process killed while it writes a pack (between the pack's rename and
// its index's) or while it tidies (the merged pack in place, the old
// ones not yet removed) leaves nothing any reader takes for a pack that
// is not whole, and every object of a tidy readable.
func TestPackKilledMidWrite(t *testing.T) {
	for _, point := range []string{"pack:renamed", "pack:tidied"} {
		t.Run(point, func(t *testing.T) {
			dir := newRepo(t)
			var before []Hash
			ops := 1
			if point == "pack:tidied" {
				ops = packsBeforeTidy
			}
			w := open(t, dir)
			for i := range ops {
				before = append(before, writeOperation(t, w, fmt.Sprintf("op %d", i), 3)...)
			}
			killed := errors.New("killed")
			proc.SetCrashHook(func(p string) {
				if p == point {
					panic(killed)
				}
			})
			func() {
				defer func() {
					if v := recover(); v != killed {
						t.Fatalf("recovered %v, want the kill at %s", v, point)
					}
				}()
				defer proc.SetCrashHook(nil)
				writeOperation(t, w, "killed", 3)
			}()
			fresh := open(t, dir)
			for _, id := range before {
				if _, _, err := fresh.odb.read(id); err != nil {
					t.Fatal(err)
				}
			}
			git(t, dir, "fsck", "--strict", "--no-dangling")
			if point == "pack:renamed" {
				// The pack has no index: neither reader sees it.
				if n := indexCount(t, dir); n != 1 {
					t.Fatalf("%d indexes, want the first operation's", n)
				}
				return
			}
			// The next tidy merges what the killed one left.
			for i := range packsBeforeTidy {
				writeOperation(t, w, fmt.Sprintf("after %d", i), 3)
			}
			if n := indexCount(t, dir); n > packsBeforeTidy {
				t.Fatalf("%d packs after the next tidy", n)
			}
		})
	}
}

// Any git command this process runs finds the objects held, whichever
// Repo holds them: another goroutine's hold may have taken an object its
// writer then hands to git.
func TestHeldFlushedBeforeGit(t *testing.T) {
	dir := newRepo(t)
	r := open(t, dir)
	end := r.Hold()
	defer end()
	var ids []Hash
	for i := range 3 {
		id, err := r.WriteBlob([]byte(fmt.Sprintf("handed to git %d\n", i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		if _, err := Run(t.Context(), dir, nil, "cat-file", "-e", id.String()); err != nil {
			t.Fatalf("git cat-file -e %s: %v", id, err)
		}
	}
}

// A hold keeps at most heldMax bytes in memory: past it, what is held is
// written, and reads on.
func TestHoldBoundsMemory(t *testing.T) {
	dir := newRepo(t)
	r := open(t, dir)
	end := r.Hold()
	defer end()
	big := make([]byte, heldMax/4+1)
	var ids []Hash
	for i := range 5 {
		big[0] = byte(i)
		id, err := r.WriteBlob(big)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	r.odb.held.mu.Lock()
	size := r.odb.held.size
	r.odb.held.mu.Unlock()
	if size > heldMax {
		t.Fatalf("%d bytes held, over %d", size, heldMax)
	}
	if indexCount(t, dir) != 1 {
		t.Fatalf("%d packs, want the one written when the hold was full", indexCount(t, dir))
	}
	for _, id := range ids {
		if _, _, err := r.odb.read(id); err != nil {
			t.Fatal(err)
		}
	}
}

// A pack file cut short under a reader that mapped it is an error for
// that read, not the end of the process.
func TestPackCutShortUnderMapping(t *testing.T) {
	dir := newRepo(t)
	w := open(t, dir)
	end := w.Hold()
	var ids []Hash
	for i := range 10 {
		// 8 KB that deflate cannot shrink: the pack spans pages.
		b := make([]byte, 8<<10)
		for j := range b {
			b[j] = byte((i*7919 + j*j*31 + j>>3) % 251)
		}
		id, err := w.WriteBlob(b)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := w.FlushObjects(); err != nil {
		t.Fatal(err)
	}
	end()
	reader := open(t, dir)
	if _, _, err := reader.odb.read(ids[0]); err != nil {
		t.Fatal(err)
	}
	pk := mustGlob(t, filepath.Join(dir, ".git", "objects", "pack", "pack-*.pack"))
	if err := os.Chmod(pk, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(pk, 64); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, id := range ids {
		if _, _, err := reader.odb.read(id); err != nil {
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("every object read from a pack cut to 64 bytes")
	}
}

// One Repo read by one goroutine while another writes operations as packs
// (a reviewer's supervisor reviews while its merge lane merges): the
// reader is never handed a list of packs that changes under it (go test
// -race), and reads every object written before it started.
func TestPacksReadWhileWritten(t *testing.T) {
	dir := newRepo(t)
	r := open(t, dir)
	first := writeOperation(t, r, "first", 11)
	done := make(chan struct{})
	var readErr error
	go func() {
		defer close(done)
		for i := 0; i < 200; i++ {
			for _, id := range first {
				if _, _, err := r.odb.read(id); err != nil {
					readErr = err
					return
				}
			}
			if i%10 == 0 {
				r.odb.packList(true)
			}
		}
	}()
	for i := range 20 {
		writeOperation(t, r, fmt.Sprintf("op%d", i), 11)
	}
	<-done
	if readErr != nil {
		t.Fatal(readErr)
	}
}

// An object already in a pack is not written again, loose or held: a
// clone verifying a fetched commit builds the commit's trees again, and
// the fetch kept them packed (each verification wrote a dozen loose
// copies, a fifth of a waiting clone's processor time).
func TestPackedObjectNotWrittenAgain(t *testing.T) {
	dir := newRepo(t)
	r := open(t, dir)
	ids := writeOperation(t, r, "op", 11)
	before := objectFiles(t, dir)
	for _, id := range ids {
		typ, data, err := r.odb.read(id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.odb.write(typ, data); err != nil {
			t.Fatal(err)
		}
	}
	end := r.Hold()
	typ, data, _ := r.odb.read(ids[0])
	if _, err := r.odb.write(typ, data); err != nil {
		t.Fatal(err)
	}
	if n := len(r.odb.held.order); n != 0 {
		t.Errorf("%d packed objects held again", n)
	}
	end()
	if got := newFiles(before, objectFiles(t, dir)); len(got) != 0 {
		t.Fatalf("packed objects written again: %v", got)
	}
	// A pack another process wrote (a fetch) is seen once the packs are
	// listed again.
	other := open(t, dir)
	more := writeOperation(t, other, "other", 11)
	r.odb.rescanPacks()
	before = objectFiles(t, dir)
	typ, data, _ = other.odb.read(more[0])
	if _, err := r.odb.write(typ, data); err != nil {
		t.Fatal(err)
	}
	if got := newFiles(before, objectFiles(t, dir)); len(got) != 0 {
		t.Fatalf("an object of another process's pack written again: %v", got)
	}
}

// An object found already here is freshened, as git freshens it: the
// loose file's time, or its pack's, is set to now, so that git gc, which
// keeps recent unreachable objects, does not prune an old unreachable copy
// that a new commit is about to name.
func TestPresentObjectFreshened(t *testing.T) {
	dir := newRepo(t)
	r := open(t, dir)
	ids := writeOperation(t, r, "op", 11)
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs: %v", packs)
	}
	old := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(packs[0], old, old); err != nil {
		t.Fatal(err)
	}
	blob := []byte("loose and old\n")
	loose, err := r.odb.writeLoose(objBlob, blob)
	if err != nil {
		t.Fatal(err)
	}
	hex := loose.String()
	loosePath := filepath.Join(dir, ".git", "objects", hex[:2], hex[2:])
	if err := os.Chtimes(loosePath, old, old); err != nil {
		t.Fatal(err)
	}

	fresh := open(t, dir) // another process: the pack not yet freshened by it
	typ, data, _ := fresh.odb.read(ids[0])
	if _, err := fresh.odb.write(typ, data); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.odb.write(objBlob, blob); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{packs[0], loosePath} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(fi.ModTime()) > time.Hour {
			t.Errorf("%s not freshened: %v", filepath.Base(p), fi.ModTime())
		}
	}
}
