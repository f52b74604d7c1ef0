package refstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFetchMissingAsksOnlyForIt: a fetch of a ref the remote lacks (a
// task's branch before its first push) asks the remote which of the refs
// it was given exist, not for every ref it has: a forge advertises a ref
// per pull request, tens of thousands on a busy project, and the listing
// was all of them.
func TestFetchMissingAsksOnlyForIt(t *testing.T) {
	dir := newRepo(t)
	hub := filepath.Join(t.TempDir(), "hub.git")
	git(t, dir, "clone", "-q", "--bare", dir, hub)
	head := git(t, hub, "rev-parse", "HEAD")
	var refs strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&refs, "create refs/pull/%d/head %s\n", i, head)
	}
	gitIn(t, hub, []byte(refs.String()), "update-ref", "--stdin")
	git(t, dir, "remote", "add", "origin", "file://"+hub)
	r := open(t, dir)
	trace := filepath.Join(t.TempDir(), "packets")
	t.Setenv("GIT_TRACE_PACKET", trace)

	got, err := r.Fetch(context.Background(), "origin", "refs/heads/task/t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("fetched %v of a ref the remote does not have", got)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "refs/pull/"); n > 0 {
		t.Errorf("the remote sent %d lines naming pull requests' refs, which nothing asked for", n)
	}

	// A ref that is there is still fetched with the missing one.
	got, err = r.Fetch(context.Background(), "origin", "refs/heads/task/t1", "refs/heads/main")
	if err != nil {
		t.Fatal(err)
	}
	if got["refs/heads/main"].String() != head || len(got) != 1 {
		t.Errorf("fetched %v, want refs/heads/main at %s alone", got, head)
	}
}

// TestGitSpeaksEnglishToUs: git-liza reads what git says (a ref the remote
// lacks, a race lost, a lock held, a push the remote could not store), and
// git says it in the user's language where its translations are installed.
// With German messages a task's first submit in remote mode failed: "remote
// origin is unreachable (git fetch failed: Schwerwiegend: Konnte
// Remote-Referenz refs/heads/task/de1 nicht finden.)".
func TestGitSpeaksEnglishToUs(t *testing.T) {
	dir := newRepo(t)
	hub := filepath.Join(t.TempDir(), "hub.git")
	git(t, dir, "clone", "-q", "--bare", dir, hub)
	git(t, dir, "remote", "add", "origin", "file://"+hub)
	r := open(t, dir)
	for _, env := range [][2]string{{"LANG", "C.UTF-8"}, {"LANGUAGE", "de"}, {"LC_ALL", ""}, {"LC_MESSAGES", ""}} {
		t.Setenv(env[0], env[1])
	}
	if _, err := runGit(dir, nil, nil, "fetch", "origin", "refs/heads/none"); err == nil || strings.Contains(err.Error(), "couldn't find remote ref") {
		t.Skipf("git does not speak German here (its translations are not installed): %v", err)
	}
	got, err := r.Fetch(context.Background(), "origin", "refs/heads/task/t1")
	if err != nil || len(got) != 0 {
		t.Fatalf("Fetch of a ref the remote lacks = %v, %v; want nothing and no error", got, err)
	}
	// git's own words in an error git-liza passes on are English too.
	_, err = r.Git(context.Background(), "rev-parse", "--verify", "refs/heads/none")
	if err == nil || !strings.Contains(err.Error(), "fatal: ") {
		t.Errorf("git's error = %v, want it in English", err)
	}
}
