package agent

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/transcript"
)

// A session that ends with its task unfinished but committed work on the
// task branch made progress: only sessions in a row that moved nothing
// count toward giving the task up. Here the first four sessions commit and
// exit 0 (the task still CLAIMED), the next ones do nothing: the task is
// blocked after the third of those, the seventh session, not the third.
func TestCommittingSessionsAreProgress(t *testing.T) {
	count := filepath.Join(t.TempDir(), "sessions")
	body := fmt.Sprintf(`n=$(cat %[1]s 2>/dev/null || echo 0); n=$((n+1)); echo $n > %[1]s
if [ $n -le 4 ]; then
  cd "$LIZA_WORKTREE" && echo "step $n" > work.txt && git add work.txt && git -c user.name=c -c user.email=c@example.com commit -q -m "step $n"
fi
exit 0`, count)
	r := startFake(t, body, transcript.FormatText, 0)
	r.waitBlocked(t, "a")
	r.cancel()
	r.wait(t, "when cancelled")
	logs, _ := filepath.Glob(filepath.Join(r.logDir, "coder-1", "*-a.jsonl"))
	if len(logs) != 7 {
		t.Errorf("sessions before the task was given up: %d, want 7 (4 that committed, then 3 without progress)\n%s", len(logs), r.log.String())
	}
}

// Commits are progress, but a task that never comes to a submit, a block
// or a handoff is given up too: after UnfinishedLimit sessions in a row.
func TestCommitsWithoutSubmitGiveUp(t *testing.T) {
	count := filepath.Join(t.TempDir(), "sessions")
	body := fmt.Sprintf(`n=$(cat %[1]s 2>/dev/null || echo 0); n=$((n+1)); echo $n > %[1]s
cd "$LIZA_WORKTREE" && echo "step $n" > work.txt && git add work.txt && git -c user.name=c -c user.email=c@example.com commit -q -m "step $n"
exit 0`, count)
	r := startFake(t, body, transcript.FormatText, 0)
	task := r.waitBlocked(t, "a")
	r.cancel()
	r.wait(t, "when cancelled")
	logs, _ := filepath.Glob(filepath.Join(r.logDir, "coder-1", "*-a.jsonl"))
	if len(logs) != UnfinishedLimit {
		t.Errorf("sessions before the task was given up: %d, want %d", len(logs), UnfinishedLimit)
	}
	if want := "9 agent sessions in a row ended without submitting, blocking or handing off the task, though some committed"; !strings.HasPrefix(task.BlockedReason, want) {
		t.Errorf("blocked reason %q, want it to start %q", task.BlockedReason, want)
	}
}
