package ops

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// CheckPush lists what is wrong with a push to a guarded remote, the
// repository s is on (its pre-receive hook gives the push's ref updates):
//
//   - refs/liza/state only moves forward, along single-parent commits each
//     of which is verified (see Verifier): what it changes must be what its
//     recorded operation, by its recorded agent, with its recorded input,
//     makes of its parent at its time, and its time must be within
//     MaxClockSkew of this server's clock;
//   - with git config liza.allowedSigners set (an ssh-keygen allowed
//     signers file), every new state commit must be signed by a key it
//     allows for the commit's Liza-Agent;
//   - the integration branch moves only through merges: a fast-forward to
//     the merge commit of a state commit in the same push that records the
//     merge from the branch's old value; it is never deleted or rewound,
//     and it is created only on a board that has merged nothing yet;
//   - under refs/liza/ only refs/liza/state exists, and the queue's tickets
//     (cas.QueueDir): refs/liza/queue/<16 hex digits>, each a commit with
//     no parent, the empty tree and cas.TicketMessage, which any clone may
//     create, move or delete.
//
// An empty list accepts the push.
func (s *Service) CheckPush(ctx context.Context, updates []refstore.RefUpdate) ([]string, error) {
	// What a push makes the check read is bounded (cas.MaxImport and the
	// other caps), but decoding it leaves garbage several times its size:
	// a soft memory limit has the collector reclaim it rather than let
	// the heap grow to twice what is live. It is restored after.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(pushMemoryLimit))
	// The states the check builds again to compare are held in memory
	// (refstore.Hold), not written one file an object: on a hub whose disk
	// is full a check that wrote declined every push as if it broke a rule,
	// and what it builds is only compared (the push brings what it keeps).
	defer s.Repo.Hold()()
	var problems []string
	say := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	integration, err := s.pushIntegration(updates)
	if err != nil {
		return nil, err
	}
	v := s.Verifier()
	v.Push, v.Strict = true, true
	v.Moves = map[string]refstore.RefUpdate{}
	for _, u := range updates {
		v.Moves[u.Name] = u
	}
	if h, ok, err := s.Repo.ReadRef(integration); err == nil && ok {
		v.Integration = h
	}
	if signers, ok := s.Repo.Config("liza.allowedSigners"); ok && signers != "" {
		if !filepath.IsAbs(signers) {
			signers = filepath.Join(s.Repo.GitDir, signers)
		}
		v.AllowedSigners = signers
		v.SSHProgram, _ = s.Repo.Config("gpg.ssh.program")
	}
	var state *refstore.RefUpdate
	for i, u := range updates {
		switch {
		case u.Name == refstore.StateRef:
			state = &updates[i]
		case cas.ValidTicketRef(u.Name):
			if msg := s.checkTicket(u); msg != "" {
				say("%s: %s", u.Name, msg)
			}
		case strings.HasPrefix(u.Name, "refs/liza/"):
			say("%s: only %s exists under refs/liza/ on a shared remote", u.Name, refstore.StateRef)
		}
	}
	if state != nil {
		problems = append(problems, s.checkStatePush(ctx, v, *state)...)
	}
	board := sync.OnceValues(func() (*cas.Tx, error) { return s.pushedBoard(state) })
	for _, u := range updates {
		if msg, err := s.checkTaskBranch(ctx, board, u); err != nil {
			return nil, err
		} else if msg != "" {
			say("%s: %s", strings.TrimPrefix(u.Name, "refs/heads/"), msg)
		}
	}
	for _, u := range updates {
		if u.Name != integration {
			continue
		}
		name := strings.TrimPrefix(integration, "refs/heads/")
		switch {
		case u.New.IsZero():
			say("%s: the integration branch is never deleted", name)
		case u.Old.IsZero():
			tx, err := board()
			if err != nil {
				return nil, err
			}
			if merged, err := anyMerged(tx); err != nil {
				return nil, err
			} else if merged {
				say("%s: the integration branch is created only before anything is merged", name)
			}
		default:
			if ok, err := s.Repo.IsAncestor(ctx, u.Old.String(), u.New.String()); err != nil {
				return nil, err
			} else if !ok {
				say("%s: %s is not a fast-forward of %s: the integration branch is never rewound", name, short(u.New.String()), short(u.Old.String()))
			} else if !v.Justified(u) {
				say("%s: moves only through git liza merge: a fast-forward to a merge commit that a state commit in the same push records", name)
			}
		}
	}
	return problems, nil
}

// pushMemoryLimit is the soft memory limit CheckPush runs under.
const pushMemoryLimit = 128 << 20

// checkTicket checks a ticket's update: any clone may take its place in
// the queue or leave it, but a ticket holds nothing.
func (s *Service) checkTicket(u refstore.RefUpdate) string {
	if u.New.IsZero() {
		return ""
	}
	rule := "a ticket is a commit with no parent, the empty tree and the message " + strings.TrimSpace(cas.TicketMessage) + " with its Liza-Since trailer"
	// Read within caps: any clone may push a ticket.
	c, err := s.Repo.ReadCommitMax(u.New, cas.MaxCommit)
	if big := new(refstore.TooLargeError); errors.As(err, &big) {
		return fmt.Sprintf("its commit is %d bytes: %s", big.Size, rule)
	}
	if err != nil {
		return "not a commit"
	}
	if tree, err := s.Repo.ReadTreeMax(c.Tree, 0); err != nil || len(tree) > 0 || len(c.Parents) > 0 || !validTicketMessage(c.Message) {
		return rule
	}
	return ""
}

// validTicketMessage: a ticket's message, or the bare subject of the
// tickets that carried no trailer.
func validTicketMessage(m string) bool {
	_, ok := cas.ParseTicket(m)
	return ok || m == cas.TicketMessage
}

// checkStatePush checks one update of refs/liza/state.
func (s *Service) checkStatePush(ctx context.Context, v *Verifier, u refstore.RefUpdate) []string {
	if u.New.IsZero() {
		return []string{fmt.Sprintf("%s may not be deleted", refstore.StateRef)}
	}
	if !u.Old.IsZero() {
		ok, err := s.Repo.IsAncestor(ctx, u.Old.String(), u.New.String())
		if err != nil || !ok {
			return []string{fmt.Sprintf("%s: %s is not a fast-forward of %s (the state's history is never rewritten)", refstore.StateRef, short(u.New.String()), short(u.Old.String()))}
		}
	}
	var problems []string
	known := func(id refstore.Hash) bool { return id == u.Old }
	if _, err := v.Chain(ctx, u.New, known, nil, func(c *refstore.Commit, err error) {
		problems = append(problems, fmt.Sprintf("commit %s: %v", short(c.ID.String()), err))
	}); err != nil {
		problems = append(problems, err.Error())
	}
	return problems
}

// pushIntegration is the integration branch a push is checked against:
// the one the pushed state names, else the one the state here names.
func (s *Service) pushIntegration(updates []refstore.RefUpdate) (string, error) {
	tip, _, err := s.Repo.ReadRef(refstore.StateRef)
	if err != nil {
		return "", err
	}
	for _, u := range updates {
		if u.Name == refstore.StateRef && !u.New.IsZero() {
			tip = u.New
		}
	}
	branch := contracts.DefaultConfig().IntegrationBranch
	if !tip.IsZero() {
		if snap, err := cas.ReadSnapshot(s.Repo, tip); err == nil {
			var m cas.Meta
			if b, ok, err := snap.ReadFile(cas.MetaFile); err == nil && ok && contracts.DecodeYAML(b, &m) == nil && m.Config.IntegrationBranch != "" {
				branch = m.Config.IntegrationBranch
			}
		}
	}
	return "refs/heads/" + branch, nil
}

// pushedBoard reads the board as the push leaves it: the pushed state's,
// else the one here; nil where there is none. It is read once a push
// (sync.OnceValues in CheckPush), whichever checks need it.
func (s *Service) pushedBoard(state *refstore.RefUpdate) (*cas.Tx, error) {
	tip, _, err := s.Repo.ReadRef(refstore.StateRef)
	if err != nil {
		return nil, err
	}
	if state != nil {
		tip = state.New
	}
	if tip.IsZero() {
		return nil, nil
	}
	snap, err := cas.ReadSnapshot(s.Repo, tip)
	if err != nil {
		return nil, err
	}
	return cas.ReadTx(snap, s.Now(), ""), nil
}

// anyMerged reports whether the board (as the push leaves it) has merged
// a task: its integration branch then holds reviewed work and is not made
// anew.
func anyMerged(tx *cas.Tx) (bool, error) {
	if tx == nil {
		return false, nil
	}
	idx, err := tx.Index()
	if err != nil {
		return false, err
	}
	for _, t := range idx {
		if t.Status == contracts.Merged {
			return true, nil
		}
	}
	archived, err := tx.ArchivedIDs()
	return len(archived) > 0, err
}

// checkTaskBranch keeps a live task's submitted commit on its published
// branch (task/ID), which a reviewer elsewhere fetches it from: while the
// board (as the push leaves it) records a commit under review for a task
// that is not finished, its branch is neither deleted nor moved to a
// commit that lacks it.
func (s *Service) checkTaskBranch(ctx context.Context, board func() (*cas.Tx, error), u refstore.RefUpdate) (string, error) {
	id, ok := strings.CutPrefix(u.Name, "refs/heads/task/")
	if !ok || contracts.ValidTaskID(id) != nil {
		return "", nil
	}
	tx, err := board()
	if err != nil || tx == nil {
		return "", err
	}
	t, err := tx.Task(id)
	if err != nil || t == nil || t.Status.Terminal() || t.ReviewCommit == "" {
		return "", nil
	}
	if u.New.IsZero() {
		return fmt.Sprintf("task %s is %s at %s: its branch is not deleted until it is finished", id, t.Status, short(t.ReviewCommit)), nil
	}
	if t.Status == contracts.ReadyForReview || t.Status == contracts.Approved {
		// What is reviewed, and then merged, is that commit: a commit
		// pushed on top would leave the branch off it, and the merge
		// refused ("not at the approved commit").
		if u.New.String() != t.ReviewCommit {
			return fmt.Sprintf("task %s is %s at %s: its branch stays on that commit until it is merged or sent back", id, t.Status, short(t.ReviewCommit)), nil
		}
		return "", nil
	}
	if ok, err := s.Repo.IsAncestor(ctx, t.ReviewCommit, u.New.String()); err != nil || !ok {
		return fmt.Sprintf("task %s is %s at %s: its branch moves only to a commit that holds it", id, t.Status, short(t.ReviewCommit)), nil
	}
	return "", nil
}
