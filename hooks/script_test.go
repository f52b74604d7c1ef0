package hooks

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestScriptShape(t *testing.T) {
	for _, name := range AllHooks() {
		for _, chained := range []bool{false, true} {
			s := Script(name, ".git/hooks/"+name, chained)
			lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
			if lines[0] != "#!/bin/sh" || lines[1] != Marker {
				t.Errorf("%s (chained %v) starts %q", name, chained, lines[:2])
			}
			if !IsOurs([]byte(s)) {
				t.Errorf("%s (chained %v) is not recognised as ours", name, chained)
			}
			guard := `command -v git-liza >/dev/null 2>&1 || { echo >&2 "git-liza is not on PATH but this repository has its ` + name + ` hook (.git/hooks/` + name + `); remove the hook or install git-liza"; exit 2; }`
			if name == PreReceive {
				guard = "\t\techo >&2 \"git-liza is not on PATH on this server: pushes to refs/liza/, the integration branch and task branches are refused until it is (.git/hooks/pre-receive)\"; exit 1 ;;"
			}
			if !strings.Contains(s, "\n"+guard+"\n") {
				t.Errorf("%s (chained %v) lacks the guard:\n%s", name, chained, s)
			}
			if last := lines[len(lines)-1]; !strings.HasSuffix(last, `git liza hook `+name+` "$@"`) {
				t.Errorf("%s (chained %v) ends %q", name, chained, last)
			}
			if got := strings.Contains(s, name+ChainSuffix); got != chained {
				t.Errorf("%s (chained %v) names the chained hook: %v", name, chained, got)
			}
			if out, err := exec.Command("sh", "-n", "-c", s).CombinedOutput(); err != nil {
				t.Errorf("%s (chained %v): sh -n: %v %s", name, chained, err, out)
			}
		}
	}
	// The thin scripts are exactly git-lfs's shape.
	want := "#!/bin/sh\n" + Marker + "\n" +
		`command -v git-liza >/dev/null 2>&1 || { echo >&2 "git-liza is not on PATH but this repository has its pre-commit hook (.git/hooks/pre-commit); remove the hook or install git-liza"; exit 2; }` + "\n" +
		`exec git liza hook pre-commit "$@"` + "\n"
	if got := Script(PreCommit, ".git/hooks/pre-commit", false); got != want {
		t.Errorf("pre-commit script:\n%s\nwant:\n%s", got, want)
	}
}

func TestScriptQuotesDisplayPath(t *testing.T) {
	s := Script(PreCommit, `/tmp/a "b" $HOME/`+"`x`", false)
	if !strings.Contains(s, `(/tmp/a \"b\" \$HOME/\`+"`x\\`"+`)`) {
		t.Errorf("display path not escaped:\n%s", s)
	}
}

// scriptRig runs hook scripts with fake git and git-liza binaries that
// record their arguments and standard input.
type scriptRig struct {
	t    *testing.T
	dir  string // the hooks directory
	bin  string
	logs string
}

func newRig(t *testing.T) *scriptRig {
	r := &scriptRig{t: t, dir: filepath.Join(t.TempDir(), "hooks"), bin: t.TempDir(), logs: t.TempDir()}
	fake := "#!/bin/sh\nif [ \"$1\" = cat-file ]; then [ -n \"$FAKE_LIZA_YAML\" ] && cat \"$FAKE_LIZA_YAML\"; exit 0; fi\n" +
		"{ echo \"args: $*\"; cat; } > \"$LOGS/git\"\nexit ${FAKE_GIT_EXIT:-0}\n"
	writeFile(t, filepath.Join(r.bin, "git"), fake, 0o755)
	writeFile(t, filepath.Join(r.bin, "git-liza"), "#!/bin/sh\nexit 0\n", 0o755)
	return r
}

// chain puts a foreign hook that logs its input and exits with code.
func (r *scriptRig) chain(name string, code int) {
	writeFile(r.t, filepath.Join(r.dir, name+ChainSuffix),
		"#!/bin/sh\n{ echo \"args: $*\"; cat; } > \"$LOGS/chained\"\nexit "+strconv.Itoa(code)+"\n", 0o755)
}

// run installs the script for name and runs it; it returns the exit code
// and what the fake git and the chained hook got ("" when not run).
func (r *scriptRig) run(name string, chained bool, stdin string, env []string, args ...string) (code int, gitGot, chainedGot string) {
	r.t.Helper()
	for _, f := range []string{"git", "chained"} {
		os.Remove(filepath.Join(r.logs, f))
	}
	path := filepath.Join(r.dir, name)
	writeFile(r.t, path, Script(name, "hooks/"+name, chained), 0o755)
	cmd := exec.Command(path, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append([]string{"PATH=" + r.bin + ":/usr/bin:/bin", "LOGS=" + r.logs}, env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatalf("%s: %v %s", name, err, out)
	}
	read := func(f string) string {
		b, err := os.ReadFile(filepath.Join(r.logs, f))
		if err != nil {
			return ""
		}
		return string(b)
	}
	return code, read("git"), read("chained")
}

func TestReferenceTransactionScriptFilters(t *testing.T) {
	r := newRig(t)
	z := strings.Repeat("0", 40)
	a := strings.Repeat("a", 40)
	state := z + " " + a + " refs/liza/state\n"
	branch := z + " " + a + " refs/heads/main\n"
	for _, tc := range []struct {
		name, input, arg string
		env              []string
		runs             bool
	}{
		{"state ref prepared", branch + state, "prepared", nil, true},
		{"state ref alone", state, "prepared", nil, true},
		{"other refs", branch, "prepared", nil, false},
		{"a longer name", z + " " + a + " refs/liza/state-old\n", "prepared", nil, false},
		{"committed", state, "committed", nil, false},
		{"aborted", state, "aborted", nil, false},
		{"git-liza's own update", state, "prepared", []string{"GIT_LIZA_REF_UPDATE=1"}, false},
	} {
		code, got, _ := r.run(ReferenceTransaction, false, tc.input, tc.env, tc.arg)
		if code != 0 {
			t.Errorf("%s: exit %d", tc.name, code)
		}
		want := ""
		if tc.runs {
			want = "args: liza hook reference-transaction " + tc.arg + "\n" + tc.input
		}
		if got != want {
			t.Errorf("%s: git got %q, want %q", tc.name, got, want)
		}
	}
	// git-liza's answer is the hook's.
	code, _, _ := r.run(ReferenceTransaction, false, state, []string{"FAKE_GIT_EXIT=1"}, "prepared")
	if code != 1 {
		t.Errorf("refusal: exit %d, want 1", code)
	}
}

func TestChainedHooksGetTheSameInput(t *testing.T) {
	r := newRig(t)
	z := strings.Repeat("0", 40)
	a := strings.Repeat("a", 40)
	input := z + " " + a + " refs/heads/main\n" + a + " " + z + " refs/liza/state\n"

	r.chain(ReferenceTransaction, 0)
	code, got, chained := r.run(ReferenceTransaction, true, input, nil, "prepared")
	if code != 0 || chained != "args: prepared\n"+input || got != "args: liza hook reference-transaction prepared\n"+input {
		t.Errorf("reference-transaction: exit %d, chained got %q, git-liza got %q", code, chained, got)
	}
	// The chained hook sees every transaction, ours only those it guards.
	code, got, chained = r.run(ReferenceTransaction, true, z+" "+a+" refs/heads/x\n", nil, "committed")
	if code != 0 || chained != "args: committed\n"+z+" "+a+" refs/heads/x\n" || got != "" {
		t.Errorf("other refs: exit %d, chained got %q, git-liza got %q", code, chained, got)
	}
	// A chained hook that refuses decides, and ours does not run.
	r.chain(ReferenceTransaction, 3)
	code, got, _ = r.run(ReferenceTransaction, true, input, nil, "prepared")
	if code != 3 || got != "" {
		t.Errorf("refusing chained hook: exit %d, git-liza got %q", code, got)
	}

	r.chain(PreReceive, 0)
	code, got, chained = r.run(PreReceive, true, input, nil)
	if code != 0 || chained != "args: \n"+input || got != "args: liza hook pre-receive\n"+input {
		t.Errorf("pre-receive: exit %d, chained got %q, git-liza got %q", code, chained, got)
	}
	// Empty input stays empty, and is none of git-liza's business.
	code, got, chained = r.run(PreReceive, true, "", nil)
	if code != 0 || chained != "args: \n" || strings.Contains(got, "liza hook") {
		t.Errorf("pre-receive, no input: exit %d, chained got %q, git got %q", code, chained, got)
	}
}

// TestPreReceiveScriptFilters: the server hook starts git-liza for a push
// that touches refs/liza/ or any branch (git-liza knows from the board
// which is the integration branch); a tag passes. Where git-liza is not
// installed, a push that touches refs/liza/, the integration branch or a
// task branch is refused, and any other passes.
func TestPreReceiveScriptFilters(t *testing.T) {
	r := newRig(t)
	z := strings.Repeat("0", 40)
	a := strings.Repeat("a", 40)
	for _, tc := range []struct {
		name, input string
		runs        bool
	}{
		{"a branch", z + " " + a + " refs/heads/main\n", true},
		{"a tag", z + " " + a + " refs/tags/v1\n", false},
		{"the state", z + " " + a + " refs/liza/state\n", true},
		{"another ref under refs/liza", z + " " + a + " refs/liza/offline/x\n", true},
		{"the integration branch", z + " " + a + " refs/heads/main\n" + z + " " + a + " refs/heads/integration\n", true},
		{"a longer branch name", z + " " + a + " refs/heads/integration-old\n", true},
		{"notes", z + " " + a + " refs/notes/commits\n", false},
	} {
		code, got, _ := r.run(PreReceive, false, tc.input, nil)
		if ran := strings.Contains(got, "liza hook pre-receive"); code != 0 || ran != tc.runs {
			t.Errorf("%s: exit %d, git-liza ran %v, want %v", tc.name, code, ran, tc.runs)
		}
	}
	os.Remove(filepath.Join(r.bin, "git-liza"))
	if code, _, _ := r.run(PreReceive, false, z+" "+a+" refs/heads/main\n", nil); code != 0 {
		t.Errorf("an ordinary push without git-liza on PATH: exit %d", code)
	}
	for _, ref := range []string{"refs/liza/state", "refs/heads/integration", "refs/heads/task/t1"} {
		if code, _, _ := r.run(PreReceive, false, z+" "+a+" "+ref+"\n", nil); code != 1 {
			t.Errorf("a push to %s without git-liza on PATH: exit %d, want 1", ref, code)
		}
	}
}

func TestChainedHookStatus(t *testing.T) {
	r := newRig(t)
	r.chain(PreCommit, 1)
	code, got, chained := r.run(PreCommit, true, "", nil)
	if code != 1 || got != "" || chained != "args: \n" {
		t.Errorf("pre-commit with a failing chained hook: exit %d, git-liza got %q, chained %q", code, got, chained)
	}
	r.chain(CommitMsg, 0)
	code, got, chained = r.run(CommitMsg, true, "", nil, ".git/COMMIT_EDITMSG")
	if code != 0 || got != "args: liza hook commit-msg .git/COMMIT_EDITMSG\n" || chained != "args: .git/COMMIT_EDITMSG\n" {
		t.Errorf("commit-msg: exit %d, git-liza got %q, chained %q", code, got, chained)
	}
	// git ignores post-commit's status: ours runs after a failing one.
	r.chain(PostCommit, 1)
	code, got, _ = r.run(PostCommit, true, "", nil)
	if code != 0 || got != "args: liza hook post-commit\n" {
		t.Errorf("post-commit with a failing chained hook: exit %d, git-liza got %q", code, got)
	}
	// A chained file that is not executable is skipped, as git would.
	os.Chmod(filepath.Join(r.dir, PreCommit+ChainSuffix), 0o644)
	code, got, chained = r.run(PreCommit, true, "", nil)
	if code != 0 || got == "" || chained != "" {
		t.Errorf("non-executable chained hook: exit %d, git-liza got %q, chained %q", code, got, chained)
	}
}

func TestScriptWithoutGitLiza(t *testing.T) {
	r := newRig(t)
	os.Remove(filepath.Join(r.bin, "git-liza"))
	path := filepath.Join(r.dir, PreCommit)
	writeFile(t, path, Script(PreCommit, ".git/hooks/pre-commit", false), 0o755)
	cmd := exec.Command(path)
	cmd.Env = []string{"PATH=" + r.bin + ":/usr/bin:/bin", "LOGS=" + r.logs}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit: %v", err)
	}
	want := "git-liza is not on PATH but this repository has its pre-commit hook (.git/hooks/pre-commit); remove the hook or install git-liza\n"
	if string(out) != want {
		t.Errorf("output %q, want %q", out, want)
	}
}

// Without git-liza on PATH, the server hook finds the integration branch
// in the board's liza.yaml itself: config.integration_branch, however YAML
// quotes it, and never a line of an agent's text that looks like it (a
// model name or a goal written with such a line, indented deeper, and
// before config: in the file).
func TestPreReceiveFindsTheIntegrationBranch(t *testing.T) {
	r := newRig(t)
	os.Remove(filepath.Join(r.bin, "git-liza"))
	z := strings.Repeat("0", 40)
	a := strings.Repeat("a", 40)
	yaml := filepath.Join(t.TempDir(), "liza.yaml")
	for _, tc := range []struct {
		name, doc, branch string
	}{
		{"a decoy in the goal's spend", "goal:\n  id: g\n  spend:\n    model: |-\n      gpt-5\n        integration_branch: decoy\n  description: |-\n    x\n  integration_branch: decoy2\nconfig:\n  heartbeat_interval: 60\n  integration_branch: integration\n  max_in_flight: 4\n", "integration"},
		{"a quoted name", "goal:\n  id: g\nconfig:\n  integration_branch: '@rel'\n", "@rel"},
		{"a double-quoted name", "goal:\n  id: g\nconfig:\n  integration_branch: \"!dev\"\nsprint:\n  integration_branch: nope\n", "!dev"},
	} {
		writeFile(t, yaml, tc.doc, 0o644)
		env := []string{"FAKE_LIZA_YAML=" + yaml}
		if code, _, _ := r.run(PreReceive, false, z+" "+a+" refs/heads/"+tc.branch+"\n", env); code != 1 {
			t.Errorf("%s: a push to %s without git-liza: exit %d, want 1 (refused)", tc.name, tc.branch, code)
		}
		for _, other := range []string{"decoy", "decoy2", "nope", "main"} {
			if code, _, _ := r.run(PreReceive, false, z+" "+a+" refs/heads/"+other+"\n", env); code != 0 {
				t.Errorf("%s: a push to %s without git-liza: exit %d, want 0", tc.name, other, code)
			}
		}
	}
}
