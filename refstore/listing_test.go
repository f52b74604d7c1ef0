package refstore

import (
	"context"
	"reflect"
	"testing"
)

// TestRefsUnder: the refs under a directory, loose and packed, a loose one
// winning over its packed copy, and nothing from beside the directory;
// read directly or through git, the same.
func TestRefsUnder(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		dir := newRepo(t)
		head := git(t, dir, "rev-parse", "HEAD")
		git(t, dir, "commit", "-q", "--allow-empty", "-m", "second")
		second := git(t, dir, "rev-parse", "HEAD")
		git(t, dir, "update-ref", "refs/liza/queue/a", head)
		git(t, dir, "update-ref", "refs/liza/queue/b", head)
		git(t, dir, "pack-refs", "--all")
		git(t, dir, "update-ref", "refs/liza/queue/b", second) // loose over packed
		git(t, dir, "update-ref", "refs/liza/queue/sub/c", second)
		git(t, dir, "update-ref", "refs/liza/queuex", head)
		r := open(t, dir)
		got, err := r.RefsUnder(context.Background(), "refs/liza/queue/")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]Hash{"refs/liza/queue/a": hashOf(t, head), "refs/liza/queue/b": hashOf(t, second), "refs/liza/queue/sub/c": hashOf(t, second)}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("RefsUnder = %v, want %v", got, want)
		}
		if got, err := r.RefsUnder(context.Background(), "refs/liza/none/"); err != nil || len(got) != 0 {
			t.Fatalf("an empty directory: %v, %v", got, err)
		}
		if _, err := r.RefsUnder(context.Background(), "refs/../x/"); err == nil {
			t.Fatal("a prefix that is no ref directory was listed")
		}
	})
}

// TestIsAncestorWithoutGit: on a line of commits the answer comes from
// the commits themselves, and agrees with git's; across a merge, git's.
func TestIsAncestorWithoutGit(t *testing.T) {
	dir := newRepo(t)
	var line []string
	for i := 0; i < 5; i++ {
		git(t, dir, "commit", "-q", "--allow-empty", "-m", "c")
		line = append(line, git(t, dir, "rev-parse", "HEAD"))
	}
	git(t, dir, "checkout", "-q", "-b", "side", line[1])
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "side")
	side := git(t, dir, "rev-parse", "HEAD")
	git(t, dir, "checkout", "-q", "main")
	git(t, dir, "merge", "-q", "--no-ff", "-m", "merge", "side")
	merge := git(t, dir, "rev-parse", "HEAD")
	r := open(t, dir)
	for _, c := range []struct {
		a, b        string
		want, known bool
	}{
		{line[0], line[4], true, true},
		{line[4], line[0], false, true},
		{line[2], line[2], true, true},
		{side, line[4], false, true},
		{side, merge, true, false},
		{line[0], merge, true, false},
	} {
		ok, known := r.firstParentAncestor(c.a, c.b)
		if known != c.known || known && ok != c.want {
			t.Errorf("firstParentAncestor(%.7s, %.7s) = %v, %v; want %v, %v", c.a, c.b, ok, known, c.want, c.known)
		}
		if got, err := r.IsAncestor(context.Background(), c.a, c.b); err != nil || got != c.want {
			t.Errorf("IsAncestor(%.7s, %.7s) = %v, %v; want %v", c.a, c.b, got, err, c.want)
		}
	}
}
