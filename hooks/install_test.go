package hooks

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

const foreign = "#!/bin/sh\necho mine\n"

func testLocation(t *testing.T) Location {
	return Location{Dir: filepath.Join(t.TempDir(), "hooks"), Display: ".git/hooks"}
}

func actions(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.String())
	}
	return out
}

func TestInstallTwiceChangesNothing(t *testing.T) {
	l := testLocation(t)
	got, err := l.Install(ClientHooks, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pre-commit: installed", "commit-msg: installed", "post-commit: installed", "reference-transaction: installed"}
	if !reflect.DeepEqual(actions(got), want) {
		t.Fatalf("first install: %q", actions(got))
	}
	stamps := map[string]time.Time{}
	for _, n := range ClientHooks {
		fi, err := os.Stat(l.Path(n))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o755 {
			t.Errorf("%s mode %v", n, fi.Mode())
		}
		if readFile(t, l.Path(n)) != l.Script(n, false) {
			t.Errorf("%s is not the script", n)
		}
		stamps[n] = fi.ModTime()
	}
	time.Sleep(10 * time.Millisecond)
	got, err = l.Install(ClientHooks, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range got {
		if c.Action != AlreadyInstalled {
			t.Errorf("second install: %s", c)
		}
		if fi, _ := os.Stat(l.Path(c.Name)); !fi.ModTime().Equal(stamps[c.Name]) {
			t.Errorf("second install rewrote %s", c.Name)
		}
	}
	entries, _ := os.ReadDir(l.Dir)
	if len(entries) != len(ClientHooks) {
		t.Errorf("hooks directory holds %d files", len(entries))
	}
}

func TestInstallUpdatesAnOlderScriptOfOurs(t *testing.T) {
	l := testLocation(t)
	writeFile(t, l.Path(PreCommit), "#!/bin/sh\n"+Marker+"\nexec git liza hook pre-commit --old\n", 0o755)
	st, err := l.Status([]string{PreCommit})
	if err != nil || st[0].String() != "ours (outdated: run git liza hooks install)" {
		t.Fatalf("status %v %v", st, err)
	}
	got, err := l.Install([]string{PreCommit}, false)
	if err != nil || got[0].Action != Updated {
		t.Fatalf("install: %v %v", got, err)
	}
	if readFile(t, l.Path(PreCommit)) != l.Script(PreCommit, false) {
		t.Error("not rewritten")
	}
}

func TestInstallRefusesForeignHooks(t *testing.T) {
	l := testLocation(t)
	writeFile(t, l.Path(PreCommit), foreign, 0o700)
	_, err := l.Install(ClientHooks, false)
	var ce *contracts.Error
	if !errors.As(err, &ce) || ce.Code != contracts.CodeInvalid {
		t.Fatalf("err = %v", err)
	}
	want := ".git/hooks/pre-commit is not git-liza's: move it away, or pass --force to keep it as .git/hooks/pre-commit.liza-chained and run it before git-liza's"
	if err.Error() != want {
		t.Errorf("err = %q", err)
	}
	// Nothing was written.
	if readFile(t, l.Path(PreCommit)) != foreign {
		t.Error("foreign hook changed")
	}
	if _, err := os.Stat(l.Path(CommitMsg)); !os.IsNotExist(err) {
		t.Error("commit-msg written despite the refusal")
	}
}

func TestForceChainsAndUninstallRestores(t *testing.T) {
	l := testLocation(t)
	writeFile(t, l.Path(PreCommit), foreign, 0o700)
	writeFile(t, l.Path("pre-push"), foreign, 0o755)
	got, err := l.Install(ClientHooks, true)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].String() != "pre-commit: installed, running the hook that was there (kept as pre-commit.liza-chained) first" {
		t.Errorf("install: %q", actions(got))
	}
	kept := l.Path(PreCommit + ChainSuffix)
	if readFile(t, kept) != foreign {
		t.Error("foreign hook not kept")
	}
	if fi, _ := os.Stat(kept); fi.Mode().Perm() != 0o700 {
		t.Errorf("kept hook mode %v", fi.Mode())
	}
	if readFile(t, l.Path(PreCommit)) != l.Script(PreCommit, true) {
		t.Error("pre-commit is not the chaining script")
	}
	st, _ := l.Status(ClientHooks)
	if st[0].String() != "ours chaining pre-commit.liza-chained" || st[1].String() != "ours" {
		t.Errorf("status %v", st)
	}
	// Installing again keeps the chain, byte for byte.
	if got, err := l.Install(ClientHooks, false); err != nil || got[0].Action != AlreadyInstalled {
		t.Errorf("reinstall: %v %v", got, err)
	}

	got, err = l.Uninstall(AllHooks())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pre-commit: removed, the hook it ran put back from pre-commit.liza-chained",
		"commit-msg: removed", "post-commit: removed", "reference-transaction: removed",
	}
	if !reflect.DeepEqual(actions(got), want) {
		t.Errorf("uninstall: %q", actions(got))
	}
	if readFile(t, l.Path(PreCommit)) != foreign || readFile(t, l.Path("pre-push")) != foreign {
		t.Error("foreign hooks not restored or not left alone")
	}
	if _, err := os.Stat(kept); !os.IsNotExist(err) {
		t.Error("chained file left behind")
	}
	// Uninstalling again touches nothing and says so.
	got, _ = l.Uninstall(AllHooks())
	if !reflect.DeepEqual(actions(got), []string{"pre-commit: not git-liza's, left alone"}) {
		t.Errorf("second uninstall: %q", actions(got))
	}
}

func TestForceRefusesToOverwriteAKeptHook(t *testing.T) {
	l := testLocation(t)
	writeFile(t, l.Path(PreCommit), foreign, 0o755)
	writeFile(t, l.Path(PreCommit+ChainSuffix), "#!/bin/sh\necho older\n", 0o755)
	_, err := l.Install([]string{PreCommit}, true)
	if err == nil || !strings.Contains(err.Error(), "pre-commit.liza-chained already exists") {
		t.Fatalf("err = %v", err)
	}
	if readFile(t, l.Path(PreCommit)) != foreign {
		t.Error("foreign hook changed")
	}
}

func TestUninstallRestoresAKeptHookWhenOursIsGone(t *testing.T) {
	l := testLocation(t)
	writeFile(t, l.Path(CommitMsg+ChainSuffix), foreign, 0o755)
	got, err := l.Uninstall([]string{CommitMsg})
	if err != nil || len(got) != 1 || got[0].Chained == "" {
		t.Fatalf("uninstall: %v %v", got, err)
	}
	if readFile(t, l.Path(CommitMsg)) != foreign {
		t.Error("not restored")
	}
}

func TestLocate(t *testing.T) {
	dir := newRepo(t)
	open := func(d string) Location {
		t.Helper()
		repo, err := refstore.Open(d)
		if err != nil {
			t.Fatal(err)
		}
		l, err := Locate(repo)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	real := func(p string) string {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			return p
		}
		return r
	}
	l := open(dir)
	if l.Display != ".git/hooks" || real(l.Dir) != real(filepath.Join(dir, ".git", "hooks")) {
		t.Errorf("default: %+v", l)
	}
	// A linked worktree shares the main checkout's hooks.
	wt := filepath.Join(dir, "..", filepath.Base(dir)+"-wt")
	git(t, dir, "worktree", "add", "-q", wt, "-b", "side")
	if lw := open(wt); real(lw.Dir) != real(l.Dir) || lw.Display != ".git/hooks" {
		t.Errorf("linked worktree: %+v", lw)
	}
	// core.hooksPath, relative to the top of the work tree, from a subdirectory.
	git(t, dir, "config", "core.hooksPath", ".githooks")
	sub := filepath.Join(dir, "sub")
	os.MkdirAll(sub, 0o755)
	if l := open(sub); l.Display != ".githooks" || real(filepath.Dir(l.Dir)) != real(dir) || l.Relative != ".githooks" {
		t.Errorf("relative core.hooksPath: %+v", l)
	}
	// From a linked worktree, a relative core.hooksPath is the main
	// checkout's directory (git would take the worktree's own), and
	// Install refuses it.
	if l := open(wt); l.Display != ".githooks" || real(filepath.Dir(l.Dir)) != real(dir) {
		t.Errorf("relative core.hooksPath from a linked worktree: %+v", l)
	} else if _, err := l.Install(ClientHooks, true); err == nil || !strings.Contains(err.Error(), "core.hooksPath is relative") {
		t.Errorf("install with a relative core.hooksPath: %v", err)
	}
	abs := filepath.Join(t.TempDir(), "shared-hooks")
	git(t, dir, "config", "core.hooksPath", abs)
	if l := open(dir); l.Dir != abs || l.Display != abs {
		t.Errorf("absolute core.hooksPath: %+v", l)
	}
	// A bare repository.
	bare := filepath.Join(t.TempDir(), "srv.git")
	git(t, dir, "init", "-q", "--bare", bare)
	if l := open(bare); l.Display != "hooks" || filepath.Base(l.Dir) != "hooks" {
		t.Errorf("bare: %+v", l)
	}
}

// A hook manager's script that runs git-liza's handler, from its own text
// or from the manager's configuration, is recognised as running it; the
// same script without it is foreign.
func TestStatusRecognisesHookManagers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		hooksDir string            // relative to the top of the checkout
		files    map[string]string // relative to the top
		want     string
	}{
		{"husky 9", ".husky/_", map[string]string{
			".husky/_/pre-commit": "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"\n",
			".husky/pre-commit":   "npm test\ngit liza hook pre-commit \"$@\"\n",
		}, "git-liza's handler, run by .husky/pre-commit (husky)"},
		{"husky 9 without it", ".husky/_", map[string]string{
			".husky/_/pre-commit": "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"\n",
			".husky/pre-commit":   "npm test\ngit liza hook pre-commit-msg\n",
		}, "foreign"},
		{"pre-commit framework", ".git/hooks", map[string]string{
			".git/hooks/pre-commit":   "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\nexec pre-commit hook-impl\n",
			".pre-commit-config.yaml": "repos:\n- repo: local\n  hooks:\n  - id: liza\n    name: git-liza\n    entry: git liza hook pre-commit\n    language: system\n",
		}, "git-liza's handler, run by .pre-commit-config.yaml (pre-commit)"},
		{"lefthook", ".git/hooks", map[string]string{
			".git/hooks/pre-commit": "#!/bin/sh\ncall_lefthook()\n{\n  lefthook \"$@\"\n}\ncall_lefthook run \"pre-commit\" \"$@\"\n",
			"lefthook.yml":          "pre-commit:\n  commands:\n    liza:\n      run: git-liza hook pre-commit\n",
		}, "git-liza's handler, run by lefthook.yml (lefthook)"},
		{"lefthook without it", ".git/hooks", map[string]string{
			".git/hooks/pre-commit": "#!/bin/sh\ncall_lefthook run \"pre-commit\" \"$@\"\n",
			"lefthook.yml":          "pre-commit:\n  commands:\n    lint:\n      run: make lint\n",
		}, "foreign"},
		{"a plain hook", ".git/hooks", map[string]string{
			".git/hooks/pre-commit": "#!/bin/sh\nmake lint && git liza hook pre-commit\n",
		}, "git-liza's handler, run by .git/hooks/pre-commit"},
	} {
		top := t.TempDir()
		for f, content := range tc.files {
			writeFile(t, filepath.Join(top, filepath.FromSlash(f)), content, 0o755)
		}
		l := Location{Dir: filepath.Join(top, filepath.FromSlash(tc.hooksDir)), Display: tc.hooksDir, top: top}
		st, err := l.Status([]string{PreCommit})
		if err != nil {
			t.Fatal(err)
		}
		if got := st[0].String(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		// Install leaves a hook that runs the handler as it is.
		if tc.want != "foreign" {
			before := readFile(t, l.Path(PreCommit))
			got, err := l.Install([]string{PreCommit}, false)
			if err != nil || len(got) != 1 || got[0].Action != RunByManager || readFile(t, l.Path(PreCommit)) != before {
				t.Errorf("%s: install %v %v", tc.name, got, err)
			}
		}
	}
}
