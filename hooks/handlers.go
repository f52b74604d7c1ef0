package hooks

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// Handler runs the code behind the hook scripts. Handlers are quick: they
// make no network calls, read only what they need, and let everything pass
// in a repository that has no blackboard.
type Handler struct {
	Dir    string // where git ran the hook
	Stdin  io.Reader
	Stderr io.Writer
	Getenv func(string) string
	// Clock, when set, replaces the wall clock (tests pin it).
	Clock func() time.Time
}

// Run handles hook name with the arguments git gave it. A refusal comes
// back as a *contracts.Error (exit 1) whose message is one line.
func (h *Handler) Run(ctx context.Context, name string, args []string) error {
	switch name {
	case PreCommit:
		return h.preCommit(ctx)
	case CommitMsg:
		if len(args) < 1 {
			return contracts.Invalidf("usage: git liza hook commit-msg FILE")
		}
		return h.commitMsg(ctx, args[0])
	case PostCommit:
		h.postCommit(ctx)
		return nil
	case ReferenceTransaction:
		if len(args) < 1 {
			return contracts.Invalidf("usage: git liza hook reference-transaction STATE")
		}
		return h.referenceTransaction(args[0])
	case PreReceive:
		return h.preReceive(ctx)
	}
	return contracts.Invalidf("unknown hook %q (git-liza handles %s)", name, strings.Join(AllHooks(), ", "))
}

// board is what the client hooks read: the repository, the state at the
// tip (nil when there is no blackboard) and this checkout's branch.
type board struct {
	repo   *refstore.Repo
	snap   *cas.Snapshot
	branch string // refs/heads/...; empty when detached
}

func (h *Handler) open() (*board, error) {
	repo, err := refstore.Open(h.Dir)
	if err != nil {
		return nil, err
	}
	b := &board{repo: repo}
	tip, ok, err := repo.ReadRef(stateRef)
	if err != nil || !ok {
		return b, err
	}
	if b.snap, err = cas.ReadSnapshot(repo, tip); err != nil {
		return nil, err
	}
	if repo.WorkTree != "" {
		if b.branch, _, err = repo.Head(); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// meta reads liza.yaml with its defaults filled in.
func (b *board) meta() (*cas.Meta, error) {
	data, ok, err := b.snap.ReadFile(cas.MetaFile)
	if err != nil {
		return nil, err
	}
	m := new(cas.Meta)
	if ok {
		if err := contracts.DecodeYAML(data, m); err != nil {
			return nil, contracts.Errorf(contracts.CodeInconsistent, "state is inconsistent: %s: %v", cas.MetaFile, err)
		}
	}
	m.Config.FillDefaults()
	return m, nil
}

// taskID names the task whose worktree this checkout is: its top is
// <main checkout>/.worktrees/<id>, or its branch is task/<id>. It is empty
// elsewhere.
func (b *board) taskID() string {
	repo := b.repo
	if main := repo.MainWorkTree(); main != "" && repo.WorkTree != "" {
		if samePath(filepath.Dir(repo.WorkTree), filepath.Join(main, worktree.Dir)) {
			if id := filepath.Base(repo.WorkTree); contracts.ValidTaskID(id) == nil {
				return id
			}
		}
	}
	if id, ok := strings.CutPrefix(b.branch, worktree.BranchRef("")); ok && contracts.ValidTaskID(id) == nil {
		return id
	}
	return ""
}

func samePath(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// preCommit keeps commits off the integration branch, where only
// git liza merge lands work (it never commits through git commit, so any
// commit there is a person's or an agent's), and keeps a task worktree's
// commits to its CLAIMED task: its assignee, inside its declared paths.
func (h *Handler) preCommit(ctx context.Context) error {
	b, err := h.open()
	if err != nil || b.snap == nil || b.repo.WorkTree == "" {
		return err
	}
	m, err := b.meta()
	if err != nil {
		return err
	}
	if integration := m.Config.IntegrationBranch; b.branch == "refs/heads/"+integration {
		return contracts.Invalidf("refusing to commit on %s, the integration branch: work lands there only through git liza merge; commit in a task worktree (git liza claim makes .worktrees/<id>)", integration)
	}
	id := b.taskID()
	if id == "" {
		return nil
	}
	t, err := b.snap.Task(id)
	if err != nil {
		return err
	}
	if t == nil {
		return contracts.Invalidf("task %s is not on the blackboard: commits in its worktree need it CLAIMED", id)
	}
	if t.Status != contracts.Claimed {
		return contracts.Invalidf("task %s is %s, not CLAIMED: claim it (git liza claim %s) before committing in its worktree", id, t.Status, id)
	}
	if agent := h.Getenv("LIZA_AGENT_ID"); agent != "" && agent != t.AssignedTo {
		return contracts.Invalidf("task %s is assigned to %s, not %s (LIZA_AGENT_ID): commit only in your own task's worktree", id, t.AssignedTo, agent)
	}
	// Concluding a merge (the coder merging the integration branch into a
	// task that failed to integrate) stages the other side's files too.
	if len(t.Paths) == 0 || exists(filepath.Join(b.repo.GitDir, "MERGE_HEAD")) {
		return nil
	}
	// git commit runs this hook with GIT_INDEX_FILE naming the index it
	// will commit (a temporary one for commit -a or commit PATHS), which
	// git diff, inheriting the environment, reads.
	out, err := refstore.Run(ctx, b.repo.WorkTree, nil, "diff", "--cached", "--name-only", "--no-renames", "-z")
	if err != nil {
		return err
	}
	var outside []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		in := false
		for _, p := range t.Paths {
			if contracts.PathMatches(p, f) {
				in = true
				break
			}
		}
		if !in {
			outside = append(outside, f)
		}
	}
	if len(outside) > 0 {
		return contracts.Invalidf("the commit touches %s, outside task %s's paths (%s): unstage it, or ask the planner to widen the task",
			strings.Join(outside, ", "), id, strings.Join(t.Paths, ", "))
	}
	return nil
}

// commitMsg adds the trailer Liza-Task: <id> to a commit made in a task
// worktree, unless the message has one already. git interpret-trailers
// does the editing: it knows where a message ends (comments, the scissors
// line of commit -v) and keeps a blank line before the trailers.
func (h *Handler) commitMsg(ctx context.Context, file string) error {
	b, err := h.open()
	if err != nil || b.snap == nil {
		return err
	}
	id := b.taskID()
	if id == "" {
		return nil
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(h.Dir, file)
	}
	msg, err := os.ReadFile(file)
	if err != nil {
		return contracts.Invalidf("reading the commit message: %v", err)
	}
	comment, _ := b.repo.Config("core.commentChar")
	if emptyMessage(string(msg), comment) {
		return nil // git will abort the commit; leave the message empty
	}
	_, err = refstore.Run(ctx, h.Dir, nil, "interpret-trailers", "--in-place", "--if-exists", "doNothing",
		"--trailer", "Liza-Task: "+id, "--", file)
	return err
}

// emptyMessage reports whether a message has nothing but blank lines and
// comments (up to the scissors line, below which nothing counts).
func emptyMessage(msg, comment string) bool {
	if len(comment) != 1 {
		comment = "#"
	}
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, comment) {
			if strings.Contains(line, "------------------------ >8 ------------------------") {
				return true
			}
			continue
		}
		if line != "" {
			return false
		}
	}
	return true
}

// postCommit renews the assignee's lease of the task whose worktree
// received the commit, as git liza heartbeat would: only once the lease is
// past half its term, so a busy coder adds at most two commits per lease
// period. In remote mode it does nothing (hooks make no network calls).
// It never fails the commit: trouble is a warning.
func (h *Handler) postCommit(ctx context.Context) {
	if err := h.renewLease(ctx); err != nil {
		fmt.Fprintf(h.Stderr, "git-liza: warning: lease not renewed: %s\n", contracts.Printable(err.Error()))
	}
}

func (h *Handler) renewLease(ctx context.Context) error {
	b, err := h.open()
	if err != nil || b.snap == nil {
		return err
	}
	if remote, _ := b.repo.Config("liza.remote"); remote != "" {
		return nil
	}
	id := b.taskID()
	if id == "" {
		return nil
	}
	t, err := b.snap.Task(id)
	if err != nil || t == nil || t.Status != contracts.Claimed || t.AssignedTo == "" {
		return err
	}
	agent := t.AssignedTo
	if err := contracts.Permit(agent, contracts.OpHeartbeat); err != nil {
		return err
	}
	clock, err := h.clock()
	if err != nil {
		return err
	}
	// The commit was made by whoever holds the task; when its supervisor
	// gave it a generation, the renewal carries it.
	gen, _ := strconv.Atoi(h.Getenv("LIZA_AGENT_GENERATION"))
	if h.Getenv("LIZA_AGENT_ID") != agent {
		gen = 0
	}
	svc, err := ops.New(b.repo, ops.Options{Agent: agent, Generation: gen, Clock: clock, Budget: 5 * time.Second})
	if err != nil {
		return err
	}
	_, err = svc.Renew(ctx, ops.RenewRequest{Task: id})
	return err
}

// clock is the one source of time: Handler.Clock, else the wall clock.
func (h *Handler) clock() (func() time.Time, error) {
	if h.Clock != nil {
		return h.Clock, nil
	}
	return time.Now, nil
}

// referenceTransaction refuses, in the prepared state, any move of
// refs/liza/state that git-liza did not make: its own update-ref processes
// carry GIT_LIZA_REF_UPDATE=1. git runs this hook for every ref update; the
// script starts git-liza only when refs/liza/state is among them. Updates
// that leave the ref's value as it is pass (see preservesValue): git's own
// maintenance makes them.
func (h *Handler) referenceTransaction(state string) error {
	lines, err := readUpdates(h.Stdin)
	if err != nil {
		return err
	}
	if state != "prepared" || h.Getenv(refstore.RefUpdateEnv) == "1" {
		return nil
	}
	var repo *refstore.Repo
	for _, u := range lines {
		if u.ref != stateRef {
			continue
		}
		if repo == nil {
			if repo, err = refstore.Open(h.Dir); err != nil {
				return err
			}
		}
		if ok, err := preservesValue(repo, u); err != nil || ok {
			if err != nil {
				return err
			}
			continue
		}
		// The old value is zero both for a creation and for an update that
		// names no expected value, so only a deletion can be told apart.
		what := "move"
		if u.new == zeroID {
			what = "delete"
		}
		to := ""
		if what == "move" {
			to = " to " + short(u.new)
		}
		return contracts.Invalidf("refusing to %s %s%s by hand: it moves only through git liza commands (git liza hooks uninstall removes this guard)", what, stateRef, to)
	}
	return nil
}

// preservesValue reports whether an update of refs/liza/state, in the
// prepared state, leaves what the ref resolves to as it is. git pack-refs
// (and gc and maintenance, which run it) packs a ref in two transactions,
// both of which run this hook (measured with git 2.39): the first writes
// the ref's current value into packed-refs ("0 <value>"), the second
// deletes the loose file ("<value> 0") without touching packed-refs, which
// already holds the same value, and without locking it. A deletion by hand
// removes the packed entry too, and holds packed-refs.lock while it is
// prepared; so does a pack-refs that runs alongside, which is then refused
// and leaves the loose file for the next one. Writing the value the ref
// already has changes nothing and passes.
func preservesValue(repo *refstore.Repo, u update) (bool, error) {
	cur, ok, err := repo.ReadRef(stateRef)
	if err != nil || !ok {
		return false, err
	}
	if u.new != zeroID {
		return u.new == cur.String(), nil
	}
	if u.old != cur.String() {
		return false, nil
	}
	f, files, err := repo.ReadRefFiles(stateRef)
	if err != nil || !files {
		return false, err
	}
	return f.HasLoose && f.Loose == cur && f.HasPacked && f.Packed == cur && !f.PackedLocked, nil
}

var zeroID = refstore.ZeroID.String()

// update is one "<old> <new> <ref>" line of a hook's input.
type update struct{ old, new, ref string }

func readUpdates(r io.Reader) ([]update, error) {
	if r == nil {
		return nil, nil
	}
	var out []update
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			continue
		}
		out = append(out, update{old: nullAsZero(f[0]), new: nullAsZero(f[1]), ref: f[2]})
	}
	return out, sc.Err()
}

// nullAsZero spells the null id as zeroID, whether git gave it as 40 zeros
// (SHA-1) or 64 (SHA-256).
func nullAsZero(id string) string {
	if h, ok := refstore.ParseHash(id); ok && h.IsZero() {
		return zeroID
	}
	return id
}
