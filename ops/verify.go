package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// MaxClockSkew is how far a state commit's time may be from the clock of
// whoever checks it: a server refuses a pushed commit further from its own
// clock, and nobody accepts a commit later than their clock by more, or
// earlier than its parent by more. Leases run from a commit's time, so a
// commit dated in the future would hold its task that much longer; a
// takeover of a lease is judged by the verifier's clock, not by the
// taker's date alone (takeoverTime).
const MaxClockSkew = cas.MaxClockSkew

// Verifier checks state commits: each must be exactly what its recorded
// operation, by its recorded agent, with its recorded input, makes of its
// parent state at its time (same tree, same message), the agent's role
// must allow the operation, and what the input says of git (a claim's base
// on the integration branch, a submitted commit within the task's scope, a
// merge commit that is the merge of the approved commit) must hold. An
// import, whose effect is free, may still not delete or edit any task's
// history, rewrite a finished task, or move a task across a forbidden
// transition.
type Verifier struct {
	Repo  *refstore.Repo
	store *cas.Store
	// Now is the verifier's clock. A commit later than Now+MaxClockSkew is
	// refused; with Push set, so is one earlier than Now-MaxClockSkew (a
	// server checks that what is pushed now was made now).
	Now  time.Time
	Push bool
	// Strict makes missing objects an error: a server holds every object
	// a push depends on. A clone checks what the objects it has allow.
	Strict bool
	// Moves are the other refs the pushed commits come with (a server),
	// by ref name. A merge's move of the integration branch must be among
	// them; nil where the verifier sees no push.
	Moves map[string]refstore.RefUpdate
	// Integration is where the integration branch is, for the checks of
	// claims' base commits; zero when unknown here.
	Integration refstore.Hash
	// AllowedSigners, when set, is an ssh-keygen allowed-signers file: every
	// commit must then be signed by a key it allows for the commit's
	// Liza-Agent ("human" for the operator).
	AllowedSigners string
	SSHProgram     string

	// justified lists the integration moves the verified merges made.
	justified []refstore.RefUpdate
}

// Verifier makes a Verifier on the service's repository, at the service's
// clock. Where this repository sets liza.allowedSigners (a server, or a
// clone that asks for it), its commits must be signed: a clone then holds
// what it fetches to what a guarded remote would.
func (s *Service) Verifier() *Verifier {
	v := &Verifier{Repo: s.Repo, store: s.Store, Now: s.Now()}
	if signers, ok := s.Repo.Config("liza.allowedSigners"); ok && signers != "" {
		if !filepath.IsAbs(signers) {
			signers = filepath.Join(s.Repo.GitDir, signers)
		}
		v.AllowedSigners = signers
		v.SSHProgram, _ = s.Repo.Config("gpg.ssh.program")
	}
	return v
}

// Justified reports whether the verified merges moved u's ref from u.Old
// to u.New: each merge's move starts where the one before it ended, the
// first at u.Old and the last at u.New, and every merge of that ref is
// among them. A push of several merges (several state commits, or one
// batch of merges, or both) moves the branch through all of them at once;
// one more commit on the branch than the merges record, or a merge the
// push does not carry to the branch, breaks the chain.
func (v *Verifier) Justified(u refstore.RefUpdate) bool {
	var steps []refstore.RefUpdate
	for _, j := range v.justified {
		if j.Name == u.Name {
			steps = append(steps, j)
		}
	}
	if len(steps) == 0 {
		return false
	}
	at := u.Old
	for len(steps) > 0 {
		i := slices.IndexFunc(steps, func(j refstore.RefUpdate) bool { return j.Old == at })
		if i < 0 {
			return false
		}
		at = steps[i].New
		steps = slices.Delete(steps, i, i+1)
	}
	return at == u.New
}

// Recorded is what a state commit says it is.
type Recorded struct {
	Op         contracts.Op
	Agent      string // the agent id, "" for the human operator
	Kind       string
	Input      json.RawMessage
	Request    string
	Generation int
	// Rules is the rule set the commit was made under (Liza-Rules;
	// contracts.RulesFirst without one).
	Rules int
}

// ReadRecorded reads a state commit's trailers.
func ReadRecorded(msg string) (Recorded, error) {
	tr := cas.Trailers(msg)
	r := Recorded{Op: contracts.Op(tr["Liza-Op"]), Agent: tr["Liza-Agent"], Kind: tr["Liza-Kind"], Request: tr["Liza-Request"]}
	if r.Op == "" || r.Agent == "" {
		return r, fmt.Errorf("it lacks the Liza-Op and Liza-Agent trailers; state commits are made by git liza commands")
	}
	if r.Agent == "human" {
		r.Agent = ""
	}
	if _, err := contracts.ParseAgentID(r.Agent); err != nil {
		return r, fmt.Errorf("Liza-Agent: %v", err)
	}
	if in := tr["Liza-Input"]; in != "" {
		if !json.Valid([]byte(in)) {
			return r, fmt.Errorf("Liza-Input is not JSON")
		}
		r.Input = json.RawMessage(in)
	}
	if g := tr["Liza-Generation"]; g != "" {
		n, err := strconv.Atoi(g)
		if err != nil || n < 1 {
			return r, fmt.Errorf("Liza-Generation %q is not a generation", g)
		}
		r.Generation = n
	}
	r.Rules = contracts.RulesFirst
	if g := tr["Liza-Rules"]; g != "" {
		n, err := strconv.Atoi(g)
		switch {
		case err != nil || n <= contracts.RulesFirst:
			return r, fmt.Errorf("Liza-Rules %q is not a rule set", g)
		case n > contracts.Rules:
			return r, fmt.Errorf("it was made under rule set %d, newer than this git-liza knows (%d): upgrade git-liza", n, contracts.Rules)
		}
		r.Rules = n
	}
	return r, nil
}

// rulesOf is the rule set of the state commit whose message is msg.
func rulesOf(msg string) int {
	if n, err := strconv.Atoi(cas.Trailers(msg)["Liza-Rules"]); err == nil && n > contracts.RulesFirst {
		return n
	}
	return contracts.RulesFirst
}

// Commit verifies one state commit against its parent.
func (v *Verifier) Commit(ctx context.Context, c *refstore.Commit) error {
	if len(c.Parents) > 1 {
		return fmt.Errorf("it is a merge; state commits have one parent")
	}
	rec, err := ReadRecorded(c.Message)
	if err != nil {
		return err
	}
	role, _ := contracts.ParseAgentID(rec.Agent)
	if !contracts.Allowed(role, rec.Op) {
		return fmt.Errorf("%s (%s) may not %s", contracts.ActorName(rec.Agent), role, rec.Op)
	}
	var parent *cas.Snapshot
	var parentTime time.Time
	if len(c.Parents) == 1 {
		pc, err := v.Repo.ReadCommit(c.Parents[0])
		if err != nil {
			return v.missing("its parent " + short(c.Parents[0].String()))
		}
		parentTime = pc.Author.When
		if parent, err = cas.ReadSnapshot(v.Repo, pc.ID); err != nil {
			return err
		}
		// A board does not go back to older rules once a commit followed
		// newer ones.
		if pr := rulesOf(pc.Message); rec.Rules < pr {
			return fmt.Errorf("it was made under rule set %d, older than its parent's (%d)", rec.Rules, pr)
		}
	} else if parent, err = cas.ReadSnapshot(v.Repo, refstore.Hash{}); err != nil {
		return err
	}
	if err := v.checkTime(c, parentTime); err != nil {
		return err
	}
	// What is pushed now was made now, under the rules of now.
	if v.Push && rec.Rules != contracts.Rules {
		return fmt.Errorf("it was made under rule set %d; this remote takes state commits made under rule set %d: upgrade git-liza and run git liza sync", rec.Rules, contracts.Rules)
	}
	if v.AllowedSigners != "" {
		if err := v.checkSignature(ctx, c, rec); err != nil {
			return err
		}
	}
	if rec.Kind == "" {
		return fmt.Errorf("it records no Liza-Kind and Liza-Input: state commits are made by git liza commands, which record the operation so that it can be checked")
	}
	if rec.Kind == kindImport {
		if rec.Op != contracts.OpImport {
			return fmt.Errorf("Liza-Kind import under Liza-Op %s", rec.Op)
		}
		return v.checkImport(parent, c, rec)
	}
	k, ok := kinds[rec.Kind]
	if !ok {
		return fmt.Errorf("Liza-Kind %q is no operation git-liza knows", rec.Kind)
	}
	if k.op != rec.Op {
		return fmt.Errorf("Liza-Kind %s goes with Liza-Op %s, not %s", k.name, k.op, rec.Op)
	}
	if !parent.Exists() && k != kindInit {
		return fmt.Errorf("the first state commit is an init or an import, not %s", k.name)
	}
	op := cas.Op{Name: rec.Op, Agent: rec.Agent, Request: rec.Request, Generation: rec.Generation, Kind: rec.Kind, Input: rec.Input, Rules: rec.Rules,
		AllowMissing: k == kindInit, Apply: func(tx *cas.Tx) (any, error) {
			tx.Takeover = v.takeoverTime(tx.Now)
			return k.apply(tx, rec.Input)
		}}
	when := c.Author.When
	tree, msg, refs, err := v.store.Replay(parent, op, when, nil)
	if err == nil && tree != c.Tree && parent.Exists() {
		// A state whose stored index did not match its tasks (one moved by
		// hand, then repaired) gets it rebuilt by the next operation.
		if rebuild, rerr := cas.RebuildIndex(parent); rerr == nil && rebuild != nil {
			tree, msg, refs, err = v.store.Replay(parent, op, when, rebuild)
		}
	}
	what := fmt.Sprintf("%s by %s", k.name, contracts.ActorName(rec.Agent))
	if err != nil {
		return fmt.Errorf("%s is refused on its parent state: %v", what, contracts.FirstLine(err.Error()))
	}
	if tree != c.Tree {
		return fmt.Errorf("its change is not what %s makes: it differs in %s", what, v.treeDiff(tree, c.Tree))
	}
	if msg != c.Message {
		return fmt.Errorf("its message is not the one %s writes", what)
	}
	if k.facts != nil {
		ptx := cas.ReadTx(parent, when, rec.Agent)
		ptx.Rules = rec.Rules
		if err := k.facts(ctx, v, ptx, rec.Input); err != nil {
			return err
		}
	}
	if k == kindVerdict && v.AllowedSigners != "" {
		in, err := decodeInput[verdictInput](k.name, rec.Input)
		if err != nil {
			return err
		}
		if err := v.checkSeparation(ctx, c, parent, in.Task); err != nil {
			return err
		}
	}
	for _, r := range refs {
		if r.Name != refstore.StateRef && !strings.HasPrefix(r.Name, "refs/heads/") {
			return fmt.Errorf("%s moves %s", what, r.Name)
		}
	}
	return nil
}

// checkTime refuses a commit dated too far from the verifier's clock or
// before its parent, and one whose committer time is not its author time
// (git-liza writes both the same: the operation's time).
func (v *Verifier) checkTime(c *refstore.Commit, parentTime time.Time) error {
	t := c.Author.When
	if !c.Committer.When.Equal(t) {
		return fmt.Errorf("its committer time is not its operation's time")
	}
	if !v.Now.IsZero() {
		if t.After(v.Now.Add(MaxClockSkew)) {
			return fmt.Errorf("it is dated %s, after the clock here (%s)", contracts.FormatTime(t), contracts.FormatTime(v.Now))
		}
		if v.Push && t.Before(v.Now.Add(-MaxClockSkew)) {
			return fmt.Errorf("it is dated %s, more than %s before the clock here (%s): operations are pushed when they are made (git liza sync applies older ones again)", contracts.FormatTime(t), MaxClockSkew, contracts.FormatTime(v.Now))
		}
	}
	if !parentTime.IsZero() && t.Before(parentTime.Add(-MaxClockSkew)) {
		return fmt.Errorf("it is dated %s, before its parent (%s)", contracts.FormatTime(t), contracts.FormatTime(parentTime))
	}
	return nil
}

// takeoverTime is when a commit dated t may judge that a lease held by
// someone else ran out (cas.Tx.TakeoverTime): never later than the clock
// here, whatever the commit's date says, so that a writer's fast clock
// takes no lease early.
//
// A guarded remote (Push) judges as the writer did when it made the
// operation, at the earlier of the commit's time and its own clock, less
// MaxClockSkew: a claim dated ahead of the server gains nothing, and an
// honest takeover made once the lease was over by every clock within the
// bound lands. A clone judges at the earlier of the commit's time and its
// own clock, without the margin: the issue it catches is a commit dated
// ahead to take a lease still live by the clock here, while an honest
// writer's clock may run ahead of the clone's by up to the bound (it
// waited the margin by its own), and the commits older git-liza made took
// leases the moment they ended. A refusal here stops the clone, so it
// must never fire for an honest writer.
func (v *Verifier) takeoverTime(t time.Time) time.Time {
	if v.Now.IsZero() {
		return t
	}
	at := t
	if v.Now.Before(at) {
		at = v.Now
	}
	if v.Push {
		at = at.Add(-MaxClockSkew)
	}
	return at
}

// checkSignature requires a valid SSH signature by a key the allowed
// signers let the commit's agent sign with.
func (v *Verifier) checkSignature(ctx context.Context, c *refstore.Commit, rec Recorded) error {
	payload, sig, err := v.Repo.CommitSignature(c.ID)
	if err != nil {
		return err
	}
	principal := contracts.ActorName(rec.Agent)
	if sig == nil {
		return fmt.Errorf("it is not signed; this repository takes only state commits signed by their agent (liza.allowedSigners)")
	}
	if err := refstore.VerifySSH(ctx, v.SSHProgram, v.AllowedSigners, principal, payload, sig); err != nil {
		if ops := Class(err); ops == contracts.CodeMissingDep {
			return err
		}
		return fmt.Errorf("its signature is not one the allowed signers give to %s", principal)
	}
	return nil
}

// treeDiff names the files two state trees hold differently.
func (v *Verifier) treeDiff(want, got refstore.Hash) string {
	var diffs []string
	left := int64(cas.MaxTrees) // what the trees read here may hold together
	var walk func(dir string, a, b refstore.Hash)
	walk = func(dir string, a, b refstore.Hash) {
		if a == b || len(diffs) > 5 {
			return
		}
		ea, _ := v.readTree(a, &left)
		eb, err := v.readTree(b, &left)
		if big := new(refstore.TooLargeError); errors.As(err, &big) {
			where := dir
			if where == "" {
				where = "its tree"
			}
			diffs = append(diffs, fmt.Sprintf("%s (tree %s is %d bytes, over the %s the trees compared may hold)", where, short(big.ID.String()), big.Size, refstore.ByteSize(cas.MaxTrees)))
			return
		}
		names := map[string]bool{}
		for _, e := range ea {
			names[e.Name] = true
		}
		for _, e := range eb {
			names[e.Name] = true
		}
		for _, n := range slices.Sorted(func(yield func(string) bool) {
			for n := range names {
				if !yield(n) {
					return
				}
			}
		}) {
			x, okx := refstore.FindEntry(ea, n)
			y, oky := refstore.FindEntry(eb, n)
			switch {
			case okx && oky && x.ID == y.ID:
			case okx && oky && x.IsTree() && y.IsTree():
				walk(dir+n+"/", x.ID, y.ID)
			case !okx:
				diffs = append(diffs, dir+n+" (added)")
			case !oky:
				diffs = append(diffs, dir+n+" (removed)")
			default:
				diffs = append(diffs, dir+n)
			}
		}
	}
	walk("", want, got)
	if len(diffs) > 5 {
		diffs = append(diffs[:5], "...")
	}
	if len(diffs) == 0 {
		return "its tree"
	}
	return strings.Join(diffs, ", ")
}

// readTree reads a tree holding at most *left bytes, and takes its size
// from *left: a pushed tree may be huge, or many trees large.
func (v *Verifier) readTree(id refstore.Hash, left *int64) ([]refstore.TreeEntry, error) {
	if id.IsZero() {
		return nil, nil
	}
	entries, err := v.Repo.ReadTreeMax(id, *left)
	for _, e := range entries {
		*left -= int64(len(e.Mode) + len(e.Name) + 2 + e.ID.Size())
	}
	return entries, err
}

// has reports whether every object is here.
func (v *Verifier) has(ids ...refstore.Hash) bool {
	for _, id := range ids {
		if id.IsZero() || !v.Repo.HasObject(id) {
			return false
		}
	}
	return true
}

// missing is what a verifier says of a fact it cannot check for want of an
// object: an error where every object must be here (a server), nothing in
// a clone (whoever fetches the object checks it).
func (v *Verifier) missing(what string) error {
	if v.Strict {
		return fmt.Errorf("%s is not in the repository", what)
	}
	return nil
}

// onIntegration checks that commit is on the integration branch, where
// the verifier knows where that is.
func (v *Verifier) onIntegration(ctx context.Context, parent *cas.Tx, commit refstore.Hash, what string) error {
	tip := v.Integration
	if m, err := parent.Meta(); err == nil {
		if u, ok := v.Moves["refs/heads/"+m.Config.IntegrationBranch]; ok && !u.New.IsZero() {
			tip = u.New
		}
	}
	if tip.IsZero() || !v.has(commit, tip) {
		return v.missing(what + " " + short(commit.String()))
	}
	ok, err := v.Repo.IsAncestor(ctx, commit.String(), tip.String())
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s %s is not on the integration branch", what, short(commit.String()))
	}
	return nil
}

// mergeMove records a merge's move of the integration branch; where the
// verifier sees the push, the push must move the branch, through this
// move and the other merges' it carries (Justified).
func (v *Verifier) mergeMove(ref string, old, new refstore.Hash) error {
	u := refstore.RefUpdate{Name: ref, Old: old, New: new}
	if v.Moves != nil {
		// The push must move the branch; that its move is exactly the
		// chain of the merges it carries is checked once every commit is
		// verified (Justified).
		if got, ok := v.Moves[ref]; !ok || got.New.IsZero() {
			return fmt.Errorf("the merge moves %s from %s to %s, but the push does not move %s with it", strings.TrimPrefix(ref, "refs/heads/"), short(old.String()), short(new.String()), strings.TrimPrefix(ref, "refs/heads/"))
		}
	}
	v.justified = append(v.justified, u)
	return nil
}
