package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/liza-dev/git-liza/commands"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"git-liza": func() {
			os.Exit(commands.Run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// TestScript runs testdata/script/*.txtar. UPDATE_SCRIPTS=1 rewrites the
// expected output in place.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup:               setupScript,
		Condition:           scriptCondition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"repo":     cmdRepo,
			"exits":    cmdExits,
			"freeport": cmdFreePort,
		},
	})
}

// scriptCondition adds [root]: the script runs as uid 0.
func scriptCondition(cond string) (bool, error) {
	if cond == "root" {
		return os.Geteuid() == 0, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// setupScript pins everything that would make output or hashes vary: home,
// git configuration, identities, dates and the blackboard's clock.
func setupScript(env *testscript.Env) error {
	home := filepath.Join(env.WorkDir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	for k, v := range map[string]string{
		"HOME":                home,
		"XDG_CONFIG_HOME":     filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_CONFIG_GLOBAL":   filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME":     "Ada Operator",
		"GIT_AUTHOR_EMAIL":    "ada@example.com",
		"GIT_COMMITTER_NAME":  "Ada Operator",
		"GIT_COMMITTER_EMAIL": "ada@example.com",
		"GIT_AUTHOR_DATE":     "2026-01-17T10:00:00Z",
		"GIT_COMMITTER_DATE":  "2026-01-17T10:00:00Z",
		"LIZA_NOW":            "2026-01-17T10:00:00Z",
		"LIZA_AGENT_ID":       "",
		"TZ":                  "UTC",
	} {
		env.Setenv(k, v)
	}
	return os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"), 0o644)
}

// cmdRepo makes a repository in DIR (default: the current directory) with
// one commit holding specs/vision.md, as a project starting Liza has.
func cmdRepo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 1 {
		ts.Fatalf("usage: repo [DIR]")
	}
	dir := ts.MkAbs(".")
	if len(args) == 1 {
		dir = ts.MkAbs(args[0])
	}
	ts.Check(os.MkdirAll(filepath.Join(dir, "specs"), 0o755))
	ts.Check(os.WriteFile(filepath.Join(dir, "specs", "vision.md"), []byte("# Vision\n\n## Retry\nRetry every API call.\n"), 0o644))
	for _, a := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "specs"},
		{"commit", "-q", "-m", "vision"},
	} {
		ts.Check(ts.Exec("git", append([]string{"-C", dir}, a...)...))
	}
}

// cmdExits runs a program like exec and checks its exit code: exits N PROG
// ARGS... Its stdout and stderr are kept for the stdout and stderr commands.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
}

// cmdFreePort sets the environment variable VAR to a TCP port on 127.0.0.1
// that is free now: freeport VAR.
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	port := l.Addr().(*net.TCPAddr).Port
	ts.Check(l.Close())
	ts.Setenv(args[0], strconv.Itoa(port))
}
