package refstore

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// stateHistory gives dir a refs/liza/state of n commits, each changing a
// file of its own tree, and returns the commits oldest first.
func stateHistory(t *testing.T, dir string, from, n int) []string {
	t.Helper()
	var commits []string
	parent, _ := runGit(dir, nil, nil, "rev-parse", "--verify", "--quiet", StateRef)
	for i := from; i < from+n; i++ {
		blob := gitIn(t, dir, []byte(fmt.Sprintf("state %d\n", i)), "hash-object", "-w", "--stdin")
		tree := gitIn(t, dir, []byte(fmt.Sprintf("100644 blob %s\tliza.yaml\n", blob)), "mktree")
		args := []string{"commit-tree", tree, "-m", fmt.Sprintf("state %d", i)}
		if parent != "" {
			args = append(args, "-p", parent)
		}
		parent = git(t, dir, args...)
		commits = append(commits, parent)
	}
	git(t, dir, "update-ref", StateRef, parent)
	return commits
}

// missingObjects lists what the repository lacks of what revs reach.
func missingObjects(t *testing.T, dir string, revs ...string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(git(t, dir, append([]string{"rev-list", "--objects", "--missing=print"}, revs...)...), "\n") {
		if id, ok := strings.CutPrefix(line, "?"); ok {
			out = append(out, id)
		}
	}
	return out
}

func packCount(t *testing.T, dir string) int {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	return len(m)
}

// In a partial clone, the first object found missing brings, in one
// fetch, all the blackboard's history lacks, and nothing of the code;
// Fetch of the state brings it whole.
func TestPartialClone(t *testing.T) {
	eachMode(t, fileModes, func(t *testing.T) {
		src := newRepo(t)
		git(t, src, "config", "uploadpack.allowFilter", "true")
		states := stateHistory(t, src, 0, 3)
		dir := filepath.Join(realpath(t, t.TempDir()), "pc")
		git(t, src, "clone", "-q", "--no-checkout", "--filter=blob:none", "file://"+src, dir)
		git(t, dir, "fetch", "-q", "origin", "+"+StateRef+":"+TrackingRef("origin", StateRef))
		if missing := missingObjects(t, dir, states[2]); len(missing) != 3 {
			t.Fatalf("the clone lacks %d objects of the state, want its 3 blobs", len(missing))
		}
		code := missingObjects(t, dir, "origin/main")
		if len(code) == 0 {
			t.Fatal("the clone has every blob of main")
		}

		r := open(t, dir)
		if !r.promisor() {
			t.Fatal("not seen as a partial clone")
		}
		blob := hashOf(t, git(t, src, "rev-parse", states[0]+":liza.yaml"))
		packs := packCount(t, dir)
		if b, err := r.ReadBlob(blob); err != nil || string(b) != "state 0\n" {
			t.Fatalf("ReadBlob of a promised blob: %q, %v", b, err)
		}
		if got := packCount(t, dir); got != packs+1 {
			t.Errorf("%d fetches for the state's history, want 1", got-packs)
		}
		if missing := missingObjects(t, dir, states[2]); len(missing) != 0 {
			t.Errorf("the state still lacks %v", missing)
		}
		if got := missingObjects(t, dir, "origin/main"); len(got) != len(code) {
			t.Errorf("the code lacks %d objects, %d before: the fill fetched code", len(got), len(code))
		}
		// Another missing object is fetched on its own, through git.
		readme := hashOf(t, git(t, src, "rev-parse", "main:README"))
		if !r.HasObject(readme) {
			t.Error("HasObject of a promised blob is false")
		}
		if b, err := r.ReadBlob(readme); err != nil || string(b) != "hello\n" {
			t.Errorf("ReadBlob(README) = %q, %v", b, err)
		}
		if _, err := r.ReadBlob(missingID()); err == nil {
			t.Error("an object the remote lacks too reads")
		}

		// Fetch brings new states with their files, whatever the filter.
		more := stateHistory(t, src, 3, 2)
		got, err := r.Fetch(context.Background(), "origin", StateRef)
		if err != nil || got[StateRef].String() != more[1] {
			t.Fatalf("Fetch = %v, %v", got, err)
		}
		if missing := missingObjects(t, dir, more[1]); len(missing) != 0 {
			t.Errorf("a fetched state lacks %v", missing)
		}
	})
}

// A shallow clone names its boundary, the commits whose parents it lacks.
func TestShallow(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		src := newRepo(t)
		states := stateHistory(t, src, 0, 4)
		if s, err := open(t, src).Shallow(); err != nil || len(s) != 0 {
			t.Fatalf("complete repository: Shallow() = %v, %v", s, err)
		}
		dir := filepath.Join(realpath(t, t.TempDir()), "sc")
		git(t, src, "clone", "-q", "--depth=1", "file://"+src, dir)
		git(t, dir, "fetch", "-q", "--depth=2", "origin", "+"+StateRef+":"+StateRef)
		s, err := open(t, dir).Shallow()
		if err != nil {
			t.Fatal(err)
		}
		boundary := hashOf(t, states[2])
		main := hashOf(t, git(t, dir, "rev-parse", "HEAD"))
		if len(s) != 2 || !s[boundary] || !s[main] {
			t.Errorf("Shallow() = %v, want %s and %s", s, boundary, main)
		}
	})
}
