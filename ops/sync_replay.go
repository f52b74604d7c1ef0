package ops

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// publishSubmitted pushes task/ID to remote for every submit among the
// state commits of ours after theirs, as a submit made online does.
func (s *Service) publishSubmitted(ctx context.Context, remote string, theirs, ours refstore.Hash) error {
	todo, err := s.since(theirs, ours)
	if err != nil {
		return err
	}
	done := map[string]bool{}
	for _, c := range todo {
		rec, err := ReadRecorded(c.Message)
		if err != nil || rec.Kind != kindSubmit.name {
			continue
		}
		var in submitInput
		if json.Unmarshal(rec.Input, &in) != nil || in.Task == "" || done[in.Task] {
			continue
		}
		done[in.Task] = true
		if err := s.publishBranchTo(ctx, remote, in.Task); err != nil {
			return err
		}
	}
	return nil
}

// replay applies the local operations again on the remote's state, at
// today's time, from the kind and input each commit recorded. When skip is
// set (following a rewind), the operations the remote once had (ancestors
// of skip) are left out: the remote's administrator took them back.
func (s *Service) replay(ctx context.Context, remote string, theirs, ours, skip refstore.Hash, rep *SyncReport) error {
	base := refstore.Hash{}
	if !theirs.IsZero() {
		out, err := s.Repo.Git(ctx, "merge-base", theirs.String(), ours.String())
		if err == nil {
			base, _ = refstore.ParseHash(strings.TrimSpace(string(out)))
		}
	}
	todo, err := s.since(base, ours)
	if err != nil {
		return err
	}
	// The local operations are set aside, and marked as still to be
	// applied again until the last one is: a sync killed meanwhile leaves
	// the mark, and the next one resumes from it.
	rep.Backup = "refs/liza/offline/" + short(ours.String())
	if err := s.Repo.UpdateRefs(ctx, "liza: sync with "+remote+": set aside local operations",
		refstore.RefUpdate{Name: rep.Backup, New: ours},
		refstore.RefUpdate{Name: replayRef(remote), New: ours},
		refstore.RefUpdate{Name: refstore.StateRef, Old: ours, New: theirs}); err != nil {
		return err
	}
	return s.applyAll(ctx, remote, todo, ours, skip, rep)
}

// replayRef marks a replay in progress on remote: the local operations
// set aside, until each has been applied again on the remote's board.
func replayRef(remote string) string { return "refs/liza/replay/" + remote }

// since lists the state commits from tip back to base, newest first.
func (s *Service) since(base, tip refstore.Hash) ([]*refstore.Commit, error) {
	var todo []*refstore.Commit
	for id := tip; id != base && !id.IsZero(); {
		c, err := s.Repo.ReadCommit(id)
		if err != nil {
			return nil, err
		}
		todo = append(todo, c)
		if len(c.Parents) == 0 {
			break
		}
		id = c.Parents[0]
	}
	return todo, nil
}

// resumeWhere is the service a killed sync's replay resumes with: s,
// unless this clone made operations here since (offline) that the remote
// lacks. Every write on the remote's board would then be refused until
// those are published, so the replay resumes here, on top of them, and
// the sync that follows publishes or applies again all of them.
func (s *Service) resumeWhere(ctx context.Context, remote string, theirs, ours refstore.Hash) (*Service, error) {
	if s.remote() != remote || ours.IsZero() || ours == theirs {
		return s, nil
	}
	if behind, err := s.Repo.IsAncestor(ctx, ours.String(), theirs.String()); err != nil || behind {
		return s, err
	}
	c := *s
	st := *s.Store
	st.Offline = true
	c.Store = &st
	return &c, nil
}

// resumeReplay applies again the operations of a replay a killed sync left
// marked: those it had applied are recognised by their request ids and
// not applied twice.
func (s *Service) resumeReplay(ctx context.Context, remote string, theirs, pending refstore.Hash, rep *SyncReport) error {
	base := refstore.Hash{}
	if !theirs.IsZero() {
		if out, err := s.Repo.Git(ctx, "merge-base", theirs.String(), pending.String()); err == nil {
			base, _ = refstore.ParseHash(strings.TrimSpace(string(out)))
		}
	}
	todo, err := s.since(base, pending)
	if err != nil {
		return err
	}
	// A replay that followed a rewind left out what the remote had once
	// had; until it is done, the rewind's mark says what that was.
	skip, _, err := s.Repo.ReadRef(cas.RewoundRef(remote))
	if err != nil {
		return err
	}
	rep.Backup = "refs/liza/offline/" + short(pending.String())
	return s.applyAll(ctx, remote, todo, pending, skip, rep)
}

// applyAll applies todo (newest first) again, oldest first, then removes
// the replay's mark.
func (s *Service) applyAll(ctx context.Context, remote string, todo []*refstore.Commit, marked, skip refstore.Hash, rep *SyncReport) error {
	nums := &renumbered{disc: map[int]int{}, notes: map[int]int{}, lost: map[string]bool{}}
	for i := len(todo) - 1; i >= 0; i-- {
		c := todo[i]
		if !skip.IsZero() {
			if ok, err := s.Repo.IsAncestor(ctx, c.ID.String(), skip.String()); err != nil {
				return err
			} else if ok {
				continue
			}
		}
		subject, _, _ := strings.Cut(c.Message, "\n")
		now, err := s.applyAgain(ctx, c, nums)
		if err != nil {
			rep.Refused = append(rep.Refused, subject+": "+contracts.FirstLine(err.Error()))
			continue
		}
		// Named as it is on the remote's board (a discovery may have
		// another number there).
		rep.Replayed = append(rep.Replayed, cmp.Or(now, subject))
	}
	return s.Repo.UpdateRefs(ctx, "liza: sync with "+remote+": replay done", refstore.RefUpdate{Name: replayRef(remote), Old: marked})
}

// applyAgain writes the operation a commit recorded again, as its agent, on
// the current tip at today's time. It returns the subject of the commit it
// made, if it made one.
func (s *Service) applyAgain(ctx context.Context, c *refstore.Commit, nums *renumbered) (subject string, err error) {
	rec, err := ReadRecorded(c.Message)
	if err != nil {
		return "", err
	}
	// A task added here that was not applied again (another clone took
	// its id) is not the task of that id on the remote's board: the
	// operations after it that name it are refused, not applied to the
	// other one.
	if rec.Kind == kindAdd.name {
		if in, derr := decodeInput[addInput](rec.Kind, rec.Input); derr == nil && in.ID != "" {
			defer func() {
				if err != nil {
					nums.lost[in.ID] = true
				}
			}()
		}
	}
	if id := nums.lostTask(c.Message, rec.Input); id != "" {
		return "", contracts.Invalidf("task %s was added here and was not applied again", id)
	}
	// An entry a local operation appended (a discovery, a note) may get
	// another number on the remote's board; a later local operation that
	// names it by number must name it there by its new one.
	list := map[string]string{kindDiscover.name: cas.ListDiscovered, kindNote.name: cas.ListHumanNotes}[rec.Kind]
	was := 0
	if list != "" {
		snap, err := cas.ReadSnapshot(s.Repo, c.ID)
		if err != nil {
			return "", err
		}
		if was, err = cas.ReadTx(snap, c.Author.When, "").ListLen(list); err != nil {
			return "", err
		}
		nums.of(list)[was] = 0 // not on the remote's board unless it lands
	}
	if rec.Input, err = nums.input(rec.Kind, rec.Input); err != nil {
		return "", err
	}
	switch rec.Kind {
	case "":
		return "", fmt.Errorf("it recorded no operation to apply again")
	case kindImport, kindMerge.name, kindMergeBatch.name, kindAdopt.name:
		return "", fmt.Errorf("%s is not replayed; run it again by hand", rec.Op)
	}
	k, ok := kinds[rec.Kind]
	if !ok {
		return "", fmt.Errorf("unknown operation %q", rec.Kind)
	}
	as := s.As(rec.Agent, rec.Generation)
	// Applied again under the request id it had, or one made of the
	// commit's: a replay resumed after a kill does not apply it twice.
	req := rec.Request
	if req == "" {
		req = "sync:" + c.ID.String()
	}
	if k.prepare != nil {
		// What the operation does outside the state (a submit publishes
		// its branch) is done only for an operation that applies on the
		// board as it is now: a refused one leaves the remote as it was.
		done := false
		if err := as.view(ctx, func(tx *cas.Tx) error {
			var err error
			if _, done, err = tx.Requested(cas.Op{Name: k.op, Agent: as.Agent, Request: req, Kind: k.name, Input: rec.Input}); err != nil || done {
				return err
			}
			_, err = k.apply(tx, rec.Input)
			return err
		}); err != nil {
			return "", err
		}
		if !done {
			if err := k.prepare(ctx, as, rec.Input); err != nil {
				return "", err
			}
		}
	}
	res, err := as.update(ctx, Call{RequestID: req}, as.recorded(k, rec.Input, nil))
	if err != nil {
		return "", err
	}
	if list != "" {
		var got EntryResult
		if err := json.Unmarshal(res.Value, &got); err != nil {
			return "", err
		}
		nums.of(list)[was] = got.N
	}
	// The commit made: the tip, when it carries this request.
	if made, err := s.Repo.ReadCommit(res.Commit); err == nil && !res.Replayed && cas.Trailers(made.Message)["Liza-Request"] == req {
		subject, _, _ = strings.Cut(made.Message, "\n")
	}
	return subject, nil
}
