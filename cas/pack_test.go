package cas

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// objectFiles counts the files under the objects directory of dir, and
// those of them that are packs.
func objectFiles(t *testing.T, dir string) (files, packs int) {
	t.Helper()
	root := filepath.Join(dir, ".git", "objects")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		if strings.HasSuffix(p, ".pack") {
			packs++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, packs
}

// An operation writes its new objects (the task, its index, the trees,
// the commit: several) as one pack and its index, not as a file each; git
// reads them, and the state is whole.
func TestOperationWritesOnePack(t *testing.T) {
	s := initStore(t)
	dir := s.Repo.Dir()
	mustUpdate(t, s, putTasks(task("task-1"), task("task-2")))
	files, packs := objectFiles(t, dir)
	res := mustUpdate(t, s, putTasks(task("task-3")))
	after, packsAfter := objectFiles(t, dir)
	if after-files != 2 || packsAfter-packs != 1 {
		t.Fatalf("the operation added %d files to objects/ (%d packs), want one pack and its index", after-files, packsAfter-packs)
	}
	git(t, dir, "fsck", "--strict", "--no-dangling")
	if got := git(t, dir, "rev-parse", "refs/liza/state"); got != res.Commit.String() {
		t.Fatalf("state at %s, want %s", got, res.Commit)
	}
	// Many operations later the packs are still few.
	for i := range 40 {
		mustUpdate(t, s, putTasks(task(fmt.Sprintf("task-%d", 10+i))))
	}
	if _, n := objectFiles(t, dir); n > 16 {
		t.Fatalf("%d packs after 40 more operations", n)
	}
	git(t, dir, "fsck", "--strict", "--no-dangling")
}

// loosen turns the packs of dir into loose objects (git unpack-objects),
// for a test that removes one object's file.
func loosen(t *testing.T, dir string) {
	t.Helper()
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.pack"))
	for _, p := range packs {
		moved := filepath.Join(t.TempDir(), "moved.pack")
		if err := os.Rename(p, moved); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(strings.TrimSuffix(p, ".pack") + ".idx"); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(moved)
		if err != nil {
			t.Fatal(err)
		}
		gitIn(t, dir, b, "unpack-objects", "-q")
	}
}
