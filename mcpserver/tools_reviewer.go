package mcpserver

import (
	"context"
	"fmt"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// reviewerTools are a reviewer's: verdict; and the resource of the diff
// range of its review.
func reviewerTools(s *Server) {
	addTool(s, "verdict", "Approve or reject the review you hold (git liza verdict): a rejection needs the reason (blockers with file:line, why they matter, a suggestion) and may say the specific changes needed (feedback); commit, when given, must be the commit under review.", s.verdict)
	reviewerResources(s)
}

// VerdictIn is the input of verdict: git liza verdict ID approve|reject
// [--reason TEXT] [--feedback TEXT] [--commit SHA].
type VerdictIn struct {
	Task     string `json:"task,omitempty" jsonschema:"the task under review (default: the session's own; no other is accepted)"`
	Verdict  string `json:"verdict" jsonschema:"approve or reject"`
	Reason   string `json:"reason,omitempty" jsonschema:"why; required to reject, where it becomes the task's rejection_reason: blockers with file:line, why they matter, a suggestion"`
	Feedback string `json:"feedback,omitempty" jsonschema:"with reject only: the specific changes needed (the task's rejection_feedback)"`
	Commit   string `json:"commit,omitempty" jsonschema:"the commit you reviewed; it must be the task's review_commit (default: the task's review_commit, unchecked)"`
	// RequestID makes a retried verdict idempotent.
	RequestID string `json:"request_id,omitempty" jsonschema:"makes a retried call idempotent: the same id again changes nothing"`
}

// VerdictOut is the task's status after a verdict.
type VerdictOut struct {
	Task          string `json:"task" jsonschema:"the task"`
	Status        string `json:"status" jsonschema:"its status now: APPROVED, REJECTED, or BLOCKED when the rejection hit a limit"`
	BlockedReason string `json:"blocked_reason,omitempty" jsonschema:"why the verdict blocked the task, when it did"`
	Paused        bool   `json:"paused,omitempty" jsonschema:"the verdict paused the team for the human (the task's fifth rejection in a row)"`
	Commit        string `json:"commit" jsonschema:"the state commit on refs/liza/state that records it"`
	Replayed      bool   `json:"replayed,omitempty" jsonschema:"the request id had been applied already: nothing new was written"`
}

func (s *Server) verdict(ctx context.Context, in VerdictIn) (*VerdictOut, error) {
	task, err := s.taskOf(in.Task)
	if err != nil {
		return nil, err
	}
	if in.Verdict != "approve" && in.Verdict != "reject" {
		return nil, contracts.Invalidf("verdict is approve or reject, not %q", in.Verdict)
	}
	r, err := s.svc.Verdict(ctx, ops.VerdictRequest{Call: call(in.RequestID), Task: task, Approve: in.Verdict == "approve",
		Reason: in.Reason, Feedback: in.Feedback, Commit: in.Commit})
	if err != nil {
		return nil, err
	}
	return &VerdictOut{Task: r.ID, Status: r.Status, BlockedReason: r.BlockedReason, Paused: r.Paused,
		Commit: r.Commit.String(), Replayed: r.Replayed}, nil
}

// reviewerResources are a reviewer's: the diff range of its review, and
// the human notes for the task and itself.
func reviewerResources(s *Server) {
	taskResource(s, "liza://review/", "", "review", "The diff range of your review",
		"What you review: the task's author, its base commit and the commit under review, the range BASE..REVIEW to give git diff and git log, and the files it changes with their lines added and removed (git diff --stat).",
		s.review)
	taskResource(s, "liza://task/", "/notes", "task-notes", "The human notes for the task you review",
		"The operator's notes (human_notes) that concern you: those for everyone, for you and for the task, numbered as git liza note numbers them.",
		s.notes)
}

// maxStatFiles bounds the files the review resource lists: a submission
// within its scope changes a few, and one that changes more is refused at
// submit, but the reviewer reads whatever the board says was submitted.
const maxStatFiles = 500

// ReviewOut is the resource of a review's diff range.
type ReviewOut struct {
	Task         string     `json:"task"`
	Status       string     `json:"status"`
	Author       string     `json:"author"`
	ReviewingBy  string     `json:"reviewing_by,omitempty"`
	BaseCommit   string     `json:"base_commit"`
	ReviewCommit string     `json:"review_commit"`
	DiffRange    string     `json:"diff_range"`
	Files        []FileStat `json:"files"`
	// FilesOmitted counts the files past maxStatFiles.
	FilesOmitted int    `json:"files_omitted,omitempty"`
	Stat         string `json:"stat"`
}

// FileStat is one file the range changes.
type FileStat struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Binary  bool   `json:"binary,omitempty"`
}

// review reads the diff range of task's review from the board and git.
func (s *Server) review(ctx context.Context, task string) (any, error) {
	t, err := s.svc.Task(ctx, "", task)
	if err != nil {
		return nil, err
	}
	base, okBase := refstore.ParseHash(t.BaseCommit)
	commit, okCommit := refstore.ParseHash(t.ReviewCommit)
	if !okBase || !okCommit {
		return nil, contracts.Invalidf("task %s has no commit under review (it is %s)", task, t.Status)
	}
	changes, err := s.svc.Repo.DiffFiles(ctx, base, commit)
	if err != nil {
		return nil, err
	}
	out := &ReviewOut{Task: t.ID, Status: string(t.Status), Author: t.AssignedTo, ReviewingBy: t.ReviewingBy,
		BaseCommit: base.String(), ReviewCommit: commit.String(), DiffRange: base.String() + ".." + commit.String(), Files: []FileStat{}}
	added, removed := 0, 0
	for i, c := range changes {
		f := FileStat{Path: c.Path, Added: c.Added, Removed: c.Removed}
		if c.Added < 0 {
			f = FileStat{Path: c.Path, Binary: true}
		}
		added, removed = added+f.Added, removed+f.Removed
		if i < maxStatFiles {
			out.Files = append(out.Files, f)
		}
	}
	out.FilesOmitted = max(0, len(changes)-maxStatFiles)
	out.Stat = fmt.Sprintf("%d %s changed, %d %s(+), %d %s(-)", len(changes), plural(len(changes), "file", "files"),
		added, plural(added, "insertion", "insertions"), removed, plural(removed, "deletion", "deletions"))
	return out, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
