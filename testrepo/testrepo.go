// Package testrepo makes the repository the tests of several packages
// (agent, mcpserver, ops, web) start from. It is imported by tests only.
package testrepo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// New pins git's environment for the test (a home of its own, no system
// or global config, Ada Operator's identity) and makes a repository in a
// temporary directory, on branch main, with one commit holding
// specs/vision.md and the files given (path to text; a text starting with
// "#!" is executable). It returns the repository's directory, and skips
// the test when git is not installed.
func New(tb testing.TB, files map[string]string) string {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git not found")
	}
	dir := tb.TempDir()
	for k, v := range map[string]string{
		"HOME": filepath.Join(dir, "home"), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.DevNull,
		"GIT_AUTHOR_NAME": "Ada Operator", "GIT_AUTHOR_EMAIL": "ada@example.com",
		"GIT_COMMITTER_NAME": "Ada Operator", "GIT_COMMITTER_EMAIL": "ada@example.com",
	} {
		tb.Setenv(k, v)
	}
	root := filepath.Join(dir, "proj")
	all := map[string]string{"specs/vision.md": "# Vision\n"}
	for p, text := range files {
		all[p] = text
	}
	for p, text := range all {
		path := filepath.Join(root, filepath.FromSlash(p))
		mode := os.FileMode(0o644)
		if strings.HasPrefix(text, "#!") {
			mode = 0o755
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), mode); err != nil {
			tb.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "specs"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return root
}
