// Package cas is the update loop of the blackboard: read the tip of
// refs/liza/state, apply an operation, validate, write one commit whose parent
// is that tip, and move the ref by compare-and-swap. A lost race re-reads the
// tip and re-applies the whole operation.
package cas

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/contracts"
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
	// Command is the command line that asked for the operation, recorded
	// in the commit so that sync can apply it again on another tip.
	Command []string
	// Generation, when not zero, is the registration generation of the
	// supervisor the agent runs under. The operation is refused unless the
	// agent's entry still carries it, so a supervisor replaced by a newer
	// registration of the same id cannot act.
	Generation int
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
	for attempt := 1; ; attempt++ {
		began := time.Now()
		res, err := s.attempt(ctx, op)
		if err == nil {
			res.Attempts = attempt
			return res, nil
		}
		if !errors.Is(err, refstore.ErrStale) {
			return nil, err
		}
		sleep := backoff(attempt, time.Since(began))
		if attempt > 1 && time.Now().Add(sleep).After(deadline) {
			return nil, contracts.Errorf(contracts.CodeContention,
				"%s: gave up after %d attempts in %s: %s kept moving", op.Name, attempt, budget, refstore.StateRef)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(sleep):
		}
	}
}

// backoff is the wait after the n-th lost race, whose attempt took took:
// exponential backoff with full jitter, in slots as long as an attempt. An
// attempt that loses has overlapped another writer's for about that long,
// so spreading the retries over a few slots lets the writers take turns;
// a fixed scale too short for remote attempts (a fetch and a push each)
// only makes them collide again. The window stops growing at 32 slots,
// and at two seconds.
func backoff(n int, took time.Duration) time.Duration {
	slot := max(took, 2*time.Millisecond)
	window := min(slot<<min(n, 5), 2*time.Second)
	return time.Duration(rand.Int64N(int64(window)) + 1)
}

// View runs fn on a read-only transaction at the tip for agent, after the
// same validity check an update makes. Whatever fn changes is discarded.
func (s *Store) View(agent string, fn func(tx *Tx) error) error {
	tip, err := s.tip(context.Background())
	if err != nil {
		return err
	}
	snap, err := ReadSnapshot(s.Repo, tip)
	if err != nil {
		return err
	}
	if !snap.Exists() {
		return ErrNoBoard
	}
	rebuild, err := s.checkTip(snap)
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
	tip, _, err := s.FetchState(ctx, s.Remote)
	if err != nil {
		return refstore.Hash{}, err
	}
	local, _, err := s.Repo.ReadRef(refstore.StateRef)
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

func (s *Store) attempt(ctx context.Context, op Op) (*Result, error) {
	// The update-ref process is started first so that its start-up
	// overlaps the work below; it holds no lock until it is given the
	// updates, and is told to stop if there are none.
	var txn *refstore.RefTxn
	if !s.remoteMode() {
		var err error
		if txn, err = s.Repo.BeginRefs(ctx, "liza: "+string(op.Name)); err != nil {
			return nil, err
		}
		defer txn.Abort()
	}
	tip, err := s.tip(ctx)
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
	// state, so only it may build on a tip that does not validate.
	var rebuild []*contracts.Task
	if snap.Exists() && op.Replace == nil {
		if rebuild, err = s.checkTip(snap); err != nil {
			return nil, err
		}
	}
	if op.Request != "" {
		if b, ok, err := snap.ReadFile(requestPath(op.Request)); err != nil {
			return nil, err
		} else if ok {
			var rec requestRecord
			if err := json.Unmarshal(b, &rec); err != nil {
				return nil, inconsistent("request record %s: %v", op.Request, err)
			}
			if rec.Op != string(op.Name) || rec.Agent != op.Agent {
				return nil, contracts.Invalidf("request id %s was already used by %s (%s)", op.Request, rec.Op, contracts.ActorName(rec.Agent))
			}
			return &Result{Commit: tip, Value: rec.Result, Replayed: true}, nil
		}
	}
	tx := newTx(snap, s.now(), op.Agent)
	tx.rebuildIndex = rebuild
	if op.Generation != 0 {
		if err := checkGeneration(tx, op); err != nil {
			return nil, err
		}
	}
	var value any
	var newTree refstore.Hash
	if op.Replace != nil {
		st, err := op.Replace(tx)
		if err != nil {
			return nil, err
		}
		if err := problemsError(contracts.CodeInvalid, "", contracts.Validate(st)); err != nil {
			return nil, err
		}
		if newTree, err = s.writeState(st); err != nil {
			return nil, err
		}
	} else {
		if value, err = op.Apply(tx); err != nil {
			return nil, err
		}
		if err := checkTx(tx); err != nil {
			return nil, err
		}
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	if op.Request != "" {
		rec, _ := json.Marshal(requestRecord{Op: string(op.Name), Agent: op.Agent, Result: raw})
		tx.putRaw(requestPath(op.Request), rec)
	}
	if op.Replace == nil {
		if !tx.changed() {
			return &Result{Commit: tip, Value: raw}, nil
		}
		if newTree, err = tx.writeTree(); err != nil {
			return nil, err
		}
	} else if op.Request != "" {
		snap2 := &Snapshot{Repo: s.Repo, Tree: newTree, Commit: tip, dirs: map[string][]refstore.TreeEntry{}}
		if newTree, err = applyFiles(snap2, "", map[string][]byte{requestPath(op.Request): tx.raw[requestPath(op.Request)]}); err != nil {
			return nil, err
		}
	}
	if newTree == snap.Tree {
		return &Result{Commit: tip, Value: raw}, nil
	}
	var parents []refstore.Hash
	if !tip.IsZero() {
		parents = []refstore.Hash{tip}
	}
	msg := commitMessage(op, tx)
	commit, err := s.Repo.WriteCommit(newTree, parents, s.author(op.Agent, tx.Now), msg)
	if err != nil {
		return nil, err
	}
	updates := append([]refstore.RefUpdate{{Name: refstore.StateRef, Old: tip, New: commit}}, tx.refs...)
	if s.remoteMode() {
		if err := s.publish(ctx, op, updates); err != nil {
			return nil, err
		}
	} else if err := txn.Commit(updates...); err != nil {
		return nil, err
	}
	s.markValid(commit)
	return &Result{Commit: commit, Value: raw}, nil
}

func (s *Store) now() time.Time {
	if s.Clock != nil {
		return s.Clock().UTC().Truncate(time.Second)
	}
	return time.Now().UTC().Truncate(time.Second)
}

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

// commitMessage is the subject, a blank line and the trailers.
func commitMessage(op Op, tx *Tx) string {
	subject := tx.subject
	if subject == "" {
		subject = string(op.Name)
	}
	var b strings.Builder
	b.WriteString(subject)
	b.WriteString("\n\n")
	if body := strings.TrimSpace(tx.body); body != "" {
		b.WriteString(body)
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "Liza-Op: %s\n", op.Name)
	fmt.Fprintf(&b, "Liza-Agent: %s\n", contracts.ActorName(op.Agent))
	if tx.task != "" {
		fmt.Fprintf(&b, "Liza-Task: %s\n", tx.task)
	}
	if op.Request != "" {
		fmt.Fprintf(&b, "Liza-Request: %s\n", op.Request)
	}
	if len(op.Command) > 0 {
		cmd, _ := json.Marshal(op.Command)
		fmt.Fprintf(&b, "Liza-Command: %s\n", cmd)
	}
	return b.String()
}

// checkGeneration refuses an operation from a supervisor whose
// registration has been superseded.
func checkGeneration(tx *Tx, op Op) error {
	if op.Agent == "" {
		return contracts.Invalidf("a supervisor generation needs an agent id")
	}
	a, err := tx.Agent(op.Agent)
	if err != nil {
		return err
	}
	if a == nil {
		return contracts.Invalidf("%s is not registered (generation %d): its supervisor was stopped", op.Agent, op.Generation)
	}
	if a.Generation != op.Generation {
		return contracts.Invalidf("stale supervisor: %s is now generation %d, this process is generation %d", op.Agent, a.Generation, op.Generation)
	}
	return nil
}

// Trailers reads the "Key: value" lines of a commit message's last
// paragraph.
func Trailers(msg string) map[string]string {
	out := map[string]string{}
	paras := strings.Split(strings.TrimSpace(msg), "\n\n")
	if len(paras) < 2 {
		return out
	}
	for _, line := range strings.Split(paras[len(paras)-1], "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if ok && !strings.ContainsAny(k, " \t") {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

type requestRecord struct {
	Op     string          `json:"op"`
	Agent  string          `json:"agent,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
}

// requestPath spreads request records over 256 subtrees so that no tree an
// operation rewrites grows without bound.
func requestPath(id string) string {
	sum := sha1.Sum([]byte(id))
	h := hex.EncodeToString(sum[:])
	return RequestDir + "/" + h[:2] + "/" + h[2:]
}

// ValidRequestID checks an idempotency key: 1-128 characters of
// [A-Za-z0-9._:-].
func ValidRequestID(id string) error {
	if len(id) == 0 || len(id) > 128 {
		return contracts.Invalidf("invalid request id %q: 1 to 128 characters", id)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._:-", c)) {
			return contracts.Invalidf("invalid request id %q: use letters, digits and . _ : -", id)
		}
	}
	return nil
}

// writeState stores a whole state as a fresh tree.
func (s *Store) writeState(st *contracts.State) (refstore.Hash, error) {
	files, err := splitState(st)
	if err != nil {
		return refstore.Hash{}, err
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
