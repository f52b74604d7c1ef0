package ops

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// SyncReport is what sync did.
type SyncReport struct {
	Remote   string   `json:"remote"`
	Action   string   `json:"action"`
	State    string   `json:"state,omitempty"`
	Replayed []string `json:"replayed,omitempty"`
	Refused  []string `json:"refused,omitempty"`
	Backup   string   `json:"backup,omitempty"`
	// RemoteSet says this sync set liza.remote to Remote (SetRemote).
	RemoteSet bool `json:"remote_set,omitempty"`
}

// Sync reconciles refs/liza/state with remote's (empty: liza.remote).
// What the remote has is verified first (see Verifier), so that a hostile
// push to a remote that runs no guard stops this clone instead of being
// obeyed. Behind: fast-forward. Ahead (operations made offline on an
// unchanged remote): push them as they are when they are recent, else apply
// them again at today's time. Diverged: the local operations are applied
// again, one by one, on top of the remote's state, from the kind and input
// each commit recorded; those that no longer apply are refused and listed
// in the report, which Sync then returns with an error. Nothing published
// is ever rewritten: the old local tip stays under refs/liza/offline/.
// When the remote's state went backwards past operations this clone had
// published (an administrator's rewind), Sync stops and says so rather
// than push them again; FollowRewind then makes this clone follow.
func (s *Service) Sync(ctx context.Context, remote string) (*SyncReport, error) {
	return s.SyncWith(ctx, remote, SyncOptions{})
}

// ProbeStore tells, by a write, whether the board's remote stores what it
// is sent (cas.Store.ProbeStore); nil in local mode.
func (s *Service) ProbeStore(ctx context.Context) error { return s.Store.ProbeStore(ctx) }

// FollowRewind is Sync for a clone whose remote was rewound: this clone's
// state becomes the remote's (the old one is kept under
// refs/liza/offline/), and only the operations it had not published yet
// are applied again on top.
func (s *Service) FollowRewind(ctx context.Context, remote string) (*SyncReport, error) {
	return s.SyncWith(ctx, remote, SyncOptions{FollowRewind: true})
}

// SyncOptions change what sync does.
type SyncOptions struct {
	// DiscardLocal takes the remote's board when the local one has no
	// history in common with it (one of them was made by a second git liza
	// init): the local one is set aside under refs/liza/offline/, never
	// deleted.
	DiscardLocal bool
	// FollowRewind follows a remote whose state was rewound (see
	// FollowRewind).
	FollowRewind bool
	// SetRemote, in a repository with no liza.remote, sets it to the
	// remote once the sync is done: the clone that joined a board works
	// on it from then on, rather than on a copy that stays here unsaid.
	SetRemote bool
}

// SyncWith is Sync with options. A sync that loses a race on the remote
// (another clone, or the push of a sync killed a moment ago that git
// finishes on its own) fetches and tries again, a few times.
func (s *Service) SyncWith(ctx context.Context, remote string, o SyncOptions) (*SyncReport, error) {
	for try := 1; ; try++ {
		// Each try's view of the board reads the tip that try fetched.
		rep, err := s.syncOnce(cas.WithViews(ctx), remote, o)
		if try == 5 || Class(err) != contracts.CodeContention || ctx.Err() != nil {
			if err == nil && o.SetRemote && s.Store.Remote == "" {
				if _, cerr := s.Repo.Git(ctx, "config", "liza.remote", rep.Remote); cerr != nil {
					return rep, cerr
				}
				rep.RemoteSet = true
			}
			return rep, err
		}
		time.Sleep(time.Duration(try*50+rand.IntN(100)) * time.Millisecond)
	}
}

// SyncRemote is the remote git liza sync uses when it is given none:
// liza.remote, else the repository's only remote. With several and no
// liza.remote it names them and asks for one; with none, it says how to
// add one.
func (s *Service) SyncRemote(ctx context.Context) (string, error) {
	if s.Store.Remote != "" {
		return s.Store.Remote, nil
	}
	remotes := s.Repo.Remotes(ctx)
	switch len(remotes) {
	case 0:
		return "", contracts.Invalidf("no remote to sync with: add one (git remote add NAME URL), then git liza sync NAME")
	case 1:
		return remotes[0], nil
	}
	slices.Sort(remotes)
	return "", contracts.Invalidf("several remotes (%s): name the one whose blackboard to join: git liza sync REMOTE", strings.Join(remotes, ", "))
}

func (s *Service) syncOnce(ctx context.Context, remote string, o SyncOptions) (*SyncReport, error) {
	follow := o.FollowRewind
	if remote == "" {
		remote = s.Store.Remote
	}
	if remote == "" {
		return nil, contracts.Invalidf("no remote: name one, or set git config liza.remote")
	}
	if err := s.Repo.CheckRemote(remote); err != nil {
		return nil, err
	}
	if err := s.EnsureRefspec(ctx, remote); err != nil {
		return nil, err
	}
	s.progress("fetching the blackboard from %s", remote)
	theirs, _, err := s.Store.FetchState(ctx, remote)
	if err != nil {
		return nil, err
	}
	ours, _, err := s.Repo.ReadRef(refstore.StateRef)
	if err != nil {
		return nil, err
	}
	if !theirs.IsZero() && !s.Store.KnownGood(theirs) {
		if err := s.verifyTip(ctx, theirs); err != nil {
			return nil, err
		}
	}
	rep := &SyncReport{Remote: remote}
	if pending, ok, err := s.Repo.ReadRef(replayRef(remote)); err != nil {
		return nil, err
	} else if ok {
		// A sync killed while it applied the local operations again.
		s.progress("resuming the replay on %s that a killed sync left", remote)
		rep.Action = "resumed the replay"
		at, err := s.resumeWhere(ctx, remote, theirs, ours)
		if err != nil {
			return nil, err
		}
		if err := at.resumeReplay(ctx, remote, theirs, pending, rep); err != nil {
			return nil, err
		}
		more, err := s.syncOnce(ctx, remote, o)
		if more == nil {
			return nil, err
		}
		if more.Action != "up to date" {
			rep.Action += "; " + more.Action
		}
		rep.Replayed = append(rep.Replayed, more.Replayed...)
		rep.Refused = append(rep.Refused, more.Refused...)
		rep.Backup, rep.State = cmp.Or(more.Backup, rep.Backup), more.State
		if len(rep.Refused) > 0 {
			return rep, contracts.Invalidf("%d operation(s) no longer apply on %s's state (see above)", len(rep.Refused), remote)
		}
		return rep, nil
	}
	rewound, err := s.rewoundPast(ctx, remote, theirs, ours)
	if err != nil {
		return nil, err
	}
	switch {
	case rewound != nil && follow:
		rep.Action = "followed the rewind"
		err = s.replay(ctx, remote, theirs, ours, *rewound, rep)
		if err == nil {
			err = s.Repo.UpdateRefs(ctx, "liza: followed the rewind of "+remote, refstore.RefUpdate{Name: cas.RewoundRef(remote), Old: *rewound})
		}
	case rewound != nil:
		n := s.publishedSince(ctx, theirs, ours, *rewound)
		verb := "are"
		if n == 1 {
			verb = "is"
		}
		return nil, contracts.Invalidf("the blackboard on %s went back from %s to %s (an administrator rewound it): %s this clone had published %s not pushed again; to follow the remote, run git liza sync --follow-rewind (operations not yet published are applied again on top)",
			remote, short(rewound.String()), short(theirs.String()), contracts.Plural(n, "operation"), verb)
	case follow:
		return nil, contracts.Invalidf("the blackboard on %s was not rewound: run git liza sync", remote)
	case theirs.IsZero() && ours.IsZero():
		return nil, contracts.Invalidf("neither here nor on %s is there a blackboard: run git liza init GOAL", remote)
	case theirs == ours:
		rep.Action = "up to date"
	case ours.IsZero():
		rep.Action = "fetched"
		s.progress("taking %s's blackboard", remote)
		err = s.Repo.UpdateRefs(ctx, "liza: sync from "+remote, refstore.RefUpdate{Name: refstore.StateRef, New: theirs})
	case theirs.IsZero():
		rep.Action = "published"
		s.progress("publishing the blackboard to %s", remote)
		err = s.publishState(ctx, remote, theirs, ours)
	default:
		var related bool
		if related, err = s.related(ctx, ours, theirs); err != nil {
			return nil, err
		}
		if !related {
			if !o.DiscardLocal {
				return nil, contracts.Invalidf("the blackboard here and %s's have no history in common (one was made by a second git liza init): to set this one aside and take %s's, run `git liza sync --discard-local %s`", remote, remote, remote)
			}
			rep.Action = "discarded the local blackboard"
			rep.Backup = "refs/liza/offline/" + short(ours.String())
			s.progress("setting the local blackboard aside as %s and taking %s's", rep.Backup, remote)
			err = s.Repo.UpdateRefs(ctx, "liza: sync --discard-local with "+remote,
				refstore.RefUpdate{Name: rep.Backup, New: ours},
				refstore.RefUpdate{Name: refstore.StateRef, Old: ours, New: theirs})
			break
		}
		behind, err1 := s.Repo.IsAncestor(ctx, ours.String(), theirs.String())
		ahead, err2 := s.Repo.IsAncestor(ctx, theirs.String(), ours.String())
		switch {
		case err1 != nil || err2 != nil:
			err = cmp.Or(err1, err2)
		case behind:
			rep.Action = "fast-forwarded"
			err = s.Repo.UpdateRefs(ctx, "liza: sync from "+remote, refstore.RefUpdate{Name: refstore.StateRef, Old: ours, New: theirs})
		case ahead && s.recent(theirs, ours):
			rep.Action = "published"
			s.progress("publishing the operations made here to %s", remote)
			err = s.publishState(ctx, remote, theirs, ours)
		default:
			rep.Action = "replayed"
			s.progress("applying the operations made here again on %s's blackboard", remote)
			err = s.replay(ctx, remote, theirs, ours, refstore.Hash{}, rep)
		}
	}
	if err == nil && rep.Action == "replayed" && s.remote() != remote {
		// Outside remote mode (a copy kept here, or a sync of another
		// remote) the operations were applied again here only: publish
		// them, as a sync of operations made on an unchanged remote does.
		err = s.publishReplayed(ctx, remote, theirs)
	}
	if err != nil {
		return nil, err
	}
	if err := s.syncIntegration(ctx, remote); err != nil {
		return nil, err
	}
	now, _, err := s.Repo.ReadRef(refstore.StateRef)
	if err != nil {
		return nil, err
	}
	rep.State = now.String()
	if len(rep.Refused) > 0 {
		return rep, contracts.Invalidf("%d operation(s) no longer apply on %s's state (see above)", len(rep.Refused), remote)
	}
	return rep, nil
}

// publishReplayed pushes what a replay wrote here on top of theirs.
func (s *Service) publishReplayed(ctx context.Context, remote string, theirs refstore.Hash) error {
	now, _, err := s.Repo.ReadRef(refstore.StateRef)
	if err != nil || now == theirs {
		return err
	}
	return s.publishState(ctx, remote, theirs, now)
}

// rewoundPast returns the remote's tip before a rewind when the remote's
// state went back past operations that ours holds and that the remote had
// (see cas.Store.FetchState), or nil.
func (s *Service) rewoundPast(ctx context.Context, remote string, theirs, ours refstore.Hash) (*refstore.Hash, error) {
	was, ok, err := s.Repo.ReadRef(cas.RewoundRef(remote))
	if err != nil || !ok {
		return nil, err
	}
	if ours.IsZero() || s.publishedSince(ctx, theirs, ours, was) == 0 {
		// Nothing here goes past the rewind: forget it, so that the next
		// one is noticed.
		return nil, s.Repo.UpdateRefs(ctx, "liza: "+remote+" rewind has nothing here", refstore.RefUpdate{Name: cas.RewoundRef(remote), Old: was})
	}
	return &was, nil
}

// publishedSince counts the commits of ours after theirs that the remote
// once had (ancestors of was, its tip before the rewind).
func (s *Service) publishedSince(ctx context.Context, theirs, ours, was refstore.Hash) int {
	n := 0
	for id := ours; !id.IsZero() && id != theirs; {
		if ok, err := s.Repo.IsAncestor(ctx, id.String(), was.String()); err == nil && ok {
			n++
		}
		c, err := s.Repo.ReadCommit(id)
		if err != nil || len(c.Parents) == 0 {
			break
		}
		id = c.Parents[0]
	}
	return n
}

// recent reports whether every commit of ours after theirs was made within
// MaxClockSkew of now, under the rule set of now: a guarded remote refuses
// older ones, and commits an older git-liza made here before an upgrade
// (its offline work), which sync applies again at today's time, under
// today's rules, instead of pushing them as they are.
func (s *Service) recent(theirs, ours refstore.Hash) bool {
	now := s.Now()
	for id := ours; !id.IsZero() && id != theirs; {
		c, err := s.Repo.ReadCommit(id)
		if err != nil {
			return false
		}
		if d := now.Sub(c.Author.When); d > MaxClockSkew || d < -MaxClockSkew {
			return false
		}
		if rulesOf(c.Message) != contracts.Rules {
			return false
		}
		if len(c.Parents) == 0 {
			break
		}
		id = c.Parents[0]
	}
	return true
}

// related reports whether two state commits share history.
func (s *Service) related(ctx context.Context, a, b refstore.Hash) (bool, error) {
	_, err := s.Repo.Git(ctx, "merge-base", a.String(), b.String())
	var ge *refstore.GitError
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return false, nil
	}
	return err == nil, err
}

// publishState pushes local state commits that sit on top of the remote's,
// after the task branches of the submits among them (a reviewer elsewhere
// fetches the commit under review from there, and a clone that verifies
// the submit checks it).
func (s *Service) publishState(ctx context.Context, remote string, theirs, ours refstore.Hash) error {
	if err := s.publishSubmitted(ctx, remote, theirs, ours); err != nil {
		return err
	}
	if err := s.Repo.PushWaiting(ctx, remote, refstore.RefUpdate{Name: refstore.StateRef, Old: theirs, New: ours}); err != nil {
		var locked *refstore.LockError
		if errors.As(err, &locked) {
			return contracts.Errorf(contracts.CodeContention, "publishing to %s: %v", remote, locked)
		}
		if errors.Is(err, refstore.ErrStale) {
			return contracts.Errorf(contracts.CodeContention, "%s moved while publishing; run git liza sync again", remote)
		}
		return err
	}
	tracking := refstore.TrackingRef(remote, refstore.StateRef)
	was, _, err := s.Repo.ReadRef(tracking)
	if err != nil {
		return err
	}
	return s.Repo.UpdateRefs(ctx, "liza: sync with "+remote, refstore.RefUpdate{Name: tracking, Old: was, New: ours})
}

// syncIntegration makes sure the integration branch exists on both sides:
// a fresh clone gets it, a blackboard made before the remote publishes it.
// Neither side is taken or followed unless it is where the board records
// it (the remote's) or behind that (this repository's): a hookless
// remote's branch may hold code nobody reviewed.
func (s *Service) syncIntegration(ctx context.Context, remote string) error {
	var branch string
	var want refstore.Hash
	var known bool
	if err := s.view(ctx, func(tx *cas.Tx) error {
		m, err := tx.Meta()
		if err != nil {
			return err
		}
		branch = "refs/heads/" + m.Config.IntegrationBranch
		want, known, err = s.expectedTip(tx)
		return err
	}); err != nil {
		return err
	}
	got, err := s.Repo.Fetch(ctx, remote, branch)
	if err != nil {
		return err
	}
	theirs, hasRemote := got[branch]
	if known {
		if err := s.checkIntegration(ctx, remote, branch, want, theirs); err != nil {
			return err
		}
	}
	local, hasLocal, err := s.Repo.ReadRef(branch)
	if err != nil {
		return err
	}
	switch {
	case hasRemote && !hasLocal:
		return s.Repo.UpdateRefs(ctx, "liza: integration branch from "+remote, refstore.RefUpdate{Name: branch, New: theirs})
	case hasLocal && !hasRemote:
		return s.Repo.Push(ctx, remote, refstore.RefUpdate{Name: branch, New: local})
	case hasLocal && local != theirs:
		// Follow the remote's merges when this branch is only behind and
		// no checkout has it (moving a checked-out branch would strand
		// its index and files).
		if behind, err := s.Repo.IsAncestor(ctx, local.String(), theirs.String()); err != nil || !behind {
			return err
		}
		if s.integrationNotCheckedOut(ctx, branch) != nil {
			return nil
		}
		return s.Repo.UpdateRefs(ctx, "liza: integration branch from "+remote, refstore.RefUpdate{Name: branch, Old: local, New: theirs})
	}
	return nil
}

// EnsureRefspec makes a plain `git fetch REMOTE` bring the blackboard too,
// into refs/liza/remotes/REMOTE/state.
func (s *Service) EnsureRefspec(ctx context.Context, remote string) error {
	spec := "+" + refstore.StateRef + ":" + refstore.TrackingRef(remote, refstore.StateRef)
	out, _ := s.Repo.Git(ctx, "config", "--get-all", "remote."+remote+".fetch")
	for _, line := range strings.Split(string(out), "\n") {
		if strings.TrimSpace(line) == spec {
			return nil
		}
	}
	_, err := s.Repo.Git(ctx, "config", "--add", "remote."+remote+".fetch", spec)
	return err
}
