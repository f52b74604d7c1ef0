package ops_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/ops"
)

// TestDerivedTipRemembered: a board that records no integration tip (made
// under rule set 2, or imported without it) finds the tip in its history,
// reading back commit by commit up to its last merge or its init: on a
// board with a long history, every claim read hundreds of commits. What
// was found for a state commit is remembered in the trust directory, and
// the next operation reads back only as far as that commit.
func TestDerivedTipRemembered(t *testing.T) {
	human, root, _ := oldBoard(t)
	ctx := context.Background()
	ok := succeeds(t)
	// The first claim reads back to the init, and remembers it.
	ok(serviceAt(t, human, "coder-1", 0).Claim(ctx, ops.ClaimRequest{Task: "a"}))
	memo := filepath.Join(cas.TrustDir(human.Repo.CommonDir), "derived-tip")
	if _, err := os.Stat(memo); err != nil {
		t.Fatalf("nothing remembered: %v", err)
	}

	// What is remembered is what the next claim goes by: told that the
	// tip's history put the branch elsewhere, it refuses.
	elsewhere := git(t, root, "commit-tree", "-m", "elsewhere", "integration^{tree}")
	if err := os.WriteFile(memo, []byte(fmt.Sprintf("%s 1 0 %s\n", stateTip(t, human), elsewhere)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := serviceAt(t, human, "coder-2", 0).Claim(ctx, ops.ClaimRequest{Task: "b"})
	var moved *ops.IntegrationMismatch
	if !errors.As(err, &moved) || moved.Recorded.String() != elsewhere {
		t.Fatalf("a claim on a remembered tip elsewhere: %v", err)
	}

	// A remembered line that does not parse is read past: the history
	// says where the branch is.
	if err := os.WriteFile(memo, []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok(serviceAt(t, human, "coder-2", 0).Claim(ctx, ops.ClaimRequest{Task: "b"}))
	ok(serviceAt(t, human, "coder-3", 0).Claim(ctx, ops.ClaimRequest{Task: "c"}))
}
