package worktree

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/refstore"
)

// Create makes .worktrees/ID on task/ID, locked by this process until
// Unlock; Remove takes both away and leaves nothing behind.
func TestCreateUnlockRemove(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	made, err := Create(ctx, r.repo, "t1", r.base, "coder-1", nil)
	if err != nil || !made {
		t.Fatalf("Create: %v %v", made, err)
	}
	info, err := Inspect(ctx, r.repo, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if !info.Exists || info.Branch != "task/t1" || info.Head != r.base.String() || !strings.HasPrefix(info.Locked, "git-liza claim of t1 by coder-1: pid ") {
		t.Fatalf("after Create: %+v", info)
	}
	if err := Unlock(ctx, r.repo, "t1"); err != nil {
		t.Fatal(err)
	}
	if info, _ := Inspect(ctx, r.repo, "t1"); info.Locked != "" {
		t.Fatalf("still locked: %+v", info)
	}
	r.sound()
	if err := Remove(ctx, r.repo, "t1", "refs/heads/integration", false); err != nil {
		t.Fatal(err)
	}
	if r.exists(".worktrees/t1") || r.git("branch", "--list", "task/t1") != "" || r.git("worktree", "list", "--porcelain") != "worktree "+r.root+"\nHEAD "+r.base.String()+"\nbranch refs/heads/integration\n\n" {
		t.Fatalf("left behind:\n%s", r.git("worktree", "list", "--porcelain"))
	}
	if ents, _ := os.ReadDir(trashDir(r.repo)); len(ents) != 0 {
		t.Fatalf("trash not emptied: %v", ents)
	}
	r.sound()
}

// Remove without force keeps uncommitted changes and unmerged commits.
func TestRemoveKeepsWork(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	if _, err := Create(ctx, r.repo, "t1", r.base, "coder-1", nil); err != nil {
		t.Fatal(err)
	}
	r.write(".worktrees/t1/new", "x\n")
	if err := Remove(ctx, r.repo, "t1", "refs/heads/integration", false); err == nil || !strings.Contains(err.Error(), "uncommitted changes") {
		t.Fatalf("Remove of a dirty worktree: %v", err)
	}
	wt := filepath.Join(r.root, ".worktrees/t1")
	r.git("-C", wt, "add", "new")
	r.git("-C", wt, "commit", "-q", "-m", "new")
	if err := Remove(ctx, r.repo, "t1", "refs/heads/integration", false); err == nil || !strings.Contains(err.Error(), "not on integration") {
		t.Fatalf("Remove of unmerged work: %v", err)
	}
	if !r.exists(".worktrees/t1/new") {
		t.Fatal("work lost")
	}
}

// A removal killed after the worktree went to the trash leaves a
// registration whose directory is gone: listed as such, forgotten by
// Prune, and forgotten by the next Create of the task (a claim).
func TestRemoveKilledHalfway(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	for _, id := range []string{"t1", "t2"} {
		if _, err := Create(ctx, r.repo, id, r.base, "coder-1", nil); err != nil {
			t.Fatal(err)
		}
		if err := Unlock(ctx, r.repo, id); err != nil {
			t.Fatal(err)
		}
		if err := toTrash(r.repo, filepath.Join(r.root, Dir, id)); err != nil {
			t.Fatal(err)
		}
	}
	infos, err := List(ctx, r.repo)
	if err != nil || len(infos) != 2 || infos[0].Exists || !infos[0].Prunable {
		t.Fatalf("List: %+v %v", infos, err)
	}
	var told []string
	if _, err := Create(ctx, r.repo, "t1", r.base, "coder-2", func(s string) { told = append(told, s) }); err != nil {
		t.Fatalf("Create over a gone worktree: %v", err)
	}
	if strings.Join(told, "\n") != "forgot the registration of .worktrees/t1: its directory is gone" {
		t.Fatalf("told: %q", told)
	}
	ids, err := Prune(ctx, r.repo)
	if err != nil || strings.Join(ids, ",") != "t2" {
		t.Fatalf("Prune: %v %v", ids, err)
	}
	if ents, _ := os.ReadDir(trashDir(r.repo)); len(ents) != 0 {
		t.Fatalf("trash not emptied: %v", ents)
	}
	r.sound()
}

// A worktree half deleted by git worktree remove (as git-liza removed
// worktrees before) has only deleted files: status says so.
func TestStatusOnlyDeleted(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	r.write("b", "b\n")
	r.git("add", "b")
	r.git("commit", "-q", "-m", "b")
	base := r.ref("refs/heads/integration")
	if _, err := Create(ctx, r.repo, "t1", base, "coder-1", nil); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(r.root, ".worktrees/t1/README"))
	dirty, only, err := status(ctx, r.repo, filepath.Join(r.root, ".worktrees/t1"))
	if err != nil || !dirty || !only {
		t.Fatalf("status: %v %v %v", dirty, only, err)
	}
	r.write(".worktrees/t1/b", "changed\n")
	if _, only, _ := status(ctx, r.repo, filepath.Join(r.root, ".worktrees/t1")); only {
		t.Fatal("a modified file taken for a deletion")
	}
	os.Remove(filepath.Join(r.root, ".worktrees/t1/.git"))
	if _, _, err := status(ctx, r.repo, filepath.Join(r.root, ".worktrees/t1")); err == nil {
		t.Fatal("status without .git answered for the main checkout")
	}
}

// A task branch that holds nothing base lacks (a dead claim's) is moved to
// base by the next Create; one with work of its own is checked out as is.
func TestCreateOnExistingBranch(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	old := r.base
	r.git("branch", "task/t1", old.String())
	r.write("more", "m\n")
	r.git("add", "more")
	r.git("commit", "-q", "-m", "more")
	base := r.ref("refs/heads/integration")
	made, err := Create(ctx, r.repo, "t1", base, "coder-1", nil)
	if err != nil || made {
		t.Fatalf("Create: %v %v", made, err)
	}
	if got := r.ref("refs/heads/task/t1"); got != base {
		t.Fatalf("task/t1 at %s, want base %s", got, base)
	}
	r.git("branch", "task/t2", old.String())
	wt := filepath.Join(r.root, "scratch")
	r.git("worktree", "add", "-q", wt, "task/t2")
	r.write("scratch/own", "o\n")
	r.git("-C", wt, "add", "own")
	r.git("-C", wt, "commit", "-q", "-m", "own")
	r.git("worktree", "remove", wt)
	own := r.ref("refs/heads/task/t2")
	if _, err := Create(ctx, r.repo, "t2", base, "coder-1", nil); err != nil {
		t.Fatal(err)
	}
	if got := r.ref("refs/heads/task/t2"); got != own {
		t.Fatalf("task/t2 moved from its own work %s to %s", own, got)
	}
}

// Undo removes what Create made for a claim that did not commit: the
// branch only when Create made it.
func TestUndo(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	made, err := Create(ctx, r.repo, "t1", r.base, "coder-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := Undo(ctx, r.repo, "t1", made); err != nil {
		t.Fatal(err)
	}
	if r.exists(".worktrees/t1") || r.git("branch", "--list", "task/t1") != "" {
		t.Fatal("left behind")
	}
	r.git("branch", "task/t2")
	made, err = Create(ctx, r.repo, "t2", r.base, "coder-1", nil)
	if err != nil || made {
		t.Fatalf("Create: %v %v", made, err)
	}
	if err := Undo(ctx, r.repo, "t2", made); err != nil {
		t.Fatal(err)
	}
	if r.exists(".worktrees/t2") || r.git("branch", "--list", "task/t2") == "" {
		t.Fatal("Undo deleted a branch it did not make")
	}
	r.sound()
}

// List reads the registry itself: a registration git worktree list dies
// on does not stop it.
func TestListBrokenRegistry(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	if _, err := Create(ctx, r.repo, "t1", r.base, "coder-1", nil); err != nil {
		t.Fatal(err)
	}
	admin := halfMade(t, r, "t2", "commondir-empty", "initializing")
	_ = admin
	infos, err := List(ctx, r.repo)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 {
		t.Fatalf("List: %+v", infos)
	}
	if p, err := CheckedOut(ctx, r.repo, "refs/heads/task/t1"); err != nil || p != filepath.Join(r.root, ".worktrees/t1") {
		t.Fatalf("CheckedOut: %q %v", p, err)
	}
	if p, err := CheckedOut(ctx, r.repo, "refs/heads/integration"); err != nil || p != r.root {
		t.Fatalf("CheckedOut: %q %v", p, err)
	}
}

// Directories under .worktrees/ no worktree is registered at: an empty
// one goes, one with files is named with the command that removes it.
func TestStrays(t *testing.T) {
	r := newRepo(t)
	os.MkdirAll(filepath.Join(r.root, ".worktrees/empty"), 0o755)
	r.write(".worktrees/full/file", "f\n")
	got, err := Strays(r.repo)
	if err != nil {
		t.Fatal(err)
	}
	want := "removed .worktrees/empty: an empty directory no worktree is registered at\n" +
		".worktrees/full is no registered worktree: if nothing in it is needed, rm -rf .worktrees/full"
	if whats(got) != want {
		t.Fatalf("Strays:\n%s\nwant:\n%s", whats(got), want)
	}
	if r.exists(".worktrees/empty") || !r.exists(".worktrees/full/file") {
		t.Fatal("wrong directory removed")
	}
}

func TestParseLock(t *testing.T) {
	for _, c := range []struct {
		reason, what, task, agent string
		pid                       int
	}{
		{"git-liza claim by coder-9: pid 1 on elsewhere", "claim", "", "coder-9", 1},
		{"git-liza claim of t-1 by coder-1: pid 42 on vm since 2026-01-17T10:00:00Z", "claim", "t-1", "coder-1", 42},
		{"git-liza review of t2 by code-reviewer-1: pid 7 on vm since 2026-01-17T10:00:00Z", "review", "t2", "code-reviewer-1", 7},
		{"git-liza merge test of t3: pid 8 on vm", "merge test", "t3", "", 8},
	} {
		l, ok := parseLock(c.reason)
		if !ok || l.what != c.what || l.task != c.task || l.agent != c.agent || l.PID != c.pid {
			t.Errorf("parseLock(%q) = %+v %v", c.reason, l, ok)
		}
	}
	for _, bad := range []string{"", "initializing", "git-liza claim by coder-1", "git-liza claim by x: pid x on y", "mine: pid 1 on vm"} {
		if _, ok := parseLock(bad); ok {
			t.Errorf("parseLock(%q) took it for git-liza's", bad)
		}
	}
}

// A task branch someone has checked out elsewhere (a person's checkout,
// or a worktree of their own) stays when its task worktree is removed, as
// git branch -D would keep it; the worktree itself goes.
func TestRemoveKeepsBranchCheckedOutElsewhere(t *testing.T) {
	for _, where := range []string{"main", "linked"} {
		t.Run(where, func(t *testing.T) {
			r := newRepo(t)
			ctx := context.Background()
			if _, err := Create(ctx, r.repo, "t1", r.base, "coder-1", nil); err != nil {
				t.Fatal(err)
			}
			if err := Unlock(ctx, r.repo, "t1"); err != nil {
				t.Fatal(err)
			}
			// Checked out by hand once its worktree let go of it.
			wt := filepath.Join(r.root, ".worktrees", "t1")
			r.git("-C", wt, "switch", "-q", "--detach")
			other := r.root
			if where == "main" {
				r.git("switch", "-q", "task/t1")
			} else {
				other = filepath.Join(t.TempDir(), "mine")
				r.git("worktree", "add", "-q", other, "task/t1")
			}
			err := Remove(ctx, r.repo, "t1", "refs/heads/integration", false)
			if err == nil || err.Error() != "branch task/t1 is checked out in "+other+": it stays" {
				t.Fatalf("Remove: %v", err)
			}
			if r.exists(".worktrees/t1") {
				t.Error("the task worktree stays")
			}
			if r.git("branch", "--list", "task/t1") == "" {
				t.Error("the branch checked out elsewhere was deleted")
			}
			r.sound()
		})
	}
}

// Create checks the files out after it lets go of the worktree commands'
// lock, and runs the post-checkout hook as git worktree add would: from a
// core.hooksPath of the user's own config, never from the repository's
// hooks directory, which an agent may have written (refstore/contain.go).
func TestCreateRunsPostCheckout(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "hook.out")
	planted := filepath.Join(t.TempDir(), "planted.out")
	r.write(".git/hooks/post-checkout", "#!/bin/sh\necho planted >> "+planted+"\n")
	r.write("userhooks/post-checkout", "#!/bin/sh\necho \"$PWD $*\" >> "+out+"\n")
	for _, h := range []string{".git/hooks/post-checkout", "userhooks/post-checkout"} {
		if err := os.Chmod(filepath.Join(r.root, h), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, []byte("[core]\n\thooksPath = "+filepath.Join(r.root, "userhooks")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	repo, err := refstore.Open(r.root)
	if err != nil {
		t.Fatal(err)
	}
	r.repo = repo
	if _, err := Create(ctx, r.repo, "t1", r.base, "coder-1", nil); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	want := filepath.Join(r.root, ".worktrees", "t1") + " " + strings.Repeat("0", len(r.base.String())) + " " + r.base.String() + " 1\n"
	if string(got) != want {
		t.Errorf("post-checkout ran with %q, want %q", got, want)
	}
	if _, err := os.Stat(planted); err == nil {
		t.Error("the repository's own post-checkout hook ran")
	}
	if b, err := os.ReadFile(filepath.Join(r.root, ".worktrees", "t1", "README")); err != nil || string(b) != "hello\n" {
		t.Errorf("README in the worktree: %q, %v", b, err)
	}
	if info, err := Inspect(ctx, r.repo, "t1"); err != nil || info.Dirty || info.Branch != "task/t1" {
		t.Errorf("after Create: %+v, %v", info, err)
	}
	r.sound()
}

// A claim that dies once git registered its worktree, before the files
// are checked out, leaves a registration without an index: the next
// Recover removes it, and the next claim of the task makes it anew.
func TestCreateKilledBeforeCheckout(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	path, _ := Path(r.repo, "t1")
	if _, err := register(ctx, r.repo, "t1", path, r.base, "coder-1", nil); err != nil {
		t.Fatal(err)
	}
	lock(t, r.admin(".worktrees/t1"), "git-liza claim of t1 by coder-1: "+deadOwner(t))
	got := whats(recoverOK(t, r, holds("refs/heads/integration")))
	if !strings.Contains(got, "removed .worktrees/t1: the worktree the claim of t1 by coder-1") {
		t.Fatalf("repairs:\n%s", got)
	}
	if r.exists(".worktrees/t1") {
		t.Fatal("the unfinished worktree stays")
	}
	if _, err := Create(ctx, r.repo, "t1", r.base, "coder-1", nil); err != nil {
		t.Fatalf("the next claim's Create: %v", err)
	}
	r.sound()
}

// TestFindByOtherNames: a task's registration is found when git named it
// otherwise than the task (the name taken by another worktree: t1 is
// registered as t11, and t11 then as t111), and one moved into place whose
// directory is gone is forgotten by the next claim of the task, as one
// named after it is. find reads only the registrations named after the
// task and the one its .git file names; the rest is git's refusal.
func TestFindByOtherNames(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	r.git("worktree", "add", "-q", "--detach", filepath.Join(r.root, "elsewhere", "t1"))
	for _, id := range []string{"t1", "t11", "t12"} {
		if _, err := Create(ctx, r.repo, id, r.base, "coder-1", nil); err != nil {
			t.Fatalf("Create %s: %v", id, err)
		}
	}
	for id, admin := range map[string]string{"t1": "t11", "t11": "t111", "t12": "t12"} {
		e, err := find(r.repo, id)
		if err != nil || e == nil || filepath.Base(e.admin) != admin || e.id != id {
			t.Fatalf("find %s: %+v, %v; want registration %s", id, e, err, admin)
		}
		if err := Unlock(ctx, r.repo, id); err != nil {
			t.Fatal(err)
		}
		if info, err := Inspect(ctx, r.repo, id); err != nil || !info.Exists || info.Locked != "" || info.Branch != "task/"+id {
			t.Fatalf("Inspect %s: %+v, %v", id, info, err)
		}
	}
	if e, err := find(r.repo, "t2"); e != nil || err != nil {
		t.Fatalf("find t2, never made: %+v, %v", e, err)
	}
	// A worktree moved to .worktrees/t5 keeps its registration's name;
	// its directory removed, the registration stays behind.
	r.git("worktree", "add", "-q", "-b", "side", filepath.Join(r.root, Dir, "side"))
	r.git("worktree", "move", filepath.Join(r.root, Dir, "side"), filepath.Join(r.root, Dir, "t5"))
	if err := os.RemoveAll(filepath.Join(r.root, Dir, "t5")); err != nil {
		t.Fatal(err)
	}
	var notes []string
	if _, err := Create(ctx, r.repo, "t5", r.base, "coder-2", func(s string) { notes = append(notes, s) }); err != nil {
		t.Fatalf("Create t5 over a registration moved into place: %v", err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "forgot the registration of .worktrees/t5") {
		t.Fatalf("notices: %q", notes)
	}
	if e, err := find(r.repo, "t5"); err != nil || e == nil || filepath.Base(e.admin) != "t5" {
		t.Fatalf("find t5: %+v, %v", e, err)
	}
	if _, err := os.Stat(filepath.Join(r.repo.CommonDir, "worktrees", "side")); !os.IsNotExist(err) {
		t.Fatalf("the moved registration is still there: %v", err)
	}
	r.sound()
}
