package refstore

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// An object git-liza is about to name (written again by an operation) but
// that the repository holds only in a cruft pack, unreachable and older
// than gc's grace period, must survive a git gc run before the ref names
// it, as it does when git writes it (git hash-object -w): git does not
// count an object in a cruft pack as present (freshen_packed_object skips
// cruft packs, whose objects carry their own times in .mtimes), and writes
// a fresh loose copy.
func TestWriteOfObjectInCruftPackSurvivesGC(t *testing.T) {
	for _, writer := range []string{"git hash-object -w", "git-liza WriteBlob"} {
		t.Run(writer, func(t *testing.T) {
			dir := newRepo(t)
			content := []byte("an abandoned operation's blob, written again weeks later\n")
			id := gitIn(t, dir, content, "hash-object", "-w", "--stdin")
			loose := filepath.Join(dir, ".git", "objects", id[:2], id[2:])
			old := time.Now().Add(-21 * 24 * time.Hour)
			if err := os.Chtimes(loose, old, old); err != nil {
				t.Fatal(err)
			}
			// An earlier gc kept it, unreachable, in a cruft pack with its
			// time (three weeks ago).
			git(t, dir, "gc", "-q", "--cruft", "--prune=never")
			if m, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.mtimes")); len(m) != 1 {
				t.Fatalf("no cruft pack: %v", m)
			}

			// An operation writes the same blob again, for a commit it is
			// about to put on a ref.
			r := open(t, dir)
			switch writer {
			case "git hash-object -w":
				gitIn(t, dir, content, "hash-object", "-w", "--stdin")
			default:
				got, err := r.WriteBlob(content)
				if err != nil || got.String() != id {
					t.Fatalf("WriteBlob: %v %v", got, err)
				}
			}

			// Meanwhile (before the ref names it), git gc with its default
			// grace period of two weeks.
			git(t, dir, "gc", "-q", "--cruft")

			// The operation then names it: a tree, a commit, the ref.
			blob := hashOf(t, id)
			tree, err := r.WriteTree([]TreeEntry{{Mode: ModeFile, Name: "task", ID: blob}})
			if err != nil {
				t.Fatal(err)
			}
			who := Signature{Name: "Ada", Email: "ada@example.com", When: time.Now()}
			commit, err := r.WriteCommit(tree, nil, who, "state")
			if err != nil {
				t.Fatal(err)
			}
			if err := r.MoveRef(RefUpdate{Name: StateRef, New: commit}, "test", who); err != nil {
				t.Fatal(err)
			}
			if out, err := runGit(dir, nil, nil, "fsck", "--connectivity-only", "--no-dangling"); err != nil {
				t.Errorf("after %s, git fsck: %v %s", writer, err, out)
			}
			if _, err := runGit(dir, nil, nil, "cat-file", "-e", id); err != nil {
				t.Errorf("after %s, a gc with the default grace period removed the object: %v", writer, err)
			}
			if !open(t, dir).HasObject(hashOf(t, id)) {
				t.Errorf("after %s, HasObject(%s) is false", writer, id)
			}
		})
	}
}
