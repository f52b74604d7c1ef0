package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

func (e *Env) syncCmd() *cli.Command {
	return &cli.Command{
		Name:      "sync",
		Usage:     "bring the blackboard up to date with REMOTE (default: liza.remote) and publish what is only here",
		ArgsUsage: "[REMOTE]",
		Action: e.action(0, 1, "sync [REMOTE]", func(ctx context.Context, s *session, a []string) error {
			remote := s.store.Remote
			if len(a) == 1 {
				remote = a[0]
			}
			if remote == "" {
				return contracts.Invalidf("no remote: name one, or set git config liza.remote")
			}
			if err := s.repo.CheckRemote(remote); err != nil {
				return err
			}
			return s.sync(ctx, remote)
		}),
	}
}

// syncReport is what sync did.
type syncReport struct {
	Remote   string   `json:"remote"`
	Action   string   `json:"action"`
	State    string   `json:"state,omitempty"`
	Replayed []string `json:"replayed,omitempty"`
	Refused  []string `json:"refused,omitempty"`
	Backup   string   `json:"backup,omitempty"`
}

// sync reconciles refs/liza/state with the remote's. Behind: fast-forward.
// Ahead (operations made with --offline on an unchanged remote): push them
// as they are. Diverged: the local operations are applied again, one by
// one, on top of the remote's state, from the command line each commit
// recorded; those that no longer apply are refused and reported. Nothing
// published is ever rewritten: the old local tip stays under
// refs/liza/offline/.
func (s *session) sync(ctx context.Context, remote string) error {
	if err := s.ensureRefspec(ctx, remote); err != nil {
		return err
	}
	got, err := s.repo.Fetch(ctx, remote, refstore.StateRef)
	if err != nil {
		return err
	}
	theirs := got[refstore.StateRef]
	ours, _, err := s.repo.ReadRef(refstore.StateRef)
	if err != nil {
		return err
	}
	rep := &syncReport{Remote: remote}
	switch {
	case theirs.IsZero() && ours.IsZero():
		return contracts.Invalidf("neither here nor on %s is there a blackboard: run git liza init GOAL", remote)
	case theirs == ours:
		rep.Action = "up to date"
	case ours.IsZero():
		rep.Action = "fetched"
		err = s.repo.UpdateRefs(ctx, "liza: sync from "+remote, refstore.RefUpdate{Name: refstore.StateRef, New: theirs})
	case theirs.IsZero():
		rep.Action = "published"
		err = s.publishState(ctx, remote, theirs, ours)
	default:
		behind, err1 := s.repo.IsAncestor(ctx, ours.String(), theirs.String())
		ahead, err2 := s.repo.IsAncestor(ctx, theirs.String(), ours.String())
		switch {
		case err1 != nil || err2 != nil:
			err = firstErr(err1, err2)
		case behind:
			rep.Action = "fast-forwarded"
			err = s.repo.UpdateRefs(ctx, "liza: sync from "+remote, refstore.RefUpdate{Name: refstore.StateRef, Old: ours, New: theirs})
		case ahead:
			rep.Action = "published"
			err = s.publishState(ctx, remote, theirs, ours)
		default:
			rep.Action = "replayed"
			err = s.replay(ctx, remote, theirs, ours, rep)
		}
	}
	if err != nil {
		return err
	}
	if err := s.syncIntegration(ctx, remote); err != nil {
		return err
	}
	now, _, err := s.repo.ReadRef(refstore.StateRef)
	if err != nil {
		return err
	}
	rep.State = now.String()
	if s.json {
		return s.printJSON(rep)
	}
	fmt.Fprintf(s.Stdout, "%s: %s (%s)\n", remote, rep.Action, short(rep.State))
	for _, r := range rep.Replayed {
		fmt.Fprintf(s.Stdout, "  replayed: %s\n", r)
	}
	for _, r := range rep.Refused {
		fmt.Fprintf(s.Stdout, "  refused:  %s\n", r)
	}
	if rep.Backup != "" {
		fmt.Fprintf(s.Stdout, "  the local operations as they were: %s\n", rep.Backup)
	}
	if len(rep.Refused) > 0 {
		return contracts.Invalidf("%d operation(s) no longer apply on %s's state (see above)", len(rep.Refused), remote)
	}
	return nil
}

// publishState pushes local state commits that sit on top of the remote's.
func (s *session) publishState(ctx context.Context, remote string, theirs, ours refstore.Hash) error {
	if err := s.repo.Push(ctx, remote, refstore.RefUpdate{Name: refstore.StateRef, Old: theirs, New: ours}); err != nil {
		if err == refstore.ErrStale {
			return contracts.Errorf(contracts.CodeContention, "%s moved while publishing; run git liza sync again", remote)
		}
		return err
	}
	tracking := refstore.TrackingRef(remote, refstore.StateRef)
	was, _, err := s.repo.ReadRef(tracking)
	if err != nil {
		return err
	}
	return s.repo.UpdateRefs(ctx, "liza: sync with "+remote, refstore.RefUpdate{Name: tracking, Old: was, New: ours})
}

// replay applies the local operations again on the remote's state.
func (s *session) replay(ctx context.Context, remote string, theirs, ours refstore.Hash, rep *syncReport) error {
	out, err := s.repo.Git(ctx, "merge-base", theirs.String(), ours.String())
	if err != nil {
		return err
	}
	base, _ := refstore.ParseHash(strings.TrimSpace(string(out)))
	var todo []*refstore.Commit
	for id := ours; id != base && !id.IsZero(); {
		c, err := s.repo.ReadCommit(id)
		if err != nil {
			return err
		}
		todo = append(todo, c)
		if len(c.Parents) == 0 {
			break
		}
		id = c.Parents[0]
	}
	rep.Backup = "refs/liza/offline/" + short(ours.String())
	if err := s.repo.UpdateRefs(ctx, "liza: sync with "+remote+": set aside local operations",
		refstore.RefUpdate{Name: rep.Backup, New: ours},
		refstore.RefUpdate{Name: refstore.StateRef, Old: ours, New: theirs}); err != nil {
		return err
	}
	for i := len(todo) - 1; i >= 0; i-- {
		c := todo[i]
		subject, _, _ := strings.Cut(c.Message, "\n")
		tr := cas.Trailers(c.Message)
		var argv []string
		if err := json.Unmarshal([]byte(tr["Liza-Command"]), &argv); err != nil || len(argv) == 0 {
			rep.Refused = append(rep.Refused, subject+": it recorded no command to replay")
			continue
		}
		if tr["Liza-Op"] == string(contracts.OpImport) || tr["Liza-Op"] == string(contracts.OpMerge) {
			rep.Refused = append(rep.Refused, subject+": "+tr["Liza-Op"]+" is not replayed; run it again by hand")
			continue
		}
		full := []string{"git-liza"}
		if agent := tr["Liza-Agent"]; agent != "" && agent != "human" {
			full = append(full, "--agent", agent)
		}
		full = append(full, argv...)
		var stderr strings.Builder
		child := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Dir: s.Dir, Getenv: s.Getenv}
		if code := child.Run(ctx, full); code != 0 {
			rep.Refused = append(rep.Refused, subject+": "+strings.TrimPrefix(firstLine(stderr.String()), "git-liza: "))
			continue
		}
		rep.Replayed = append(rep.Replayed, subject)
	}
	return nil
}

// syncIntegration makes sure the integration branch exists on both sides:
// a fresh clone gets it, a blackboard made before the remote publishes it.
func (s *session) syncIntegration(ctx context.Context, remote string) error {
	var branch string
	if err := s.store.View(s.agent, func(tx *cas.Tx) error {
		m, err := tx.Meta()
		if err == nil {
			branch = "refs/heads/" + m.Config.IntegrationBranch
		}
		return err
	}); err != nil {
		return err
	}
	got, err := s.repo.Fetch(ctx, remote, branch)
	if err != nil {
		return err
	}
	local, hasLocal, err := s.repo.ReadRef(branch)
	if err != nil {
		return err
	}
	theirs, hasRemote := got[branch]
	switch {
	case hasRemote && !hasLocal:
		return s.repo.UpdateRefs(ctx, "liza: integration branch from "+remote, refstore.RefUpdate{Name: branch, New: theirs})
	case hasLocal && !hasRemote:
		return s.repo.Push(ctx, remote, refstore.RefUpdate{Name: branch, New: local})
	case hasLocal && local != theirs:
		// Follow the remote's merges when this branch is only behind and
		// no checkout has it (moving a checked-out branch would strand
		// its index and files).
		if behind, err := s.repo.IsAncestor(ctx, local.String(), theirs.String()); err != nil || !behind {
			return err
		}
		if s.integrationNotCheckedOut(ctx, branch) != nil {
			return nil
		}
		return s.repo.UpdateRefs(ctx, "liza: integration branch from "+remote, refstore.RefUpdate{Name: branch, Old: local, New: theirs})
	}
	return nil
}

// ensureRefspec makes a plain `git fetch REMOTE` bring the blackboard too,
// into refs/liza/remotes/REMOTE/state.
func (s *session) ensureRefspec(ctx context.Context, remote string) error {
	spec := "+" + refstore.StateRef + ":" + refstore.TrackingRef(remote, refstore.StateRef)
	out, _ := s.repo.Git(ctx, "config", "--get-all", "remote."+remote+".fetch")
	for _, line := range strings.Split(string(out), "\n") {
		if strings.TrimSpace(line) == spec {
			return nil
		}
	}
	_, err := s.repo.Git(ctx, "config", "--add", "remote."+remote+".fetch", spec)
	return err
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
