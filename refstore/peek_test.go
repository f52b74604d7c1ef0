package refstore

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A remote is read in place only when git would reach that very
// directory: a file:// url or an absolute path, no pushurl, no rewriting.
func TestLocalRemote(t *testing.T) {
	hub := newRepo(t)
	bare := filepath.Join(realpath(t, t.TempDir()), "hub.git")
	git(t, hub, "clone", "-q", "--bare", hub, bare)
	for _, c := range []struct {
		name   string
		config [][2]string
		want   string // the directory opened; "" when none
	}{
		{"file url", [][2]string{{"remote.origin.url", "file://" + bare}}, bare},
		{"absolute path", [][2]string{{"remote.origin.url", bare}}, bare},
		{"work tree", [][2]string{{"remote.origin.url", hub}}, filepath.Join(hub, ".git")},
		{"relative path", [][2]string{{"remote.origin.url", "../hub.git"}}, ""},
		{"ssh", [][2]string{{"remote.origin.url", "ssh://example.invalid/hub.git"}}, ""},
		{"escaped file url", [][2]string{{"remote.origin.url", "file://" + bare + "%20"}}, ""},
		{"no such directory", [][2]string{{"remote.origin.url", bare + "-gone"}}, ""},
		{"pushurl", [][2]string{{"remote.origin.url", bare}, {"remote.origin.pushurl", "ssh://example.invalid/hub.git"}}, ""},
		{"insteadOf", [][2]string{{"remote.origin.url", bare}, {"url.ssh://example.invalid/.insteadOf", bare}}, ""},
		{"no remote", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := newRepo(t)
			for _, kv := range c.config {
				git(t, dir, "config", kv[0], kv[1])
			}
			src, ok := open(t, dir).LocalRemote("origin")
			if got := ""; ok {
				got = src.GitDir
				if got != c.want {
					t.Fatalf("opened %s, want %q", got, c.want)
				}
			} else if c.want != "" {
				t.Fatalf("not opened, want %s", c.want)
			}
		})
	}
}

// FetchInPlace brings what Fetch brings: every object of the remote's
// refs, tracking refs set and pruned as git would; without tracking, the
// objects alone. A history it cannot walk as a line leaves everything as
// it was.
func TestFetchInPlace(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		ctx := context.Background()
		base := newRepo(t)
		hubDir := filepath.Join(realpath(t, t.TempDir()), "hub.git")
		git(t, base, "clone", "-q", "--bare", base, hubDir)
		hub := open(t, hubDir)
		dir := filepath.Join(realpath(t, t.TempDir()), "clone")
		git(t, base, "clone", "-q", "file://"+hubDir, dir)
		r := open(t, dir)
		src, ok := r.LocalRemote("origin")
		if !ok {
			t.Fatal("the hub is not read in place")
		}
		refs := []string{StateRef, "refs/liza/queue/*"}
		tracking := func() map[string]string {
			out := map[string]string{}
			for _, line := range strings.Split(git(t, dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/liza/remotes/origin/"), "\n") {
				if name, h, ok := strings.Cut(line, " "); ok {
					out[name] = h
				}
			}
			return out
		}
		fetch := func(track bool) (map[string]Hash, bool) {
			t.Helper()
			got, ok, err := r.FetchInPlace(ctx, src, "origin", track, refs...)
			if err != nil {
				t.Fatal(err)
			}
			return got, ok
		}

		// A board of nested trees, grown one commit at a time, and a
		// ticket.
		var tips []Hash
		grow := func(n int) {
			var parents []Hash
			if len(tips) > 0 {
				parents = tips[len(tips)-1:]
			}
			for i := 0; i < n; i++ {
				k := len(tips)
				blob, _ := hub.WriteBlob([]byte(fmt.Sprintf("task %d\n", k)))
				same, _ := hub.WriteBlob([]byte("unchanged\n"))
				leaf, _ := hub.WriteTree([]TreeEntry{{Mode: "100644", Name: fmt.Sprintf("t%d.yaml", k), ID: blob}, {Mode: "100644", Name: "keep", ID: same}})
				mid, _ := hub.WriteTree([]TreeEntry{{Mode: ModeTree, Name: fmt.Sprint(k % 3), ID: leaf}})
				root, _ := hub.WriteTree([]TreeEntry{{Mode: ModeTree, Name: "tasks", ID: mid}, {Mode: "100644", Name: "layout", ID: same}})
				c, err := hub.WriteCommit(root, parents, Signature{Name: "p", Email: "p@x", When: time.Unix(int64(1e9+k), 0)}, fmt.Sprintf("op %d\n", k))
				if err != nil {
					t.Fatal(err)
				}
				tips, parents = append(tips, c), []Hash{c}
			}
			git(t, hubDir, "update-ref", StateRef, tips[len(tips)-1].String())
		}
		grow(3)
		empty, _ := hub.WriteTree(nil)
		ticket, _ := hub.WriteCommit(empty, nil, Signature{Name: "q", Email: "q@x", When: time.Unix(1e9, 0)}, "ticket\n")
		git(t, hubDir, "update-ref", "refs/liza/queue/0123456789abcdef", ticket.String())

		// First fetch: from the root, tracking refs made.
		got, ok := fetch(true)
		if !ok || got[StateRef] != tips[2] {
			t.Fatalf("first fetch: %v %v", got, ok)
		}
		want := map[string]string{
			"refs/liza/remotes/origin/state":                  tips[2].String(),
			"refs/liza/remotes/origin/queue/0123456789abcdef": ticket.String(),
		}
		if tr := tracking(); fmt.Sprint(tr) != fmt.Sprint(want) {
			t.Fatalf("tracking %v, want %v", tr, want)
		}
		if missing := missingObjects(t, dir, "--all"); len(missing) > 0 {
			t.Fatalf("missing after the first fetch: %v", missing)
		}

		// Without tracking: the objects, and the refs stay.
		grow(4)
		if got, ok = fetch(false); !ok || got[StateRef] != tips[6] {
			t.Fatalf("untracked fetch: %v %v", got, ok)
		}
		if tr := tracking(); fmt.Sprint(tr) != fmt.Sprint(want) {
			t.Fatalf("untracked fetch moved tracking refs: %v", tr)
		}
		if missing := missingObjects(t, dir, tips[6].String()); len(missing) > 0 {
			t.Fatalf("missing after the untracked fetch: %v", missing)
		}

		// Tracked again, with the ticket gone: set and pruned.
		git(t, hubDir, "update-ref", "-d", "refs/liza/queue/0123456789abcdef")
		fetch(true)
		want = map[string]string{"refs/liza/remotes/origin/state": tips[6].String()}
		if tr := tracking(); fmt.Sprint(tr) != fmt.Sprint(want) {
			t.Fatalf("tracking %v, want %v", tr, want)
		}

		// A merge on the way: left to git, nothing moved.
		side := tips[5]
		merge, _ := hub.WriteCommit(mustTree(t, hub, tips[6]), []Hash{tips[6], side}, Signature{Name: "m", Email: "m@x", When: time.Unix(2e9, 0)}, "merge\n")
		git(t, hubDir, "update-ref", StateRef, merge.String())
		if _, ok = fetch(true); ok {
			t.Fatal("a merge was fetched in place")
		}
		if tr := tracking(); fmt.Sprint(tr) != fmt.Sprint(want) {
			t.Fatalf("a refused fetch moved tracking refs: %v", tr)
		}
		if out, err := runGit(dir, nil, nil, "fsck", "--no-dangling", "--no-progress"); err != nil || strings.TrimSpace(out) != "" {
			t.Fatalf("fsck: %v %s", err, out)
		}
		if !slices.Contains(strings.Split(git(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"), "\n"), tips[6].String()) {
			t.Fatal("the copied tip is not an object of the clone")
		}
	})
}

func mustTree(t *testing.T, r *Repo, commit Hash) Hash {
	t.Helper()
	c, err := r.ReadCommit(commit)
	if err != nil {
		t.Fatal(err)
	}
	return c.Tree
}
