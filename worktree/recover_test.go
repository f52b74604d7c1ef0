package worktree

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/proc"
)

// A claim killed while git wrote commondir leaves it empty: every git
// worktree command, fsck and gc die, whoever's worktree it is. Recover
// writes what git always writes there.
func TestRecoverEmptyCommondir(t *testing.T) {
	r := newRepo(t)
	r.git("worktree", "add", "-q", "--detach", filepath.Join(r.root, "elsewhere"), "integration")
	admin := r.admin("elsewhere")
	if err := os.WriteFile(filepath.Join(admin, "commondir"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := r.try("worktree", "list"); err == nil || !strings.Contains(out, "commondir") {
		t.Fatalf("git worktree list with an empty commondir: %v %s", err, out)
	}
	got := recoverOK(t, r, holds("refs/heads/integration"))
	if want := "repaired .git/worktrees/elsewhere/commondir: a killed git worktree add left it empty, which stops every git worktree command"; whats(got) != want {
		t.Fatalf("repairs:\n%s\nwant:\n%s", whats(got), want)
	}
	b, _ := os.ReadFile(filepath.Join(admin, "commondir"))
	if string(b) != "../..\n" {
		t.Fatalf("commondir = %q", b)
	}
	r.sound()
	if !r.exists("elsewhere/README") {
		t.Fatal("the worktree, not git-liza's, was touched")
	}
}

// halfMade makes the registration a claim killed inside git worktree add
// leaves: the steps up to and including the one named, done by hand.
func halfMade(t *testing.T, r *testRepo, id, upTo, reason string) string {
	t.Helper()
	admin := filepath.Join(r.repo.CommonDir, "worktrees", id)
	path := filepath.Join(r.root, Dir, id)
	steps := []struct {
		name string
		do   func() error
	}{
		{"mkdir", func() error { return os.MkdirAll(admin, 0o755) }},
		{"locked", func() error { return os.WriteFile(filepath.Join(admin, "locked"), []byte(reason), 0o644) }},
		{"path", func() error { return os.MkdirAll(path, 0o755) }},
		{"gitdir", func() error { return os.WriteFile(filepath.Join(admin, "gitdir"), []byte(path+"/.git\n"), 0o644) }},
		{".git", func() error { return os.WriteFile(filepath.Join(path, ".git"), []byte("gitdir: "+admin+"\n"), 0o644) }},
		{"commondir-empty", func() error { return os.WriteFile(filepath.Join(admin, "commondir"), nil, 0o644) }},
		{"commondir", func() error { return os.WriteFile(filepath.Join(admin, "commondir"), []byte("../..\n"), 0o644) }},
		{"HEAD", func() error {
			return os.WriteFile(filepath.Join(admin, "HEAD"), []byte(strings.Repeat("0", 40)+"\n"), 0o644)
		}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatal(err)
		}
		if s.name == upTo {
			return admin
		}
	}
	t.Fatalf("no step %s", upTo)
	return ""
}

// A claim killed at any step of git worktree add leaves a registration
// that Recover removes when its owner is gone, so that git fsck is clean
// and the task can be claimed again; the lock of a live owner keeps it.
func TestRecoverHalfMadeClaims(t *testing.T) {
	t.Run("lock being written", func(t *testing.T) {
		r := newRepo(t)
		admin := halfMade(t, r, "t1", "locked", "")
		timeAgo(t, admin)
		if got := whats(recoverOK(t, r, holds("refs/heads/integration"))); got != "removed .git/worktrees/t1: an empty registration that a killed git worktree add left" {
			t.Fatalf("repairs:\n%s", got)
		}
	})
	for _, step := range []string{"mkdir", "locked", "path", "gitdir", ".git", "commondir-empty", "commondir", "HEAD"} {
		t.Run(step, func(t *testing.T) {
			r := newRepo(t)
			reason := "git-liza claim of t1 by coder-1: " + deadOwner(t)
			admin := halfMade(t, r, "t1", step, reason)
			if step == "mkdir" {
				timeAgo(t, admin)
			}
			got := recoverOK(t, r, holds("refs/heads/integration"))
			if _, err := os.Stat(admin); err == nil {
				t.Fatalf("registration kept; repairs:\n%s", whats(got))
			}
			if step != "mkdir" && r.exists(".worktrees/t1") {
				t.Fatalf(".worktrees/t1 kept; repairs:\n%s", whats(got))
			}
			if step != "mkdir" && !regexp.MustCompile(`removed (the registration of )?\.worktrees/t1: the .*claim of t1 by coder-1 \(pid \d+ on .*`).MatchString(whats(got)) &&
				!strings.Contains(whats(got), "removed the registration of .worktrees/t1") {
				t.Fatalf("repairs:\n%s", whats(got))
			}
			r.sound()
			if _, err := Create(context.Background(), r.repo, "t1", r.base, "coder-2", nil); err != nil {
				t.Fatalf("claiming again: %v", err)
			}
			r.sound()
		})
	}
	t.Run("live owner", func(t *testing.T) {
		r := newRepo(t)
		admin := halfMade(t, r, "t1", "HEAD", claimLock("t1", "coder-1"))
		if got := recoverOK(t, r, holds("refs/heads/integration")); len(got) != 0 {
			t.Fatalf("repairs of a live claim:\n%s", whats(got))
		}
		if _, err := os.Stat(admin); err != nil {
			t.Fatal("a live claim's registration went")
		}
		if _, err := Create(context.Background(), r.repo, "t1", r.base, "coder-2", nil); err != ErrBusy {
			t.Fatalf("Create over a live claim: %v", err)
		}
	})
	t.Run("another host", func(t *testing.T) {
		r := newRepo(t)
		admin := halfMade(t, r, "t1", "HEAD", "git-liza claim by coder-9: pid 1 on elsewhere")
		if got := recoverOK(t, r, holds("refs/heads/integration")); len(got) != 0 {
			t.Fatalf("repairs of another host's claim:\n%s", whats(got))
		}
		if _, err := os.Stat(admin); err != nil {
			t.Fatal("another host's registration went")
		}
	})
}

// A complete worktree whose claim died: unlocked when the claim committed
// (the board holds it), removed with its branch when it holds nothing,
// unlocked and kept when it holds changes.
func TestRecoverDeadClaim(t *testing.T) {
	claim := func(t *testing.T, r *testRepo) string {
		t.Helper()
		if _, err := Create(context.Background(), r.repo, "t1", r.base, "coder-1", nil); err != nil {
			t.Fatal(err)
		}
		admin := r.admin(".worktrees/t1")
		lock(t, admin, "git-liza claim of t1 by coder-1: "+deadOwner(t))
		return admin
	}
	pat := func(s string) *regexp.Regexp {
		return regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(s), "PID", `pid \d+ on \S+`) + "$")
	}
	t.Run("not committed, with work", func(t *testing.T) {
		r := newRepo(t)
		admin := claim(t, r)
		r.write(".worktrees/t1/notes", "mine\n")
		got := recoverOK(t, r, holds("refs/heads/integration"))
		if !pat("unlocked .worktrees/t1: the claim of t1 by coder-1 (PID) died before the claim committed; what the worktree holds is kept for the next claim of t1").MatchString(whats(got)) {
			t.Fatalf("repairs:\n%s", whats(got))
		}
		if !r.exists(".worktrees/t1/notes") {
			t.Fatal("work lost")
		}
		if _, err := os.Stat(filepath.Join(admin, "locked")); err == nil {
			t.Fatal("still locked")
		}
	})
	t.Run("branch with commits", func(t *testing.T) {
		r := newRepo(t)
		claim(t, r)
		r.write(".worktrees/t1/work", "w\n")
		cmd := []string{"-C", filepath.Join(r.root, ".worktrees/t1")}
		r.git(append(cmd, "add", "work")...)
		r.git(append(cmd, "commit", "-q", "-m", "work")...)
		recoverOK(t, r, holds("refs/heads/integration"))
		if !r.exists(".worktrees/t1/work") || r.git("branch", "--list", "task/t1") == "" {
			t.Fatal("committed work lost")
		}
	})
	t.Run("checkout killed", func(t *testing.T) {
		// HEAD set, the checkout begun, the index not written yet.
		r := newRepo(t)
		admin := claim(t, r)
		os.Remove(filepath.Join(admin, "index"))
		recoverOK(t, r, holds("refs/heads/integration"))
		if r.exists(".worktrees/t1") {
			t.Fatal("half checked out worktree kept")
		}
		r.sound()
	})
	// A claim whose push may have landed, in a process that lives on (a
	// supervisor), gives its worktree over to the next
	// claim's recovery (Abandon), as if it had been killed there: its lock
	// no longer holds the worktree for a process that runs.
	stopped := func(t *testing.T, r *testRepo) string {
		t.Helper()
		if _, err := Create(context.Background(), r.repo, "t1", r.base, "coder-1", nil); err != nil {
			t.Fatal(err)
		}
		if got := recoverOK(t, r, holds("refs/heads/integration")); len(got) != 0 {
			t.Fatalf("a live claim's worktree was repaired:\n%s", whats(got))
		}
		if err := Abandon(context.Background(), r.repo, "t1"); err != nil {
			t.Fatal(err)
		}
		return r.admin(".worktrees/t1")
	}
	// The claim committed (the board holds the worktree) or did not, its
	// process killed there or stopped there and living on.
	for _, end := range []struct {
		name string
		made func(t *testing.T, r *testRepo) string
	}{{"died", claim}, {"stopped", stopped}} {
		t.Run(end.name+", committed", func(t *testing.T) {
			r := newRepo(t)
			admin := end.made(t, r)
			got := recoverOK(t, r, holds("refs/heads/integration", "t1"))
			if !pat("unlocked .worktrees/t1: the claim of t1 by coder-1 (PID) committed, then " + end.name + " before unlocking it").MatchString(whats(got)) {
				t.Fatalf("repairs:\n%s", whats(got))
			}
			if _, err := os.Stat(filepath.Join(admin, "locked")); err == nil {
				t.Fatal("still locked")
			}
			if !r.exists(".worktrees/t1/README") {
				t.Fatal("the claimed worktree went")
			}
			r.sound()
		})
		t.Run(end.name+", not committed, clean", func(t *testing.T) {
			r := newRepo(t)
			end.made(t, r)
			got := recoverOK(t, r, holds("refs/heads/integration"))
			if !pat("removed .worktrees/t1 and branch task/t1: the claim of t1 by coder-1 (PID) " + end.name + " before the claim committed").MatchString(whats(got)) {
				t.Fatalf("repairs:\n%s", whats(got))
			}
			if r.exists(".worktrees/t1") || r.git("branch", "--list", "task/t1") != "" {
				t.Fatal("worktree or branch kept")
			}
			r.sound()
		})
	}
	t.Run("pid reused", func(t *testing.T) {
		// The pid runs, but a process started at another time has it.
		r := newRepo(t)
		if _, err := Create(context.Background(), r.repo, "t1", r.base, "coder-1", nil); err != nil {
			t.Fatal(err)
		}
		me := proc.Me()
		if me.Start.IsZero() {
			t.Skip("no process start times here")
		}
		me.Start = me.Start.Add(-3600e9)
		lock(t, r.admin(".worktrees/t1"), "git-liza claim of t1 by coder-1: "+me.String())
		if got := recoverOK(t, r, holds("refs/heads/integration")); len(got) != 1 {
			t.Fatalf("repairs:\n%s", whats(got))
		}
		if r.exists(".worktrees/t1") {
			t.Fatal("worktree of a claim whose pid was reused kept")
		}
	})
}

// Throwaway worktrees (a merge's test, a reviewer's checkout) of a dead
// owner go whatever they hold; a live owner's stay; so do directories in
// the throwaway areas no worktree is registered at, and the trash.
func TestRecoverThrowaways(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	dead := MergePath(r.repo, "t1")
	live := MergePath(r.repo, "t2")
	review := ReviewPath(r.repo, "code-reviewer-1", "t3")
	for _, p := range []string{dead, live} {
		if err := AddDetached(ctx, r.repo, p, r.base, "t1", ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := AddDetached(ctx, r.repo, review, r.base, "t3", "code-reviewer-1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead, "build.out"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	lock(t, r.admin(mustRel(t, r, dead)), "git-liza merge test of t1: "+deadOwner(t))
	lock(t, r.admin(mustRel(t, r, review)), "git-liza review of t3 by code-reviewer-1: "+deadOwner(t))
	stray := filepath.Join(r.repo.CommonDir, "liza", "merge", "t9-1-2")
	trash := filepath.Join(trashDir(r.repo), "x")
	for _, d := range []string{stray, trash} {
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got := whats(recoverOK(t, r, holds("refs/heads/integration")))
	for _, want := range []string{
		`removed .git/liza/merge/t1-\d+-[0-9a-f]+: the throwaway worktree of the merge test of t1 \(pid \d+ on \S+\), which died`,
		`removed .worktrees/.review/code-reviewer-1/t3: the throwaway worktree of the review of t3 by code-reviewer-1 \(pid \d+ on \S+\), which died`,
		`removed .git/liza/merge/t9-1-2: a throwaway directory no worktree is registered at`,
		`emptied .git/liza/trash: what a killed removal had set aside`,
	} {
		if !regexp.MustCompile("(?m)^" + want + "$").MatchString(got) {
			t.Errorf("no repair %q in:\n%s", want, got)
		}
	}
	for _, p := range []string{dead, review, stray, trash} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s kept", p)
		}
	}
	if _, err := os.Stat(filepath.Join(live, "README")); err != nil {
		t.Error("a live merge's test worktree went")
	}
	r.sound()
}

func mustRel(t *testing.T, r *testRepo, p string) string {
	t.Helper()
	rel, err := filepath.Rel(r.root, p)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// Before they lived under .git/liza/, merges tested in $TMPDIR/liza-merge-*
// and a kill left them registered: removed once no process works in them.
func TestRecoverLegacyMergeWorktree(t *testing.T) {
	r := newRepo(t)
	t.Setenv("TMPDIR", t.TempDir())
	dir, err := os.MkdirTemp("", "liza-merge-")
	if err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(dir, "tree")
	r.git("worktree", "add", "-q", "--detach", wt, "integration")
	got := whats(recoverOK(t, r, holds("refs/heads/integration")))
	if !strings.Contains(got, "removed "+wt+": a throwaway worktree an earlier git-liza left, which no process works in") {
		t.Fatalf("repairs:\n%s", got)
	}
	r.sound()
}

// A registration git-liza did not make is only reported, with the fix.
func TestRecoverForeignHalfMade(t *testing.T) {
	r := newRepo(t)
	r.git("worktree", "add", "-q", "--detach", filepath.Join(r.root, "mine"), "integration")
	admin := r.admin("mine")
	os.WriteFile(filepath.Join(admin, "HEAD"), []byte(strings.Repeat("0", 40)), 0o644)
	old := timeAgo(t, admin)
	_ = old
	got := recoverOK(t, r, holds("refs/heads/integration"))
	if len(got) != 1 || got[0].Fix != "if no git worktree add is running here, rm -rf .git/worktrees/mine" {
		t.Fatalf("repairs:\n%s", whats(got))
	}
	if _, err := os.Stat(admin); err != nil {
		t.Fatal("someone else's registration was removed")
	}
}

// Reviewers' checkouts may also lie beside the task worktrees, in
// .worktrees/.review/AGENT/ID: a dead supervisor's goes, a live one's and
// the directory itself stay, and no task worktree is taken for one.
func TestRecoverReviewBesideTasks(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	dead := filepath.Join(r.root, Dir, reviewSubdir, "code-reviewer-1", "t1")
	live := filepath.Join(r.root, Dir, reviewSubdir, "code-reviewer-2", "t2")
	for _, p := range []string{dead, live} {
		if err := AddDetached(ctx, r.repo, p, r.base, "t", "code-reviewer-1"); err != nil {
			t.Fatal(err)
		}
	}
	lock(t, r.admin(mustRel(t, r, dead)), "git-liza review of t1 by code-reviewer-1: "+deadOwner(t))
	got := whats(recoverOK(t, r, holds("refs/heads/integration")))
	if !regexp.MustCompile(`^removed .worktrees/.review/code-reviewer-1/t1: the throwaway worktree of the review of t1 by code-reviewer-1 \(pid \d+ on \S+\), which died$`).MatchString(got) {
		t.Fatalf("repairs:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(live, "README")); err != nil {
		t.Fatal("a live reviewer's checkout went")
	}
	infos, err := List(ctx, r.repo)
	if err != nil || len(infos) != 0 {
		t.Fatalf("List took a review checkout for a task worktree: %+v %v", infos, err)
	}
	if s, err := Strays(r.repo); err != nil || len(s) != 0 {
		t.Fatalf("Strays: %s %v", whats(s), err)
	}
	r.sound()
}

// With the board at hand, a reviewer's checkout lives as long as the
// review: kept while the board records the review, whoever made it (the
// review command ends at once), removed once it does not, unless a live
// process of git-liza's owns it.
func TestRecoverReviewByBoard(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	held := ReviewPath(r.repo, "code-reviewer-1", "t1")
	over := ReviewPath(r.repo, "code-reviewer-1", "t2")
	live := ReviewPath(r.repo, "code-reviewer-2", "t3")
	for _, p := range []string{held, over, live} {
		if err := AddDetached(ctx, r.repo, p, r.base, filepath.Base(p), filepath.Base(filepath.Dir(p))); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{held, over} {
		lock(t, r.admin(mustRel(t, r, p)), "git-liza review of x by code-reviewer-1: "+deadOwner(t))
	}
	rec := holds("refs/heads/integration")
	rec.Reviewing = func(agent, task string) (bool, error) { return agent == "code-reviewer-1" && task == "t1", nil }
	got := whats(recoverOK(t, r, rec))
	if got != "removed .worktrees/.review/code-reviewer-1/t2: the checkout of a review of t2 that code-reviewer-1 no longer holds" {
		t.Fatalf("repairs:\n%s", got)
	}
	for _, p := range []string{held, live} {
		if _, err := os.Stat(filepath.Join(p, "README")); err != nil {
			t.Errorf("%s went", p)
		}
	}
}

// TestRecoverWhenFree: the recovery a busy team's commands run first
// leaves everything as it is while another worktree command holds the
// lock, and repairs once the lock is free.
func TestRecoverWhenFree(t *testing.T) {
	r := newRepo(t)
	r.git("worktree", "add", "-q", "--detach", filepath.Join(r.root, "elsewhere"), "integration")
	commondir := filepath.Join(r.admin("elsewhere"), "commondir")
	if err := os.WriteFile(commondir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockRepo(r.repo)
	if err != nil {
		t.Fatal(err)
	}
	got, ran, err := RecoverWhenFree(context.Background(), r.repo, holds("refs/heads/integration"))
	if err != nil || ran || len(got) != 0 {
		t.Fatalf("with the lock held: ran %v, repairs %v, error %v", ran, got, err)
	}
	if b, _ := os.ReadFile(commondir); len(b) != 0 {
		t.Fatalf("commondir written while another command held the lock: %q", b)
	}
	unlock()
	got, ran, err = RecoverWhenFree(context.Background(), r.repo, holds("refs/heads/integration"))
	if err != nil || !ran || len(got) != 1 {
		t.Fatalf("with the lock free: ran %v, repairs %v, error %v", ran, got, err)
	}
	if b, _ := os.ReadFile(commondir); string(b) != "../..\n" {
		t.Fatalf("commondir = %q", b)
	}
	r.sound()
}

// What a removal that still runs set aside is its own: it empties the
// trash once it lets the worktrees' lock go, and another command's
// recovery that takes the lock first must not report it as left by a
// killed removal (a busy team's logs had dozens of such lines). An entry
// whose process is gone, or that names none, is reported.
func TestRecoverTrashOfALiveRemoval(t *testing.T) {
	r := newRepo(t)
	setAside := func(name string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(trashDir(r.repo), name, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	report := regexp.MustCompile(`(?m)^emptied .git/liza/trash: what a killed removal had set aside$`)
	for _, c := range []struct {
		entry  string
		report bool
	}{
		{fmt.Sprintf("t-1-%d-1a2b", os.Getpid()), false},
		{fmt.Sprintf("t-1-%d-1a2b", gone.Process.Pid), true},
		{"t-1", true},
	} {
		setAside(c.entry)
		got := whats(recoverOK(t, r, holds("refs/heads/integration")))
		if report.MatchString(got) != c.report {
			t.Errorf("%s in the trash: reported %v, want %v:\n%s", c.entry, !c.report, c.report, got)
		}
		if ents, _ := os.ReadDir(trashDir(r.repo)); len(ents) != 0 {
			t.Errorf("%s in the trash: not emptied when the lock was let go", c.entry)
		}
	}
}
