package ops_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/ops"
)

// TestSpendCacheOfThePreviousRelease: the spend cache keeps each task
// file's sessions by the file's object id, as the reader of its day read
// them. The previous release's reader dropped the sessions of a file whose
// events are spelled another way than the encoder writes them (quoted,
// tagged, commented: TestSpendHistoryHandWritten), and wrote that down in
// .git/liza/cache/spend under version 1; this release, reading the same
// version, took the entry as it was, and usage and the spend line of status
// went on counting nothing for those sessions after the upgrade. Here the
// cache holds, as the previous release would have left it, no session for
// a file that has one: it must not be believed.
func TestSpendCacheOfThePreviousRelease(t *testing.T) {
	svc := spendBoard(t, 2)
	ctx := context.Background()
	out, err := exec.Command("git", "-C", svc.Repo.Dir(), "ls-tree", "-r", "refs/liza/state").Output()
	if err != nil {
		t.Fatal(err)
	}
	var blob string
	for _, line := range strings.Split(string(out), "\n") {
		if meta, path, ok := strings.Cut(line, "\t"); ok && strings.HasSuffix(path, "/task-0.yaml") {
			blob = strings.Fields(meta)[2]
		}
	}
	if blob == "" {
		t.Fatalf("no task-0.yaml in\n%s", out)
	}
	old, _ := json.Marshal(map[string]any{"version": 1, "files": map[string]any{blob: nil}})
	cache := filepath.Join(svc.Repo.CommonDir, "liza", "cache", "spend")
	if err := os.MkdirAll(filepath.Dir(cache), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cache, old, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := svc.Usage(ctx, ops.UsageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total.Sessions != 1 {
		t.Errorf("usage with the previous release's spend cache: %d sessions, want 1", rep.Total.Sessions)
	}
}
