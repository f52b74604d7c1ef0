package ops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// IntegrationTest is the project script a merge runs on its result, when
// the result has it.
const IntegrationTest = "scripts/integration-test.sh"

// MergeRequest merges an APPROVED task into the integration branch.
type MergeRequest struct {
	Call
	Task string
}

// MergeResult is what a merge did.
type MergeResult struct {
	ID                string
	MergeCommit       string
	IntegrationBranch string // the branch's short name
	// Cleanup says why the task's worktree was kept, when it was.
	Cleanup string
	Written
}

// errIntegrationMoved means the integration branch moved while a merge was
// being built; the merge is built again on the new tip.
var errIntegrationMoved = errors.New("integration branch moved")

// Merge builds the merge with git merge-tree (or fast-forwards), runs the
// integration test in a throwaway worktree, and only then moves the
// integration branch and the state in one ref transaction. A conflict or a
// failing test records INTEGRATION_FAILED and leaves the branch where it was.
func (s *Service) Merge(ctx context.Context, r MergeRequest) (*MergeResult, error) {
	id := r.Task
	if err := contracts.ValidTaskID(id); err != nil {
		return nil, err
	}
	if err := contracts.Permit(s.Agent, contracts.OpMerge); err != nil {
		return nil, err
	}
	if err := s.checkSwitchFiles("merges"); err != nil {
		return nil, err
	}
	for {
		var t *contracts.Task
		var branch string
		if err := s.view(func(tx *cas.Tx) error {
			var err error
			if t, err = tx.MustTask(id); err != nil {
				return err
			}
			m, err := tx.Meta()
			if err != nil {
				return err
			}
			branch = "refs/heads/" + m.Config.IntegrationBranch
			return checkHalted(m.Control, "merges")
		}); err != nil {
			return nil, err
		}
		if t.Status != contracts.Approved {
			return nil, contracts.Invalidf("task %s is %s, not APPROVED", id, t.Status)
		}
		review, _ := refstore.ParseHash(t.ReviewCommit)
		if tip, ok, err := s.branchTip(ctx, worktree.BranchRef(id)); err != nil {
			return nil, err
		} else if !ok {
			return nil, contracts.Invalidf("there is no branch %s here to merge", worktree.Branch(id))
		} else if tip != review {
			return nil, contracts.Invalidf("%s is at %s, not at the approved commit %s", worktree.Branch(id), short(tip.String()), short(t.ReviewCommit))
		}
		if err := s.integrationNotCheckedOut(ctx, branch); err != nil {
			return nil, err
		}
		integ, ok, err := s.branchTip(ctx, branch)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, contracts.Invalidf("integration branch %s does not exist", strings.TrimPrefix(branch, "refs/heads/"))
		}
		result, conflicts, err := s.buildMerge(ctx, t, integ, review)
		if err != nil {
			return nil, err
		}
		if len(conflicts) > 0 {
			reason := "merge conflict in " + strings.Join(conflicts, ", ")
			if err := s.integrationFailed(ctx, r.Call, id, reason); err != nil {
				return nil, err
			}
			return nil, contracts.Errorf(contracts.CodeGit, "task %s does not merge into %s: %s; it is INTEGRATION_FAILED", id, strings.TrimPrefix(branch, "refs/heads/"), reason)
		}
		if logPath, err := s.integrationTest(ctx, id, result); err != nil {
			var fail *testFailure
			if !errors.As(err, &fail) {
				return nil, err
			}
			if err := s.integrationFailed(ctx, r.Call, id, fail.Error()); err != nil {
				return nil, err
			}
			return nil, contracts.Invalidf("task %s: %s; it is INTEGRATION_FAILED (log: %s)", id, fail.Error(), logPath)
		}
		res, err := s.update(ctx, r.Call, cas.Op{Name: contracts.OpMerge, Apply: func(tx *cas.Tx) (any, error) {
			cur, err := tx.MustTask(id)
			if err != nil {
				return nil, err
			}
			m, err := tx.Meta()
			if err != nil {
				return nil, err
			}
			if err := checkHalted(m.Control, "merges"); err != nil {
				return nil, err
			}
			if cur.Status != contracts.Approved || cur.ReviewCommit != t.ReviewCommit {
				return nil, contracts.Invalidf("task %s changed while merging (now %s); nothing merged", id, cur.Status)
			}
			if now, _, err := s.branchTip(ctx, branch); err != nil {
				return nil, err
			} else if now != integ {
				return nil, errIntegrationMoved
			}
			cur.Status = contracts.Merged
			cur.MergeCommit = result.String()
			cur.Worktree = ""
			cur.LeaseExpires, cur.ReviewingBy, cur.ReviewLeaseExpires = "", "", ""
			cur.History = append(cur.History, &contracts.HistoryEvent{Time: tx.NowString(), Event: "merged", Agent: s.Agent,
				From: string(contracts.Approved), To: string(contracts.Merged), Commit: cur.MergeCommit})
			tx.PutTask(cur)
			if cur.AssignedTo != "" {
				if a, err := tx.Agent(cur.AssignedTo); err != nil {
					return nil, err
				} else if a != nil && a.CurrentTask == id {
					a.Status, a.CurrentTask, a.LeaseExpires = "IDLE", "", ""
					tx.PutAgent(cur.AssignedTo, a)
				}
			}
			// wt-merge.sh recomputes the sprint's metrics after every
			// merge; so does this one, in the same commit.
			if err := refreshMetrics(tx, m, cur); err != nil {
				return nil, err
			}
			tx.MoveRef(refstore.RefUpdate{Name: branch, Old: integ, New: result})
			tx.Describe(fmt.Sprintf("merge %s (%s)", id, s.Agent), id)
			return map[string]string{"id": id, "merge_commit": cur.MergeCommit}, nil
		}})
		if errors.Is(err, errIntegrationMoved) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out := &MergeResult{ID: id, MergeCommit: result.String(), IntegrationBranch: strings.TrimPrefix(branch, "refs/heads/"), Written: written(res)}
		if err := worktree.Remove(ctx, s.Repo, id, branch, false); err != nil {
			out.Cleanup = fmt.Sprintf("worktree kept: %v", err)
		}
		if r := s.remote(); r != "" {
			// The task branch has served its purpose on the remote too.
			_ = s.Repo.Push(ctx, r, refstore.RefUpdate{Name: worktree.BranchRef(id), Old: review})
		}
		return out, nil
	}
}

// buildMerge returns the commit the integration branch moves to: the
// reviewed commit itself when it descends from the integration tip, else a
// merge commit of the tree git merge-tree writes. Conflicting paths come
// back instead of a commit.
func (s *Service) buildMerge(ctx context.Context, t *contracts.Task, integ, review refstore.Hash) (refstore.Hash, []string, error) {
	ff, err := s.Repo.IsAncestor(ctx, integ.String(), review.String())
	if err != nil || ff {
		return review, nil, err
	}
	tree, conflicts, err := s.Repo.MergeTree(ctx, integ, review)
	if err != nil || len(conflicts) > 0 {
		return refstore.Hash{}, conflicts, err
	}
	msg := fmt.Sprintf("Merge %s: %s\n\nApproved-by: %s\nLiza-Task: %s\n", worktree.Branch(t.ID), firstLine(t.Description), t.ApprovedBy, t.ID)
	sig := s.Store.Author
	if s.Agent != "" {
		sig = refstore.Signature{Name: s.Agent, Email: s.Agent + "@liza.invalid"}
	}
	if sig.Name == "" {
		sig = refstore.Signature{Name: "git-liza", Email: "git-liza@liza.invalid"}
	}
	sig.When = s.Now()
	c, err := s.Repo.WriteCommit(tree, []refstore.Hash{integ, review}, sig, msg)
	return c, nil, err
}

// testFailure is a failed integration test.
type testFailure struct{ msg string }

func (f *testFailure) Error() string { return f.msg }

// integrationTest runs scripts/integration-test.sh, when the merge result
// has it, in a throwaway worktree of the result, keeping its output in a
// log under the git directory. It returns the log's path.
func (s *Service) integrationTest(ctx context.Context, id string, result refstore.Hash) (string, error) {
	has, err := s.Repo.FileAt(result, IntegrationTest)
	if err != nil || !has {
		return "", err
	}
	dir, err := os.MkdirTemp("", "liza-merge-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	wt := filepath.Join(dir, "tree")
	if err := worktree.AddDetached(ctx, s.Repo, wt, result); err != nil {
		return "", err
	}
	defer worktree.RemoveDetached(context.WithoutCancel(ctx), s.Repo, wt)
	logDir := filepath.Join(s.Repo.CommonDir, "liza", "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return "", err
	}
	logPath := filepath.Join(logDir, fmt.Sprintf("integration-%s-%s.log", id, short(result.String())))
	log, err := os.Create(logPath)
	if err != nil {
		return "", err
	}
	defer log.Close()
	cmd := exec.CommandContext(ctx, "sh", IntegrationTest)
	cmd.Dir = wt
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(cmd.Environ(), "LIZA_TASK="+id, "LIZA_MERGE_COMMIT="+result.String())
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return logPath, &testFailure{msg: fmt.Sprintf("%s failed (exit %d)", IntegrationTest, ee.ExitCode())}
		}
		return logPath, err
	}
	return logPath, nil
}

// integrationFailed records a merge that could not land.
func (s *Service) integrationFailed(ctx context.Context, call Call, id, reason string) error {
	_, err := s.update(ctx, call, cas.Op{Name: contracts.OpMerge, Apply: func(tx *cas.Tx) (any, error) {
		t, err := tx.MustTask(id)
		if err != nil {
			return nil, err
		}
		if err := contracts.CheckTransition(id, t.Status, contracts.IntegrationFailed); err != nil {
			return nil, err
		}
		t.Status = contracts.IntegrationFailed
		t.ApprovedBy = ""
		t.History = append(t.History, &contracts.HistoryEvent{Time: tx.NowString(), Event: "integration_failed", Agent: s.Agent,
			From: string(contracts.Approved), To: string(contracts.IntegrationFailed), Reason: reason, Commit: t.ReviewCommit})
		tx.PutTask(t)
		tx.Describe(fmt.Sprintf("integration failed for %s (%s)", id, s.Agent), id)
		return nil, nil
	}})
	return err
}

// integrationNotCheckedOut refuses to move a branch someone has checked
// out: their checkout would silently fall behind its own HEAD.
func (s *Service) integrationNotCheckedOut(ctx context.Context, branch string) error {
	path, err := worktree.CheckedOut(ctx, s.Repo, branch)
	if err != nil || path == "" {
		return err
	}
	return contracts.Invalidf("%s is checked out in %s: switch that checkout to another branch so the merge does not move it underneath", strings.TrimPrefix(branch, "refs/heads/"), path)
}
