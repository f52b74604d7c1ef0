package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/agent"
)

// The agent CLIs the presets run, as npm ships them; .ci/run installs each
// with `npm install --prefix $LIZA_AGENT_CLIS/NAME PACKAGE@VERSION`.
var agentCLIs = []struct{ name, program, pkg, version string }{
	{"claude", "claude", "@anthropic-ai/claude-code", "2.1.328"},
	{"codex", "codex", "@openai/codex", "0.169.0"},
	{"gemini", "gemini", "@google/gemini-cli", "0.61.0"},
}

// findCLI finds an agent CLI where .ci/run installs it, else on PATH.
func findCLI(name, program string) (string, bool) {
	if p := agent.CachedCLI(name, program); p != "" {
		return p, true
	}
	if p, err := exec.LookPath(program); err == nil {
		return p, true
	}
	return "", false
}

// TestAgentCLIs runs a planner-less team (one coder, one code reviewer)
// with each preset exactly as shipped, through the real agent CLI pointed
// at a scripted model on 127.0.0.1, from UNCLAIMED to MERGED: as root with
// --sandboxed, and as an unprivileged user with the CLI's own sandbox.
func TestAgentCLIs(t *testing.T) {
	if testing.Short() {
		t.Skip("the agent CLIs are not run with -short")
	}
	e2eOnly(t)
	if _, err := exec.LookPath("git-liza"); err != nil {
		t.Skip("git-liza is not on PATH (TestMain puts it there)")
	}
	for _, c := range agentCLIs {
		for _, sandboxed := range []bool{true, false} {
			mode := "root-sandboxed"
			if !sandboxed {
				mode = "unprivileged"
			}
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				path, ok := findCLI(c.name, c.program)
				if !ok {
					t.Skipf("%s is not installed: .ci/run installs it (npm install --prefix %s %s@%s)", c.program, filepath.Join(agent.CLICache(), c.name), c.pkg, c.version)
				}
				runTeam(t, c.name, path, sandboxed)
			})
		}
	}
}

// teamUser is who runs a team: root with --sandboxed, an unprivileged user
// without.
type teamUser struct {
	uid, gid int
	name     string
}

func unprivileged(t *testing.T) teamUser {
	if os.Geteuid() != 0 {
		return teamUser{uid: os.Geteuid(), gid: os.Getegid()}
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("running as root without setpriv: cannot run the team as an unprivileged user")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("running as root with no user nobody: cannot run the team as an unprivileged user")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return teamUser{uid: uid, gid: gid, name: u.Username}
}

func runTeam(t *testing.T, name, cliPath string, sandboxed bool) {
	who := teamUser{uid: os.Geteuid(), gid: os.Getegid()}
	if sandboxed {
		if os.Geteuid() != 0 {
			t.Skip("the --sandboxed run is the root one: not running as root")
		}
	} else {
		who = unprivileged(t)
	}
	// Not under /tmp: codex will not make the helpers its sandbox runs
	// (codex-linux-sandbox) in a CODEX_HOME under a temporary directory.
	base, err := os.MkdirTemp(varTmp(), "git-liza-agentcli-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	// The team's user must reach its own directories.
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	root := filepath.Join(base, "proj")
	bin := filepath.Join(base, "bin")
	for _, d := range []string{home, root, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The CLI and git-liza where the team's user can run them.
	cliBin := filepath.Dir(cliPath)
	if who.uid != os.Geteuid() {
		cliBin = shareCLI(t, cliPath, filepath.Join(base, "cli"))
	}
	self, _ := exec.LookPath("git-liza")
	if err := copyFile(self, filepath.Join(bin, "git-liza"), 0o755); err != nil {
		t.Fatal(err)
	}

	model := newScriptedModel(t)
	env := cliEnv(t, home, bin+":"+cliBin+":/usr/local/bin:/usr/bin:/bin", model)
	writeFile(t, filepath.Join(base, "probe.sh"), probeScript(filepath.Join(base, "planted.log")))
	writeFile(t, filepath.Join(root, "specs", "vision.md"), "# Vision\n\nhello.txt says hello.\n")
	writeFile(t, filepath.Join(root, "scripts", "integration-test.sh"), "#!/bin/sh\ngrep -q hello hello.txt\n")
	if err := os.Chmod(filepath.Join(root, "scripts", "integration-test.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if who.uid != os.Geteuid() {
		if err := chownAll(base, who.uid, who.gid); err != nil {
			t.Fatal(err)
		}
	}
	run := runAs(t, who, root, env)
	run("git", "init", "-q", "-b", "main")
	run("git", "add", ".")
	run("git", "-c", "user.name=Ada", "-c", "user.email=ada@example.com", "commit", "-q", "-m", "vision")
	run("git", "liza", "init", "--spec", "specs/vision.md", "Say hello")
	run("git", "liza", "hooks", "install")
	run("git", "liza", "task", "add", "--id", "hello", "--desc", "Write hello.txt", "--spec", "specs/vision.md",
		"--done", "hello.txt says hello", "--scope", "IN: hello.txt")

	args := []string{"git", "liza", "run", "--no-planner", "--coders", "1", "--reviewers", "1", "--poll", "200ms", "--cli", name}
	if sandboxed {
		args = append(args, "--sandboxed")
	}
	if name == "gemini" && !sandboxed && agent.ContainerEngine() == "" {
		// What can be tested: the preset is refused before anything is
		// registered or claimed, with one line naming the fix.
		before := run("git", "rev-parse", "refs/liza/state")
		cmd := asUser(who, args...)
		cmd.Dir, cmd.Env = root, env
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 5 || !strings.Contains(string(out), "gemini's own sandbox runs in a docker or podman container, and neither answers here") {
			t.Fatalf("gemini without --sandboxed and no container engine: %v\n%s", err, out)
		}
		if after := run("git", "rev-parse", "refs/liza/state"); after != before {
			t.Fatalf("the refused team moved the board")
		}
		t.Skip("gemini's own sandbox is a docker or podman container (its image comes from a registry), and no container engine answers here: checked that the preset is refused (exit 5, nothing claimed); the team did not run")
	}
	team := asUser(who, args...)
	team.Dir, team.Env = root, env
	rt := startTeam(t, team)
	out, exited, stop := &rt.out, rt.exited, rt.stop
	fail := func(format string, a ...any) {
		t.Helper()
		stop()
		model.logToFile()
		t.Fatalf("%s\nteam output:\n%s\nmodel:\n%s\nboard:\n%s", fmt.Sprintf(format, a...), out.String(), model.report(), show(root, env, who))
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		st := show(root, env, who)
		if strings.Contains(st, "status: MERGED") {
			break
		}
		if strings.Contains(st, "status: BLOCKED") {
			fail("the task was blocked")
		}
		select {
		case err := <-exited:
			exited <- err
			fail("the team stopped before the task was merged: %v", err)
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			fail("the task was not merged within 90 seconds")
		}
	}
	stop()

	// The work is on the integration branch, written and committed by the
	// coder's agent under its own identity, through the CLI's shell tool.
	if got := run("git", "show", "integration:hello.txt"); got != "hello\n" {
		fail("integration:hello.txt = %q", got)
	}
	if got := run("git", "log", "-1", "--format=%an <%ae>", "integration"); got != "coder-1 <coder-1@liza.invalid>\n" {
		fail("the merged commit's author is %q", got)
	}
	board := show(root, env, who)
	for _, want := range []string{"event: pre_execution_checkpoint", "event: submitted", "event: approved", "event: merged", "outcome: done"} {
		if !strings.Contains(board, want) {
			fail("the task's history lacks %q", want)
		}
	}
	// Every state commit, the agents' own and their supervisors' records of
	// each session's end, is what its recorded operation makes: the
	// history verifies by replay.
	if got := run("git", "liza", "validate", "--history"); !strings.HasPrefix(got, "VALID (") {
		fail("validate --history after the run: %s", got)
	}
	// With --sandboxed nothing stops the agent; without, the CLI's own
	// sandbox keeps it to its worktree and the git directory.
	want := "OUTSIDE-READONLY"
	if sandboxed {
		want = "OUTSIDE-WRITABLE"
	}
	if !strings.Contains(model.report(), want) {
		fail("the coder's session did not find the main checkout %s", strings.ToLower(strings.TrimPrefix(want, "OUTSIDE-")))
	}
	// The parts of the git directory with which git runs programs for
	// everyone, and git-liza's own files, are read-only to an agent in its
	// CLI's own sandbox. With --sandboxed the coder could plant; what it
	// planted ran in no one's process but its own session's.
	for _, part := range []string{"config", "hooks", "info", "liza"} {
		want := "GITDIR-READONLY:" + part
		if sandboxed {
			want = "GITDIR-WRITABLE:" + part
		}
		if !strings.Contains(model.report(), want) {
			fail("the coder's session: %s not found", want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(base, "planted.log")); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if !strings.HasSuffix(line, " coder-session") {
				fail("what the coder planted ran elsewhere: %q\n%s", line, b)
			}
		}
	} else if sandboxed && name != "gemini" {
		// (gemini's shell tool runs git with core.fsmonitor and
		// core.hooksPath of its own, so there the plants run nowhere.)
		fail("with --sandboxed the coder's plants never ran, not even in its own session: the probe is broken")
	}
	if n := strings.Count(model.report(), "LIZA-SESSION-DONE"); n < 2 {
		fail("the shell tool ran %d sessions' commands to the end, want 2", n)
	}
	t.Logf("%s %s: UNCLAIMED to MERGED as uid %d", name, map[bool]string{true: "--sandboxed", false: "with its own sandbox"}[sandboxed], who.uid)
}

// varTmp is a directory for test files outside /tmp: /var/tmp when there
// is one, else the default.
func varTmp() string {
	if fi, err := os.Stat("/var/tmp"); err == nil && fi.IsDir() {
		return "/var/tmp"
	}
	return ""
}

// show is the board's one task.
func show(root string, env []string, who teamUser) string {
	cmd := asUser(who, "git", "liza", "show", "hello")
	cmd.Dir, cmd.Env = root, env
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// asUser is a command run as who: directly when that is this process's
// user, else through setpriv.
func asUser(who teamUser, args ...string) *exec.Cmd {
	if who.uid == os.Geteuid() {
		return exec.Command(args[0], args[1:]...)
	}
	full := append([]string{"--reuid=" + strconv.Itoa(who.uid), "--regid=" + strconv.Itoa(who.gid), "--clear-groups", "--"}, args...)
	return exec.Command("setpriv", full...)
}

// runAs is a function that runs a command as who, in dir with env, and
// returns its output; a failure fails the test.
func runAs(t *testing.T, who teamUser, dir string, env []string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		cmd := asUser(who, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
}

// shareCLI puts the agent CLI's npm installation where another user can
// run it (the cache it was installed in may be private), as hard links
// where the file system allows, and returns its bin directory.
func shareCLI(t *testing.T, cliPath, dst string) string {
	t.Helper()
	bin := filepath.Dir(cliPath)
	prefix := filepath.Dir(filepath.Dir(bin)) // .../NAME (node_modules/.bin)
	if filepath.Base(filepath.Dir(bin)) != "node_modules" {
		return bin // not an npm prefix: on PATH, shared already
	}
	if out, err := exec.Command("cp", "-al", prefix, dst).CombinedOutput(); err != nil {
		_ = os.RemoveAll(dst)
		if out, err := exec.Command("cp", "-a", prefix, dst).CombinedOutput(); err != nil {
			t.Fatalf("copy %s: %v\n%s", prefix, err, out)
		}
		_ = out
	}
	if out, err := exec.Command("chmod", "-R", "a+rX", dst).CombinedOutput(); err != nil {
		t.Fatalf("chmod %s: %v\n%s", dst, err, out)
	}
	return filepath.Join(dst, "node_modules", ".bin")
}

func copyFile(src, dst string, mode os.FileMode) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, mode)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func chownAll(dir string, uid, gid int) error {
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

var _ = context.Background

// teamBase makes a directory for a test's team outside /tmp (see varTmp),
// removed after the test, with git-liza copied into its bin; it returns
// the directory, the project root under it and the bin.
func teamBase(t *testing.T, prefix string) (base, root, bin string) {
	t.Helper()
	base, err := os.MkdirTemp(varTmp(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	root, bin = filepath.Join(base, "proj"), filepath.Join(base, "bin")
	self, _ := exec.LookPath("git-liza")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyFile(self, filepath.Join(bin, "git-liza"), 0o755); err != nil {
		t.Fatal(err)
	}
	return base, root, bin
}

// runningTeam is a git liza run started in its own process group.
type runningTeam struct {
	out    bytes.Buffer
	exited chan error
	pid    int
}

// startTeam starts team, its output kept.
func startTeam(t *testing.T, team *exec.Cmd) *runningTeam {
	t.Helper()
	r := &runningTeam{exited: make(chan error, 1)}
	team.Stdout, team.Stderr = &r.out, &r.out
	team.SysProcAttr = groupAttr()
	if err := team.Start(); err != nil {
		t.Fatal(err)
	}
	r.pid = team.Process.Pid
	go func() { r.exited <- team.Wait() }()
	return r
}

// stop stops the team with SIGTERM, and SIGKILL after 30 s.
func (r *runningTeam) stop() {
	_ = signalGroup(r.pid, syscall.SIGTERM)
	select {
	case err := <-r.exited:
		r.exited <- err
	case <-time.After(30 * time.Second):
		_ = signalGroup(r.pid, syscall.SIGKILL)
	}
}
