// Package ops is the blackboard's operations: claim, submit, review,
// verdict, merge, the planner's and the human's levers, anomalies, notes,
// the supervisors' own steps, sync, and the reads behind status, log and
// validate. The command line, the supervisor and any other front end call
// them with typed requests and get typed results and errors; nothing here
// parses flags, prints, exits the process or reads the environment. Who
// acts, under which supervisor generation, the clock and the retry budget
// come in through the Service.
//
// An error's exit-code class (contracts.Code) is Class(err).
package ops

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// Service runs operations on the blackboard of one repository for one
// actor. A Service is not safe for concurrent use; callers that share one
// between goroutines serialise their calls.
type Service struct {
	Repo  *refstore.Repo
	Store *cas.Store
	// Agent is who acts: an agent id, or "" for the human operator.
	Agent string
	// Generation, when not zero, is the supervisor registration the agent
	// runs under: writes are refused once a newer registration exists.
	Generation int
	// Progress, when set, is told what a long step is doing (running the
	// integration test, fetching, replaying), one line at a time.
	Progress func(string)

	// rules, when not zero, is the rule set writes follow instead of
	// contracts.Rules: how tests build the boards an older git-liza wrote.
	rules int
	// Notice, when set, is told what the operation repaired on the way,
	// the leftovers of killed processes (recover.go), one line each, and
	// what it found but could not safely repair, with the command that
	// does.
	Notice func(string)
	// TestCheckout, when set, is the worktree this process keeps for its
	// merges' integration tests (a supervisor's, which merges one task
	// after another); when nil, every test gets a worktree of its own.
	TestCheckout *worktree.Kept
	// decoded and spent, when set (Options.KeepDecoded), keep the tasks
	// Status decodes and the sessions it counts for the next Status.
	decoded *cas.TaskCache
	spent   *spendMemo
}

// Options configure a Service.
type Options struct {
	Agent      string
	Generation int
	// Clock is the one source of time (default: the wall clock).
	Clock func() time.Time
	// Budget bounds how long a write keeps retrying lost races (default 30s).
	Budget time.Duration
	// Author is the identity of commits made for the human operator; zero
	// for git-liza's fixed identity.
	Author refstore.Signature
	// Offline commits locally in remote mode; sync publishes later.
	Offline bool
	// Progress: see Service.Progress.
	Progress func(string)
	// Notice: see Service.Notice.
	Notice func(string)
	// KeepDecoded keeps the tasks Status decodes, and the sessions its
	// spend counts, for a process that shows the whole board again each
	// time it moves (git liza board, git liza serve): the next Status
	// decodes only the task files that changed. It holds a board's worth
	// of tasks in memory.
	KeepDecoded bool
}

// New opens the blackboard of repo for the actor o names. The agent id is
// checked, and in remote mode (git config liza.remote) the remote must
// exist. State commits are signed as the repository's git configuration
// asks (see refstore.Repo.Signer), and a state this clone did not write is
// verified before anything builds on it (see Verifier).
func New(repo *refstore.Repo, o Options) (*Service, error) {
	if _, err := contracts.ParseAgentID(o.Agent); err != nil {
		return nil, err
	}
	clock := o.Clock
	if clock == nil {
		clock = time.Now
	}
	sign, err := repo.Signer()
	if err != nil {
		return nil, err
	}
	s := &Service{
		Repo: repo, Agent: o.Agent, Generation: o.Generation, Progress: o.Progress, Notice: o.Notice,
		Store: &cas.Store{Repo: repo, Clock: clock, Budget: o.Budget, Author: o.Author, Remote: repo.RemoteOf(), Offline: o.Offline, Sign: sign},
	}
	s.Store.Verify = s.verifyTip
	if o.KeepDecoded {
		s.decoded, s.spent = cas.NewTaskCache(), &spendMemo{}
	}
	if o.Notice != nil && repo.Notice == nil {
		// Stale locks of git's that refstore removes are told too.
		repo.Notice = o.Notice
	}
	if s.Store.Remote != "" {
		if err := repo.CheckRemote(s.Store.Remote); err != nil {
			return nil, contracts.Invalidf("liza.remote names %s, but %v", s.Store.Remote, err)
		}
	}
	return s, nil
}

// As is a copy of s acting for agent under generation.
func (s *Service) As(agent string, generation int) *Service {
	c := *s
	c.Agent, c.Generation = agent, generation
	return &c
}

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.Store.Clock() }

// Call is what every write takes besides its own inputs.
type Call struct {
	// RequestID makes a retried request idempotent: the second run
	// changes nothing and reports the first result. A request id used
	// again for other inputs is refused.
	RequestID string
}

// Written is what every write reports besides its own result.
type Written struct {
	// Commit is the state commit made, or the tip when nothing changed.
	Commit refstore.Hash
	// Replayed says the request id had been applied already: nothing was
	// written and the result is the first run's.
	Replayed bool
}

func written(res *cas.Result) Written { return Written{Commit: res.Commit, Replayed: res.Replayed} }

// set fills the Written a result embeds.
func (w *Written) set(res *cas.Result) { *w = written(res) }

// writeAs is write for an operation whose result, a T that embeds
// Written, is decoded from the value the operation recorded.
func writeAs[T any, P interface {
	*T
	set(*cas.Result)
}](ctx context.Context, s *Service, call Call, k *kind, in any, live func(tx *cas.Tx) error) (*T, error) {
	res, err := s.write(ctx, call, k, in, live)
	if err != nil {
		return nil, err
	}
	out, err := decode[T](res)
	if err != nil {
		return nil, err
	}
	P(&out).set(res)
	return &out, nil
}

// update runs op for the service's actor.
func (s *Service) update(ctx context.Context, call Call, op cas.Op) (*cas.Result, error) {
	if err := contracts.Permit(s.Agent, op.Name); err != nil {
		return nil, err
	}
	op.Agent = s.Agent
	op.Request = call.RequestID
	if op.Rules == 0 {
		op.Rules = s.rules
	}
	if s.Agent != "" {
		op.Generation = s.Generation
	}
	res, err := s.Store.Update(ctx, op)
	return res, s.noBoardErr(ctx, err)
}

// view runs fn on the state at the tip, after the validity check a write
// makes.
func (s *Service) view(ctx context.Context, fn func(tx *cas.Tx) error) error {
	if s.rules == 0 {
		return s.Store.ViewContext(ctx, s.Agent, fn)
	}
	return s.Store.ViewContext(ctx, s.Agent, func(tx *cas.Tx) error {
		tx.Rules = s.rules
		return fn(tx)
	})
}

// remote is the remote of remote mode, or "" (local mode, or offline).
func (s *Service) remote() string {
	if s.Store.Offline {
		return ""
	}
	return s.Store.Remote
}

// Remote is the remote whose blackboard writes go through, or "" (local
// mode, or offline).
func (s *Service) Remote() string { return s.remote() }

// branchTip is where a branch is: on the remote in remote mode (fetched
// now into its tracking ref, so its commits are here too), else here.
func (s *Service) branchTip(ctx context.Context, ref string) (refstore.Hash, bool, error) {
	if r := s.remote(); r != "" {
		got, err := s.Repo.Fetch(ctx, r, ref)
		if err != nil {
			return refstore.Hash{}, false, err
		}
		h, ok := got[ref]
		return h, ok, nil
	}
	return s.Repo.ReadRef(ref)
}

// decode reads an operation's result value.
func decode[T any](res *cas.Result) (T, error) {
	var out T
	if err := json.Unmarshal(res.Value, &out); err != nil {
		return out, contracts.Errorf(contracts.CodeInconsistent, "request result: %v", err)
	}
	return out, nil
}

// Class is the exit-code class of an error from an operation: the code a
// *contracts.Error carries, CodeGit for a failed git command, CodeContention
// for a cancelled or timed-out context or a ref moved meanwhile
// (refstore.ErrStale), and CodeInvalid for anything else.
func Class(err error) contracts.Code {
	var ce *contracts.Error
	var ge *refstore.GitError
	switch {
	case errors.As(err, &ce):
		return ce.Code
	case errors.As(err, &ge), refstore.RemoteUnstored(err):
		// git failed, here or on the remote (a push it could not store)
		return contracts.CodeGit
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return contracts.CodeContention
	case errors.Is(err, refstore.ErrStale):
		// A ref another process moved meanwhile: a race lost, which a
		// sync tries again (SyncWith) and a caller may retry.
		return contracts.CodeContention
	}
	return contracts.CodeInvalid
}

// by is the " (agent)" suffix of commit subjects.
func by(agent string) string {
	if agent == "" {
		return ""
	}
	return " (" + agent + ")"
}

// short abbreviates a commit id.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// OperatorAuthor is the author of commits made for the human operator:
// git's author identity (GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL through
// getenv, else user.name and user.email) when there is one, else zero for
// git-liza's fixed one.
func OperatorAuthor(repo *refstore.Repo, getenv func(string) string) refstore.Signature {
	name, email := getenv("GIT_AUTHOR_NAME"), getenv("GIT_AUTHOR_EMAIL")
	if name == "" {
		name, _ = repo.Config("user.name")
	}
	if email == "" {
		email, _ = repo.Config("user.email")
	}
	if name == "" {
		return refstore.Signature{}
	}
	if email == "" {
		email = "unknown"
	}
	return refstore.Signature{Name: name, Email: email}
}
