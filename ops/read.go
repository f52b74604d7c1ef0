package ops

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// Snapshot opens the state at rev (a commit of refs/liza/state), or at the
// tip of refs/liza/state when rev is empty.
func (s *Service) Snapshot(ctx context.Context, rev string) (*cas.Snapshot, error) {
	var commit refstore.Hash
	if rev != "" {
		c, err := s.Repo.ResolveCommit(ctx, rev)
		if err != nil {
			return nil, err
		}
		commit = c
	} else {
		tip, ok, err := s.Repo.ReadRef(refstore.StateRef)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, contracts.Invalidf("no blackboard here: run `git liza init GOAL` first")
		}
		commit = tip
	}
	return cas.ReadSnapshot(s.Repo, commit)
}

// State reads the whole state at rev (or the tip), archive included.
func (s *Service) State(ctx context.Context, rev string) (*contracts.State, error) {
	snap, err := s.Snapshot(ctx, rev)
	if err != nil {
		return nil, err
	}
	return snap.Load()
}

// Task reads one task, live or archived, at rev (or the tip), without
// reading the others.
func (s *Service) Task(ctx context.Context, rev, id string) (*contracts.Task, error) {
	if err := contracts.ValidTaskID(id); err != nil {
		return nil, err
	}
	snap, err := s.Snapshot(ctx, rev)
	if err != nil {
		return nil, err
	}
	t, err := snap.Task(id)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, contracts.Invalidf("no task %s", id)
	}
	return t, nil
}

// LogEntry is one commit of refs/liza/state.
type LogEntry struct {
	Commit  string `json:"commit"`
	Time    string `json:"time"`
	Op      string `json:"op"`
	Agent   string `json:"agent"`
	Task    string `json:"task,omitempty"`
	Request string `json:"request,omitempty"`
	Subject string `json:"subject"`
	Author  string `json:"author"`
}

// LogRequest selects entries of the audit log.
type LogRequest struct {
	Rev   string // where to start; empty for the tip
	Task  string // only changes of this task
	Agent string // only changes made by this agent (or "human")
	Max   int    // at most this many entries; 0 for all
}

// Log is the audit log, newest first: the commits of refs/liza/state.
func (s *Service) Log(ctx context.Context, r LogRequest) ([]LogEntry, error) {
	if r.Task != "" {
		if err := contracts.ValidTaskID(r.Task); err != nil {
			return nil, err
		}
	}
	snap, err := s.Snapshot(ctx, r.Rev)
	if err != nil {
		return nil, err
	}
	out := []LogEntry{}
	for id := snap.Commit; !id.IsZero() && (r.Max <= 0 || len(out) < r.Max); {
		c, err := s.Repo.ReadCommit(id)
		if err != nil {
			return nil, err
		}
		e := logEntry(c)
		if (r.Task == "" || e.Task == r.Task) && (r.Agent == "" || e.Agent == r.Agent) {
			out = append(out, e)
		}
		if len(c.Parents) == 0 {
			break
		}
		id = c.Parents[0]
	}
	return out, nil
}

func logEntry(c *refstore.Commit) LogEntry {
	subject, _, _ := strings.Cut(c.Message, "\n")
	tr := cas.Trailers(c.Message)
	return LogEntry{
		Commit:  c.ID.String(),
		Time:    contracts.FormatTime(c.Author.When),
		Op:      tr["Liza-Op"],
		Agent:   tr["Liza-Agent"],
		Task:    tr["Liza-Task"],
		Request: tr["Liza-Request"],
		Subject: subject,
		Author:  c.Author.Name,
	}
}

// Validation is what validate found: every problem, and how many states
// were checked. Warnings are checks that may fail on this machine without
// the state being wrong (a worktree that lives on another machine, in
// remote mode).
type Validation struct {
	Problems []contracts.Problem
	Warnings []contracts.Problem
	States   int
}

// ValidateRequest says what to validate.
type ValidateRequest struct {
	Rev string // a state commit; empty for the tip
	// History checks every commit from the first to Rev and every
	// transition between consecutive states.
	History bool
}

// Validate checks the state at a commit (or the history up to it) against
// the contract.
func (s *Service) Validate(ctx context.Context, r ValidateRequest) (*Validation, error) {
	snap, err := s.Snapshot(ctx, r.Rev)
	if err != nil {
		return nil, err
	}
	if r.History {
		problems, n, err := validateHistory(s.Repo, snap.Commit)
		if err != nil {
			return nil, err
		}
		return &Validation{Problems: problems, States: n}, nil
	}
	st, err := snap.Load()
	if err != nil {
		return nil, err
	}
	v := &Validation{Problems: contracts.Validate(st), States: 1}
	if r.Rev == "" {
		// The state as it is now, against this machine and repository.
		if err := s.checkRepo(st, v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// checkRepo adds liza-validate.sh's checks of the state against the
// repository: a CLAIMED task's worktree must exist (in remote mode it may
// be on another machine: a warning), and a live task's spec_ref must name
// a file in HEAD or on the integration branch (on the remote's, in remote
// mode, which may not be fetched here: a warning).
func (s *Service) checkRepo(st *contracts.State, v *Validation) error {
	remote := s.Store.Remote != ""
	add := func(warn bool, where, msg string) {
		p := contracts.Problem{Where: where, Msg: msg}
		if warn {
			v.Warnings = append(v.Warnings, p)
		} else {
			v.Problems = append(v.Problems, p)
		}
	}
	_, head, err := s.Repo.Head()
	if err != nil {
		return err
	}
	integ, _, err := s.Repo.ReadRef("refs/heads/" + st.Config.IntegrationBranch)
	if err != nil {
		return err
	}
	for _, t := range st.Tasks {
		if t == nil {
			continue
		}
		where := "tasks[" + t.ID + "]"
		if t.Status == contracts.Claimed && t.Worktree != "" && s.taskCheckout(t) == "" {
			add(remote, where, fmt.Sprintf("CLAIMED with worktree %s, which does not exist on this machine", t.Worktree))
		}
		if t.SpecRef != "" {
			if err := s.checkSpec(t.SpecRef, head, integ); err != nil {
				if ops := Class(err); ops != contracts.CodeInvalid {
					return err
				}
				add(remote, where, fmt.Sprintf("spec_ref %s names no file: %v", t.SpecRef, err))
			}
		}
	}
	return nil
}

// ValidateFile checks a seed-format state.yaml; name is where it came
// from, for messages.
func ValidateFile(data []byte, name string) (*Validation, error) {
	st, err := contracts.ParseState(data)
	if err != nil {
		return nil, contracts.Invalidf("%s: %v", name, err)
	}
	return &Validation{Problems: contracts.Validate(st), States: 1}, nil
}

// validateHistory checks every state from the first commit to tip, and
// every transition between consecutive states. It returns the problems and
// the number of states checked.
func validateHistory(repo *refstore.Repo, tip refstore.Hash) ([]contracts.Problem, int, error) {
	var chain []*refstore.Commit
	for id := tip; !id.IsZero(); {
		c, err := repo.ReadCommit(id)
		if err != nil {
			return nil, 0, err
		}
		chain = append(chain, c)
		if len(c.Parents) == 0 {
			break
		}
		id = c.Parents[0]
	}
	var problems []contracts.Problem
	var prev *contracts.State
	for i := len(chain) - 1; i >= 0; i-- {
		c := chain[i]
		where := c.ID.String()[:12]
		add := func(ps []contracts.Problem) {
			for _, p := range ps {
				p.Where = joinWhere(where, p.Where)
				problems = append(problems, p)
			}
		}
		if len(c.Parents) > 1 {
			add([]contracts.Problem{{Msg: "state commits have one parent; this one is a merge"}})
		}
		tr := cas.Trailers(c.Message)
		if tr["Liza-Op"] == "" || tr["Liza-Agent"] == "" {
			add([]contracts.Problem{{Msg: "commit lacks the Liza-Op and Liza-Agent trailers"}})
		}
		snap, err := cas.ReadSnapshot(repo, c.ID)
		if err != nil {
			return nil, 0, err
		}
		st, err := snap.Load()
		if err != nil {
			add([]contracts.Problem{{Msg: err.Error()}})
			prev = nil
			continue
		}
		add(contracts.Validate(st))
		// An import replaces the whole state; transitions are checked
		// between the other consecutive states.
		if prev != nil && tr["Liza-Op"] != string(contracts.OpImport) {
			add(contracts.CheckStateTransition(prev, st))
		}
		prev = st
	}
	return problems, len(chain), nil
}

func joinWhere(commit, where string) string {
	if where == "" {
		return commit
	}
	return commit + " " + where
}

// Observation is what one look at a state commit found.
type Observation struct {
	State    *contracts.State // nil when the state cannot be read
	Err      error            // why State is nil
	Switches []contracts.Switch
	Alarms   []contracts.Alarm
}

// Observe reads the state of snap, validates it and computes its alarms at
// now. A state that does not load or validate is still observed: it raises
// the INVALID STATE alarm. withFiles adds the kill-switch files of the main
// checkout to the state's control mode.
func (s *Service) Observe(snap *cas.Snapshot, withFiles bool, now time.Time) (*Observation, error) {
	c, err := s.Repo.ReadCommit(snap.Commit)
	if err != nil {
		return nil, err
	}
	in := contracts.AlarmInput{Now: now, LastChange: c.Committer.When}
	obs := &Observation{}
	obs.State, err = snap.Load()
	var ctrl *contracts.Control
	if err != nil {
		obs.State, obs.Err = nil, err
		in.Problems = []string{err.Error()}
	} else {
		for _, p := range contracts.Validate(obs.State) {
			in.Problems = append(in.Problems, p.String())
		}
		ctrl = obs.State.Control
	}
	files := map[string]time.Time{}
	if root := s.Repo.MainWorkTree(); withFiles && root != "" {
		files = contracts.StatSwitchFiles(root)
	}
	obs.Switches = contracts.ActiveSwitches(ctrl, files)
	in.Switches = obs.Switches
	obs.Alarms = contracts.Alarms(obs.State, in)
	// Empty lists, not null, in --json output.
	if obs.Switches == nil {
		obs.Switches = []contracts.Switch{}
	}
	if obs.Alarms == nil {
		obs.Alarms = []contracts.Alarm{}
	}
	return obs, nil
}

// Config reads the state's config section at the tip, defaults filled,
// without reading the rest of the state.
func (s *Service) Config(ctx context.Context) (contracts.Config, error) {
	var cfg contracts.Config
	err := s.view(func(tx *cas.Tx) error {
		m, err := tx.Meta()
		if err == nil {
			cfg = m.Config
		}
		return err
	})
	return cfg, err
}
