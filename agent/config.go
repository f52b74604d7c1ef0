package agent

import (
	"context"
	"io"
	"os/exec"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// Board is what a supervisor does on the blackboard, acting as its agent
// under its generation: the operations of package ops, which
// *ops.Service implements.
type Board interface {
	Sync(ctx context.Context, remote string) (*ops.SyncReport, error)
	ProbeStore(ctx context.Context) error
	Claim(ctx context.Context, r ops.ClaimRequest) (*ops.ClaimResult, error)
	Review(ctx context.Context, r ops.ReviewRequest) (*ops.ReviewResult, error)
	CheckMerges(ctx context.Context, r ops.CheckMergesRequest) (*ops.CheckMergesResult, error)
	Merge(ctx context.Context, r ops.MergeRequest) (*ops.MergeResult, error)
	MergeQueue(ctx context.Context, r ops.MergeQueueRequest) (*ops.MergeQueueResult, error)
	Heartbeat(ctx context.Context, call ops.Call) (*ops.HeartbeatResult, error)
	Complete(ctx context.Context, call ops.Call) (ops.Written, error)
	NotesDone(ctx context.Context, r ops.NotesDoneRequest) (*ops.NotesDoneResult, error)
	Block(ctx context.Context, r ops.BlockRequest) (*ops.TaskResult, error)
	Release(ctx context.Context, r ops.ReleaseRequest) (*ops.TaskResult, error)
	Anomaly(ctx context.Context, r ops.AnomalyRequest) (*ops.EntryResult, error)
	SessionEnded(ctx context.Context, r ops.SessionRequest) (ops.Written, error)
	Handoff(ctx context.Context, r ops.HandoffRequest) (*ops.TaskResult, error)
	ReviewCheckout(ctx context.Context, agent, task string) (string, error)
	TidyMerged(ctx context.Context) ([]ops.PruneItem, error)
}

// Config is one supervisor.
type Config struct {
	ID         string
	Role       contracts.Role
	Generation int
	Repo       *refstore.Repo
	// Root is the project root: the main worktree, where .worktrees/ and
	// the seed's .liza/ kill-switch files live.
	Root string
	// Launch is the agent CLI: a preset, whose arguments are built for
	// each session, or a command; the prompt is its last argument.
	Launch Launch
	// Board runs the supervisor's operations as its agent, under its
	// generation.
	Board Board
	// Log receives the supervisor's own lines; AgentOut the agent's
	// output. Events, when set, receives the supervisor's events instead
	// of Log (git liza run decodes them), one call at a time.
	Log      io.Writer
	AgentOut io.Writer
	Events   func(Event)
	// Env is the environment agents start from.
	Env []string
	// Poll overrides the poll interval of the state's config.
	Poll time.Duration
	// Backoff is the first delay after a crash; it doubles with each
	// crash in a row (default 2s).
	Backoff time.Duration
	// Remote is set in remote mode: the supervisor syncs before it looks
	// at the board.
	Remote bool
	// PromptDir is where prompts are saved, and LogDir where each
	// session's output is kept (both outside the working tree).
	PromptDir, LogDir string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// StallAfter overrides how long a session may only retry a failure
	// of its environment before it is stopped (default StallAfter).
	StallAfter time.Duration
	// StartSession starts a session's agent process, which leads a
	// process group of its own (default exec.Cmd.Start). git liza agent
	// starts it so that it ends with the supervisor, even one killed
	// outright: the session is the supervisor's to time-box, to hold to
	// the budgets and to record.
	StartSession func(*exec.Cmd) error
	// EndSession, when set, is told that a session StartSession started
	// is over: its agent exited and what was left in its group killed.
	EndSession func(*exec.Cmd)
}
