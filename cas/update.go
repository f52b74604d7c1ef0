// Package cas is the update loop of the blackboard: read the tip of
// refs/liza/state, apply an operation, validate, write one commit whose parent
// is that tip, and move the ref by compare-and-swap. A lost race re-reads the
// tip and re-applies the whole operation.
package cas

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/proc"
	"github.com/liza-dev/git-liza/refstore"
)

// Store is a blackboard in one repository.
type Store struct {
	Repo  *refstore.Repo
	Clock func() time.Time
	// Budget bounds the time spent retrying lost races (default 30s).
	Budget time.Duration
	// Author is the identity of commits made for the human operator.
	Author refstore.Signature
	// Remote, when set (git config liza.remote), is the remote whose
	// refs/liza/state is the blackboard: every update is built on the
	// remote's tip and lands by an atomic push that names the old value.
	Remote string
	// Offline makes a Store with a Remote commit locally only; sync
	// publishes the operations later.
	Offline bool
	// Sign, when set, signs a commit's payload (git's SSH signing); the
	// signature goes in the commit's gpgsig header.
	Sign func(payload []byte) ([]byte, error)
	// Verify, when set, checks a tip that git-liza did not write here
	// (fetched, moved by hand) before anything builds on it: every commit
	// from the last one known good must be exactly what its recorded
	// operation makes of its parent. An error stops the operation.
	Verify func(ctx context.Context, tip refstore.Hash) error
}

// remoteMode reports whether updates go through the remote.
func (s *Store) remoteMode() bool { return s.Remote != "" && !s.Offline }

// Op is one mutation of the blackboard.
type Op struct {
	Name    contracts.Op
	Agent   string // empty for the human operator
	Request string // optional idempotency key
	// Apply makes the change on tx. It may return a result to report; the
	// result is kept with the request id so that a retried request reports
	// the first result. An error aborts the operation; nothing is written.
	Apply func(tx *Tx) (any, error)
	// AllowMissing lets Apply run when there is no state yet (init, import).
	AllowMissing bool
	// Replace makes Apply's state the whole new tree (import).
	Replace func(tx *Tx) (*contracts.State, error)
	// Kind names the operation precisely (Name is its permission class:
	// "sprint" covers several kinds) and Input is its input as JSON. Both
	// are recorded in the commit (Liza-Input), so that the commit can be
	// checked by applying the same kind to the same input on its parent
	// state at its time, and sync can apply it again on another tip. A
	// request id remembers a digest of both.
	Kind  string
	Input json.RawMessage
	// Generation, when not zero, is the registration generation of the
	// supervisor the agent runs under. The operation is refused unless the
	// agent's entry still carries it, so a supervisor replaced by a newer
	// registration of the same id cannot act. While a supervisor holds the
	// id (its supervisor lease has not ended), a write without its
	// generation is refused too: an agent cannot slip out of the check by
	// leaving the generation out.
	Generation int
	// Rules is the rule set the operation follows (contracts.RulesFirst
	// and later); zero means contracts.Rules. A recorded operation writes
	// it in the commit (Liza-Rules), so that its replay follows the same.
	Rules int
}

// RulesOf is the rule set op follows.
func (op Op) RulesOf() int {
	if op.Rules > 0 {
		return op.Rules
	}
	return contracts.Rules
}

// Result is what an operation did.
type Result struct {
	Commit   refstore.Hash // the commit made, or the tip when nothing changed
	Value    json.RawMessage
	Replayed bool // the request id had been applied already
	Attempts int
}

// ErrContention is returned when the retry budget is spent.
var ErrContention = errors.New("contention")

// Update runs op against the tip until it commits, fails validation, or the
// retry budget is spent.
func (s *Store) Update(ctx context.Context, op Op) (*Result, error) {
	if op.Request != "" {
		if err := ValidRequestID(op.Request); err != nil {
			return nil, err
		}
	}
	budget := s.Budget
	if budget <= 0 {
		budget = 30 * time.Second
	}
	deadline := time.Now().Add(budget)
	turn := s.newTurn()
	if turn != nil {
		// Interrupted, an operation on a remote stops its git and takes
		// its ticket away (leave) before the command ends.
		var stop context.CancelFunc
		ctx, stop = refstore.SignalContext(ctx)
		defer stop()
	}
	res, err := s.update(ctx, op, turn, budget, deadline)
	if err != nil {
		// An operation that ends without its push leaves no ticket at the
		// head of the queue for every other clone to wait behind.
		s.leave(ctx, turn)
	}
	return res, err
}

// update is Update's loop of attempts.
func (s *Store) update(ctx context.Context, op Op, turn *turn, budget time.Duration, deadline time.Time) (*Result, error) {
	for attempt := 1; ; attempt++ {
		began := time.Now()
		res, err := s.attempt(ctx, op, turn)
		if err == nil {
			res.Attempts = attempt
			s.reap(ctx, turn)
			return res, nil
		}
		if turn != nil && turn.guessed && !errors.Is(err, errYield) && ctx.Err() == nil && !refstore.RemoteDown(err) {
			// The attempt built on the tip this clone saw last, and it
			// was refused (here or by the remote, which had moved), or
			// changed nothing: what the remote holds now decides, so the
			// operation is tried again on it at once, as its first try.
			// A remote that did not answer (its push may yet land) is
			// not asked again at once: that is said, and the caller
			// (a supervisor's hold) decides when to look again.
			turn.guessed = false
			attempt--
			continue
		}
		var sleep time.Duration
		switch {
		case errors.Is(err, errYield):
			// Not an attempt: take a place in the queue, and look at it
			// again when the turns ahead should be over.
			attempt--
			s.join(ctx, turn)
			sleep = turn.poll()
		case errors.Is(err, refstore.ErrStale):
			s.join(ctx, turn)
			sleep = backoff(attempt, time.Since(began))
			if turn != nil && !turn.mine.commit.IsZero() {
				// In the queue, its turn comes by the queue's order.
				sleep = min(sleep, queuePoll())
			}
		default:
			return nil, err
		}
		if attempt > 1 && time.Now().Add(sleep).After(deadline) {
			// A lock of git's that stayed (one a killed git left is
			// removed once stale, and the next attempt passes) is named.
			var locked *refstore.LockError
			if errors.As(err, &locked) {
				return nil, contracts.Errorf(contracts.CodeContention,
					"%s: gave up after %d attempts in %s: %v", op.Name, attempt, budget, locked)
			}
			return nil, contracts.Errorf(contracts.CodeContention,
				"%s: gave up after %d attempts in %s: %s kept moving", op.Name, attempt, budget, refstore.StateRef)
		}
		if err := sleepCtx(ctx, sleep); err != nil {
			return nil, err
		}
		if errors.Is(err, errYield) {
			if err := s.waitTurn(ctx, turn, deadline); err != nil {
				return nil, err
			}
		}
	}
}

// View runs fn on a read-only transaction at the tip for agent, after the
// same validity check an update makes. Whatever fn changes is discarded.
func (s *Store) View(agent string, fn func(tx *Tx) error) error {
	return s.ViewContext(context.Background(), agent, fn)
}

// ViewContext is View whose fetch of the remote's tip ends with ctx (an
// interrupted command does not wait for it).
func (s *Store) ViewContext(ctx context.Context, agent string, fn func(tx *Tx) error) error {
	tip, reused := refstore.Hash{}, false
	if s.remoteMode() {
		tip, reused = reusedTip(ctx)
	}
	if !reused {
		var err error
		if tip, err = s.tip(ctx); err != nil {
			return err
		}
	}
	snap, err := ReadSnapshot(s.Repo, tip)
	if err != nil {
		return err
	}
	if !snap.Exists() {
		return ErrNoBoard
	}
	rebuild, err := s.checkTip(context.Background(), snap)
	if err != nil {
		return err
	}
	tx := newTx(snap, s.now(), agent)
	tx.rebuildIndex = rebuild
	return fn(tx)
}

// tip is the commit an operation builds on: refs/liza/state, or in remote
// mode the remote's, fetched now. Every attempt fetches: an operation
// checked against a stale copy could be refused for a state the remote no
// longer has.
func (s *Store) tip(ctx context.Context) (refstore.Hash, error) {
	if !s.remoteMode() {
		tip, _, err := s.Repo.ReadRef(refstore.StateRef)
		return tip, err
	}
	// The local ref is read first: another process of this clone moves
	// it only after its push landed, so what it held is on the remote by
	// the time the remote is read, however the two interleave.
	local, _, err := s.Repo.ReadRef(refstore.StateRef)
	if err != nil {
		return refstore.Hash{}, err
	}
	tip, _, err := s.fetchState(ctx, s.Remote, false)
	if err != nil || local == tip || local.IsZero() {
		return tip, err
	}
	behind, err := s.Repo.IsAncestor(ctx, local.String(), tip.String())
	if err != nil {
		return tip, err
	}
	if !behind {
		return tip, contracts.Invalidf("%s has operations that are not on %s yet: run git liza sync", refstore.StateRef, s.Remote)
	}
	return tip, nil
}

func (s *Store) attempt(ctx context.Context, op Op, turn *turn) (*Result, error) {
	// Where this process may move refs/liza/state itself (see
	// refstore.DirectRefs), it does, without a git process, and takes its
	// turn among git-liza's writers before it reads the tip, holding it
	// until the ref has moved: it cannot lose the race to another of them,
	// whose wait in the kernel's queue costs less than building on a tip
	// about to move and then backing off (with many agents the backoffs
	// were most of a merge's time). Otherwise the update-ref process is
	// started first so that its start-up overlaps the work below; it holds
	// no lock until it is given the updates, and is told to stop if there
	// are none.
	direct := !s.remoteMode() && s.Repo.DirectRefs()
	// New objects are written as one pack before the ref moves (Hold); the
	// hold ends after the turn, so a tidy of small packs blocks no writer.
	defer s.Repo.Hold()()
	var txn *refstore.RefTxn
	if direct {
		end, err := s.Repo.RefTurn()
		if err != nil {
			return nil, err
		}
		defer end()
	} else if !s.remoteMode() {
		var err error
		if txn, err = s.Repo.BeginRefs(ctx, "liza: "+string(op.Name)); err != nil {
			return nil, err
		}
		defer txn.Abort()
	}
	tip, err := s.guessTip(ctx, turn)
	if err != nil {
		return nil, err
	}
	snap, err := ReadSnapshot(s.Repo, tip)
	if err != nil {
		return nil, err
	}
	if !snap.Exists() && !op.AllowMissing {
		return nil, ErrNoBoard
	}
	// A whole-state replacement (import) is how a person repairs a broken
	// state, so only it may build on a tip that does not validate. The tip
	// is checked before the operation looks at the queue: what it fetched
	// while it waits is verified while it waits, and its turn costs only
	// what came after.
	var rebuild *Rebuild
	if snap.Exists() && op.Replace == nil {
		if rebuild, err = s.checkTip(ctx, snap); err != nil {
			return nil, err
		}
	}
	if turn != nil {
		live, stale, err := s.tickets(ctx, s.instant())
		if err != nil {
			return nil, err
		}
		if turn.yield(time.Now(), tip, live, stale) {
			return nil, errYield
		}
	}
	b, err := s.build(snap, op, s.now(), rebuild)
	if err != nil {
		return nil, err
	}
	if b.replayed || b.tree == snap.Tree {
		if turn != nil && turn.guessed {
			return nil, errGuessed // nothing to push on a tip that may be old
		}
		return &Result{Commit: tip, Value: b.value, Replayed: b.replayed}, nil
	}
	var parents []refstore.Hash
	if !tip.IsZero() {
		parents = []refstore.Hash{tip}
	}
	commit, err := s.Repo.WriteCommitSigned(b.tree, parents, s.author(op.Agent, b.now), b.msg, s.Sign)
	if err != nil {
		return nil, err
	}
	if err := s.Repo.FlushObjects(); err != nil {
		return nil, err
	}
	// The state moves last. git's files backend moves the refs of one
	// transaction one after the other, in the order given: a reader that
	// reads the state and then a ref the operation moved with it (a
	// merge's integration branch) must not find the state new and the
	// branch old.
	updates := append(append([]refstore.RefUpdate(nil), b.refs...), refstore.RefUpdate{Name: refstore.StateRef, Old: tip, New: commit})
	// The commit is marked valid before the ref moves to it: a supervisor
	// that sees the new tip at once must find it known good, or it reads
	// and validates the whole board. A commit whose move then fails is no
	// less valid: it is an operation applied to a valid state.
	s.markValid(commit)
	proc.CrashPoint("cas:commit")
	if s.remoteMode() {
		updates = append(updates, s.keep(turn)...)
		if err := s.publish(ctx, op, updates); err != nil {
			return nil, err
		}
	} else if err := s.move(ctx, op, txn, updates); err != nil {
		return nil, err
	} else {
		// Those waiting here for a file it changed wake (refstore.Bells).
		s.Repo.Ring(b.changed)
	}
	return &Result{Commit: commit, Value: b.value}, nil
}

// move moves the refs of a local operation: through txn when it was
// started, else in this process when the state ref moves alone, else
// (the state with other refs, a merge's) through a git update-ref started
// now.
func (s *Store) move(ctx context.Context, op Op, txn *refstore.RefTxn, updates []refstore.RefUpdate) error {
	reason := "liza: " + string(op.Name)
	if txn != nil {
		return txn.Commit(updates...)
	}
	// Without txn, the attempt holds the turn (see attempt).
	if len(updates) == 1 {
		err := s.Repo.MoveRefInTurn(updates[0], reason, s.author(op.Agent, time.Now()))
		if !errors.Is(err, refstore.ErrNeedGit) {
			return err
		}
	}
	txn, err := s.Repo.BeginRefs(ctx, reason)
	if err != nil {
		return err
	}
	defer txn.Abort()
	return txn.Commit(updates...)
}

// instant is the store's clock to the nanosecond, for what is not
// recorded in the state (the queue's tickets).
func (s *Store) instant() time.Time {
	if s.Clock != nil {
		return s.Clock().UTC()
	}
	return time.Now().UTC()
}

func (s *Store) now() time.Time { return s.instant().Truncate(time.Second) }

func (s *Store) author(agent string, when time.Time) refstore.Signature {
	if agent != "" {
		return refstore.Signature{Name: agent, Email: agent + "@liza.invalid", When: when}
	}
	a := s.Author
	if a.Name == "" {
		a = refstore.Signature{Name: "git-liza", Email: "git-liza@liza.invalid"}
	}
	a.When = when
	return a
}

type requestRecord struct {
	Op    string `json:"op"`
	Agent string `json:"agent,omitempty"`
	// Digest is inputDigest of the request: a reuse of the request id for
	// other inputs is refused rather than reported as done.
	Digest string          `json:"digest,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
}

// writeState stores a whole state as a fresh tree, and its claim index
// too under rules (a rule set) that keep one.
func (s *Store) writeState(st *contracts.State, rules int) (refstore.Hash, error) {
	files, err := splitState(st)
	if err != nil {
		return refstore.Hash{}, err
	}
	if rules >= contracts.RulesClaimIndex {
		sums := make([]*contracts.TaskSummary, len(st.Tasks))
		for i, t := range st.Tasks {
			sums[i] = t.Summary()
		}
		for p, b := range claimFiles(sums, grouped(rules)) {
			files[p] = b
		}
	}
	empty := &Snapshot{Repo: s.Repo, dirs: map[string][]refstore.TreeEntry{"": nil}}
	return applyFiles(empty, "", files)
}

// applyFiles rewrites the directory dir of snap with files (path -> content,
// nil to delete), rewriting only the subtrees that change. It returns the
// zero hash for a directory left empty.
func applyFiles(snap *Snapshot, dir string, files map[string][]byte) (refstore.Hash, error) {
	existing, err := snap.Entries(dir)
	if err != nil {
		return refstore.Hash{}, err
	}
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	edits := make([]refstore.TreeEntry, 0, len(files))
	sub := map[string]map[string][]byte{}
	for p, b := range files {
		rel := strings.TrimPrefix(p, prefix)
		for _, part := range strings.Split(rel, "/") {
			if part == "" || part == "." || part == ".." {
				return refstore.Hash{}, contracts.Invalidf("invalid path %q in the state tree", p)
			}
		}
		if i := strings.IndexByte(rel, '/'); i >= 0 {
			name := rel[:i]
			if sub[name] == nil {
				sub[name] = map[string][]byte{}
			}
			sub[name][p] = b
			continue
		}
		e := refstore.TreeEntry{Mode: refstore.ModeFile, Name: rel}
		if max := fileCap(p); int64(len(b)) > max {
			// Readers refuse such a file (see MaxFile): it is not written.
			return refstore.Hash{}, contracts.Invalidf("%s would be %d bytes, over the %s cap of a state file", p, len(b), refstore.ByteSize(max))
		}
		if b != nil {
			if e.ID, err = snap.Repo.WriteBlob(b); err != nil {
				return refstore.Hash{}, err
			}
		}
		edits = append(edits, e)
	}
	for name, group := range sub {
		id, err := applyFiles(snap, prefix+name, group)
		if err != nil {
			return refstore.Hash{}, err
		}
		edits = append(edits, refstore.TreeEntry{Mode: refstore.ModeTree, Name: name, ID: id})
	}
	list := refstore.EditTree(existing, edits)
	if len(list) == 0 {
		return refstore.Hash{}, nil
	}
	return snap.Repo.WriteTree(list)
}
