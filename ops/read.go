package ops

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// Snapshot opens the state at rev (a commit of refs/liza/state), or at the
// tip of refs/liza/state when rev is empty (in remote mode, brought up to
// the remote's board as last fetched when it is only behind it).
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
			if tip, err = s.join(ctx); err != nil {
				return nil, err
			}
		} else if rem := s.remote(); rem != "" {
			// An operation that fetched and was refused moved only the
			// tracking ref: what it fetched is what is read.
			if tip, err = s.catchUp(ctx, rem, tip); err != nil {
				return nil, err
			}
		}
		commit = tip
	}
	snap, err := cas.ReadSnapshot(s.Repo, commit)
	if err == nil && rev != "" {
		err = looksLikeState(rev, snap)
	}
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// looksLikeState refuses a revision whose commit holds no board at all (a
// branch of the code, say): the caller's mistake (exit 1), not a broken
// state. A state commit that is broken gets through, to be reported as
// what it is.
func looksLikeState(rev string, snap *cas.Snapshot) error {
	entries, err := snap.Entries("")
	if err != nil {
		return err
	}
	if _, ok := refstore.FindEntry(entries, "liza.yaml"); ok {
		return nil
	}
	return contracts.Invalidf("%s is not a state commit of %s: its tree holds no liza.yaml", rev, refstore.StateRef)
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
	Commit string `json:"commit"`
	Time   string `json:"time"`
	Op     string `json:"op"`
	Agent  string `json:"agent"`
	Task   string `json:"task,omitempty"`
	// Tasks are the tasks of a batch of merges (whose Task names them
	// all, separated by spaces).
	Tasks   []string `json:"tasks,omitempty"`
	Request string   `json:"request,omitempty"`
	Subject string   `json:"subject"`
	Author  string   `json:"author"`
	// Signed says who signed the commit, when it is signed: the principal
	// the allowed signers give its key, once ssh-keygen has verified the
	// signature, else the key's fingerprint and what is wrong.
	Signed string `json:"signed,omitempty"`
	// Reason is why the operation did what it did to its task, when it
	// says: a rejection's, a block's, an integration failure's.
	Reason string `json:"reason,omitempty"`
	// Changes (with LogRequest.Patch) is what the operation changed;
	// MoreChanges how many more entities it changed, past
	// LogRequest.MaxChanges.
	Changes     []EntityDiff `json:"changes,omitempty"`
	MoreChanges int          `json:"more_changes,omitempty"`
}

// LogRequest selects entries of the audit log.
type LogRequest struct {
	Rev   string // where to start; empty for the tip
	Task  string // only changes of this task
	Agent string // only changes made by this agent (or "human")
	Max   int    // at most this many entries; 0 for all
	Patch bool   // each entry with what it changed, field by field
	// MaxChanges bounds the entities an entry's changes diff (0: all);
	// the others are counted in MoreChanges.
	MaxChanges int
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
	shallow, err := s.Repo.Shallow()
	if err != nil {
		return nil, err
	}
	if r.Task != "" {
		// A task is never deleted (archive keeps it), so one the state
		// does not have was never on this board.
		if t, err := snap.Task(r.Task); err != nil {
			return nil, err
		} else if t == nil {
			return nil, contracts.Invalidf("no task %s on this blackboard", r.Task)
		}
	}
	out := []LogEntry{}
	for id := snap.Commit; !id.IsZero() && (r.Max <= 0 || len(out) < r.Max); {
		c, err := s.Repo.ReadCommit(id)
		if err != nil {
			return nil, err
		}
		e := logEntry(c)
		// A batch of merges names each of its tasks (Liza-Task: a b c).
		if (r.Task == "" || e.Task == r.Task || slices.Contains(e.Tasks, r.Task)) && (r.Agent == "" || e.Agent == r.Agent) {
			e.Signed = s.signer(ctx, c.ID, e.Agent)
			if !strings.Contains(e.Task, " ") {
				e.Reason = reasonOf(s.Repo, c, e.Task)
			}
			if r.Patch {
				if e.Changes, e.MoreChanges, err = s.commitChanges(c, r.MaxChanges); err != nil {
					return nil, err
				}
			}
			out = append(out, e)
		}
		if len(c.Parents) == 0 || shallow[id] {
			break
		}
		id = c.Parents[0]
	}
	return out, nil
}

// signer says who signed a state commit ("" when it is not signed): the
// principal the allowed signers (liza.allowedSigners, else
// gpg.ssh.allowedSignersFile) give its key, once the signature is verified
// for the commit's agent, else the key's fingerprint and what is wrong.
func (s *Service) signer(ctx context.Context, id refstore.Hash, agent string) string {
	payload, sig, err := s.Repo.CommitSignature(id)
	if err != nil || sig == nil {
		return ""
	}
	key, err := refstore.SignatureKey(sig)
	if err != nil {
		return "an unreadable signature"
	}
	file, _ := s.Repo.Config("liza.allowedSigners")
	if file == "" {
		file, _ = s.Repo.Config("gpg.ssh.allowedSignersFile")
	}
	if file == "" {
		return "key " + key + " (no allowed signers file to say whose)"
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(s.Repo.GitDir, file)
	}
	names, err := refstore.AllowedPrincipals(file, key)
	if err != nil || len(names) == 0 {
		return "key " + key + " (not an allowed signer)"
	}
	program, _ := s.Repo.Config("gpg.ssh.program")
	if err := refstore.VerifySSH(ctx, program, file, agent, payload, sig); err != nil {
		return "key " + key + " (" + strings.Join(names, ",") + "), NOT a valid signature for " + agent
	}
	return agent
}

// commitChanges is what a state commit changed from its first parent.
func (s *Service) commitChanges(c *refstore.Commit, max int) ([]EntityDiff, int, error) {
	cur, err := cas.ReadSnapshot(s.Repo, c.ID)
	if err != nil {
		return nil, 0, err
	}
	var parent refstore.Hash
	if len(c.Parents) > 0 {
		parent = c.Parents[0]
	}
	prev, err := cas.ReadSnapshot(s.Repo, parent)
	if err != nil {
		return nil, 0, err
	}
	return DiffSnapshotsMax(prev, cur, max)
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
		Tasks:   batchTasks(tr["Liza-Task"]),
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
	// Shallow is the commit a history check stopped at because this is
	// a shallow clone that lacks its parents; empty when it went back to
	// the first state.
	Shallow string
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
		out, err := s.validateHistory(ctx, snap)
		if err != nil {
			return nil, err
		}
		if out.Shallow, err = shallowStart(s.Repo, snap.Commit); err != nil {
			return nil, err
		}
		if r.Rev == "" {
			err = s.validateIntegration(ctx, snap, out)
		}
		return out, err
	}
	st, err := snap.Load()
	if err != nil {
		return nil, err
	}
	v := validation(st)
	if r.Rev == "" {
		// The state as it is now, against this machine and repository.
		if err := s.checkRepo(st, v); err != nil {
			return nil, err
		}
		if err := s.validateIntegration(ctx, snap, v); err != nil {
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
// from, for messages. A file records no rule set: it is judged as the
// seed's validator judges it, and liza-validate.sh rejects a coder on two
// active tasks (contracts.ActiveTwice), which the live board shows as a
// warning only (a board an older git-liza wrote must stay readable). The
// agent entries an older git-liza left, which the seed's validator does
// not check, stay warnings here too.
func ValidateFile(data []byte, name string) (*Validation, error) {
	st, err := contracts.ParseState(data)
	if err != nil {
		return nil, contracts.Invalidf("%s: %v", name, err)
	}
	v := &Validation{Problems: append(contracts.Validate(st), contracts.ActiveTwice(st)...), States: 1}
	v.Warnings = append(leftoverWarnings(contracts.AgentLeftovers(st)), contracts.LateWork(st)...)
	return v, nil
}

// validation is what validate says of a whole state: its problems, and as
// warnings what the current rules no longer write but an older git-liza
// did, which the next operation on it puts right (contracts.Leftovers).
// The live tasks of a COMPLETED goal (contracts.LateWork) are warned of
// too: an older git-liza let them in, and the board must stay readable so
// that they can be finished or abandoned.
func validation(st *contracts.State) *Validation {
	warnings := append(leftoverWarnings(contracts.Leftovers(st)), contracts.LateWork(st)...)
	return &Validation{Problems: contracts.Validate(st), States: 1, Warnings: warnings}
}

// leftoverWarnings are leftovers as validate warns of them.
func leftoverWarnings(ps []contracts.Problem) []contracts.Problem {
	var out []contracts.Problem
	for _, p := range ps {
		p.Msg += " (the current rules do not write this; the next operation on it puts it right)"
		out = append(out, p)
	}
	return out
}

// shallowStart is the commit a walk down tip's first parents stops at in a
// shallow clone, whose parents the clone lacks; "" when the walk reaches
// the first commit.
func shallowStart(repo *refstore.Repo, tip refstore.Hash) (string, error) {
	shallow, err := repo.Shallow()
	if err != nil || len(shallow) == 0 {
		return "", err
	}
	for id := tip; !id.IsZero(); {
		if shallow[id] {
			return id.String(), nil
		}
		c, err := repo.ReadCommit(id)
		if err != nil {
			return "", err
		}
		if len(c.Parents) == 0 {
			break
		}
		id = c.Parents[0]
	}
	return "", nil
}

// validateHistory verifies every commit from the first to snap's (each
// must be what its recorded operation makes of its parent; see Verifier)
// and validates the state at the end. Its cost follows the size of the
// changes, not the size of the board times the length of the history.
func (s *Service) validateHistory(ctx context.Context, snap *cas.Snapshot) (*Validation, error) {
	v := s.Verifier() // a commit dated after today is refused, an old one is not
	v.Integration = s.localIntegration(snap.Commit)
	out := &Validation{}
	n, err := v.Chain(ctx, snap.Commit, nil, nil, func(c *refstore.Commit, err error) {
		out.Problems = append(out.Problems, contracts.Problem{Where: c.ID.String()[:12], Msg: err.Error()})
	})
	if err != nil {
		return nil, err
	}
	out.States = n
	if len(out.Problems) == 0 {
		st, err := snap.Load()
		if err != nil {
			return nil, err
		}
		c, err := s.Repo.ReadCommit(snap.Commit)
		if err != nil {
			return nil, err
		}
		for _, p := range contracts.ValidateUnder(st, rulesOf(c.Message)) {
			p.Where = joinWhere(snap.Commit.String()[:12], p.Where)
			out.Problems = append(out.Problems, p)
		}
	}
	return out, nil
}

func joinWhere(commit, where string) string {
	if where == "" {
		return commit
	}
	return commit + " " + where
}

// Names are the ids of the live tasks and of the agents at the tip, read
// from the state's tree without decoding any entity: what shell
// completion offers.
func (s *Service) Names(ctx context.Context) (tasks, agents []string, err error) {
	tip, ok, err := s.Repo.ReadRef(refstore.StateRef)
	if err != nil || !ok {
		return nil, nil, err
	}
	snap, err := cas.ReadSnapshot(s.Repo, tip)
	if err != nil {
		return nil, nil, err
	}
	if tasks, err = snap.IDs(cas.TasksDir); err != nil {
		return nil, nil, err
	}
	agents, err = snap.IDs(cas.AgentsDir)
	return tasks, agents, err
}

// Config reads the state's config section at the tip, defaults filled,
// without reading the rest of the state.
func (s *Service) Config(ctx context.Context) (contracts.Config, error) {
	var cfg contracts.Config
	err := s.view(ctx, func(tx *cas.Tx) error {
		m, err := tx.Meta()
		if err == nil {
			cfg = m.Config
		}
		return err
	})
	return cfg, err
}

// batchTasks are the task ids of a Liza-Task trailer that names several
// (a batch of merges); nil for one.
func batchTasks(trailer string) []string {
	if f := strings.Fields(trailer); len(f) > 1 {
		return f
	}
	return nil
}
