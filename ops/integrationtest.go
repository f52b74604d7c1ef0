package ops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/liza-dev/git-liza/proc"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// TestFailed is a merge refused because the integration test failed: its
// error is the one line, and Tail the last lines of the test's output, for
// the person who has to fix it.
type TestFailed struct {
	err  error
	Log  string   // the whole output
	Tail []string // its last lines
}

func (e *TestFailed) Error() string { return e.err.Error() }
func (e *TestFailed) Unwrap() error { return e.err }

// Details are the last lines of the test's output.
func (e *TestFailed) Details() []string { return e.Tail }

// testTail is how many of the test output's last lines a failure shows.
const testTail = 15

// integrationLogs is how many logs of the integration test are kept, the
// oldest going first.
const integrationLogs = 100

// tail returns the last n lines of a file, reading at most its last 16 KB.
func tail(path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	const most = 16 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > most {
		f.Seek(fi.Size()-most, io.SeekStart)
	}
	b, _ := io.ReadAll(io.LimitReader(f, most))
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	return lines
}

// testFailure is a failed integration test.
type testFailure struct{ msg string }

// errTestTimedOut ends a test run past config.integration_test_timeout.
var errTestTimedOut = errors.New("the integration test timed out")

func (f *testFailure) Error() string { return f.msg }

// integrationTest runs scripts/integration-test.sh, when the merge result
// has it, in a throwaway worktree of the result, keeping its output in a
// log under the git directory. It returns the log's path. The worktree
// gets the ignored files and setup that integ's .worktreeinclude and setup
// script ask for: integ is the integration tip the result merges into,
// reviewed and merged work, where result holds the task's own changes.
func (s *Service) integrationTest(ctx context.Context, id string, integ, result refstore.Hash) (string, error) {
	has, err := s.Repo.FileAt(result, IntegrationTest)
	if err != nil || !has {
		return "", err
	}
	// The test's worktree lies under the common directory and is locked
	// by this process: a merge killed during the test leaves it where the
	// next worktree command finds it, and removes it (worktree.Recover).
	bounds, err := s.timeouts(ctx)
	if err != nil {
		return "", err
	}
	prep := &worktree.Prep{Kind: worktree.KindMerge, Task: id, Source: integ, Log: s.notice, SetupTimeout: bounds.setup}
	wt, _, done, err := s.TestCheckout.CheckoutPrepared(ctx, s.Repo, result, id, prep)
	if err != nil {
		return "", err
	}
	defer done()
	proc.CrashPoint("merge:test")
	logDir := filepath.Join(s.Repo.CommonDir, "liza", "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return "", err
	}
	// The test's logs are bounded, in size and in number, as the
	// setup's are: a chatty test run at every merge of a team left alone
	// does not fill the disk.
	worktree.PruneLogs(logDir, "integration-*.log", integrationLogs-1)
	logPath := filepath.Join(logDir, fmt.Sprintf("integration-%s-%s.log", id, short(result.String())))
	file, err := os.Create(logPath)
	if err != nil {
		return "", err
	}
	defer file.Close()
	log := worktree.NewCappedLog(file)
	s.progress("running the integration test (%s) on the merge of %s", IntegrationTest, id)
	// A test past config.integration_test_timeout has hung as far as the
	// lane can tell: it is killed with its group and counts as failed,
	// where a lane stopped (ctx) leaves the task as it was.
	testCtx, cancel := context.WithTimeoutCause(ctx, bounds.test, errTestTimedOut)
	defer cancel()
	cmd := exec.CommandContext(testCtx, "sh", IntegrationTest)
	cmd.Dir = wt
	cmd.Stdout, cmd.Stderr = log, log
	// The test's git is contained as git-liza's own is: what an agent
	// planted in the repository's config does not run in it.
	cmd.Env = refstore.ContainEnv(append(cmd.Environ(), "LIZA_TASK="+id, "LIZA_MERGE_COMMIT="+result.String()))
	err = worktree.RunInGroup(cmd)
	if ferr := log.Finish(); err == nil && ferr != nil {
		return logPath, ferr
	}
	if err != nil {
		if ctx.Err() != nil {
			// Stopped, not failed: the task stays APPROVED.
			return logPath, context.Cause(ctx)
		}
		if refstore.DiskFull(wt) || refstore.DiskFull(s.Repo.CommonDir) {
			// A test that failed with no room left on its disk says
			// nothing of the task: it stays APPROVED, and the lane tries
			// again once there is room. What the test left goes with its
			// checkout, not kept for the next test: it may be what filled
			// the disk.
			s.TestCheckout.Drop(wt)
			return logPath, fmt.Errorf("%s failed with the disk full, which charges no task (%w)", IntegrationTest, syscall.ENOSPC)
		}
		if context.Cause(testCtx) == errTestTimedOut {
			return logPath, &testFailure{msg: fmt.Sprintf("%s timed out after %s (config.integration_test_timeout)", IntegrationTest, bounds.test)}
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return logPath, &testFailure{msg: fmt.Sprintf("%s failed (exit %d)", IntegrationTest, ee.ExitCode())}
		}
		return logPath, err
	}
	return logPath, nil
}
