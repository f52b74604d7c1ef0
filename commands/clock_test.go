package commands

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/refstore"
)

// TestShippedBinaryIgnoresClockOverride: Run, what main calls, takes the
// time from the system clock whatever LIZA_NOW says: an agent that sets it
// cannot date its operations, or hold a claim until 2099.
func TestShippedBinaryIgnoresClockOverride(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	dir := t.TempDir()
	for k, v := range map[string]string{
		"HOME": dir, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.DevNull,
		"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com",
		"GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.com",
		"LIZA_NOW": "2099-01-01T00:00:00Z", "LIZA_AGENT_ID": "",
	} {
		t.Setenv(k, v)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "first"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	t.Chdir(dir)
	var stderr bytes.Buffer
	before := time.Now().Add(-time.Second)
	if code := Run(context.Background(), []string{"git-liza", "init", "goal"}, strings.NewReader(""), &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr.String())
	}
	repo, err := refstore.Open(filepath.Clean(dir))
	if err != nil {
		t.Fatal(err)
	}
	tip, _, err := repo.ReadRef(refstore.StateRef)
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.ReadCommit(tip)
	if err != nil {
		t.Fatal(err)
	}
	if when := c.Author.When; when.Before(before.Truncate(time.Second)) || when.After(time.Now().Add(time.Second)) {
		t.Fatalf("the state commit is dated %s with LIZA_NOW=2099-01-01T00:00:00Z; want the system clock's time", when)
	}
}
