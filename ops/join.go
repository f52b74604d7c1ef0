package ops

import (
	"context"
	"errors"
	"fmt"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// A clone of a repository whose remote has a blackboard has none of its
// own: git clone fetches branches, not refs/liza/state. The first command
// run there must not send its user to git liza init, which would make a
// second, unrelated board.

// join is what a read does in a repository with no blackboard. In remote
// mode (liza.remote) it joins the remote's board, as git liza sync does;
// else it fails, naming the remote that has a board and the command that
// joins it, when one does.
func (s *Service) join(ctx context.Context) (refstore.Hash, error) {
	remote := s.remote()
	if remote == "" {
		return refstore.Hash{}, s.noBoard(ctx)
	}
	s.progress("joining %s's blackboard", remote)
	if _, err := s.Sync(ctx, remote); err != nil {
		var ce *contracts.Error
		if errors.As(err, &ce) && ce.Code == contracts.CodeInvalid {
			return refstore.Hash{}, cas.ErrNoBoard
		}
		return refstore.Hash{}, err
	}
	tip, ok, err := s.Repo.ReadRef(refstore.StateRef)
	if err == nil && !ok {
		err = cas.ErrNoBoard
	}
	return tip, err
}

// noBoard is the error for a repository with no blackboard in local mode:
// it names a remote that has one, when one does.
func (s *Service) noBoard(ctx context.Context) error {
	if r := s.remoteWithBoard(ctx); r != "" {
		return contracts.Invalidf("no blackboard here, but %s has one: run `git liza sync %s` to join it (and `git config liza.remote %s` to work on it there)", r, r, r)
	}
	return cas.ErrNoBoard
}

// remoteWithBoard is the first remote that has a blackboard (liza.remote
// first), or "".
func (s *Service) remoteWithBoard(ctx context.Context) string {
	remotes := s.Repo.Remotes(ctx)
	if r := s.Store.Remote; r != "" {
		remotes = append([]string{r}, remotes...)
	}
	for _, r := range remotes {
		if s.Repo.RemoteHas(ctx, r, refstore.StateRef) {
			return r
		}
	}
	return ""
}

// checkNoRemoteBoard refuses to make a blackboard when a remote has one.
func (s *Service) checkNoRemoteBoard(ctx context.Context) error {
	if r := s.remoteWithBoard(ctx); r != "" {
		return contracts.Invalidf("%s already has a blackboard: join it with `git liza sync %s` (and `git config liza.remote %s`) rather than making a second one", r, r, r)
	}
	return nil
}

// progress tells the person waiting what a long step is doing, when the
// front end listens (Service.Progress).
func (s *Service) progress(format string, args ...any) {
	if s.Progress != nil {
		s.Progress(fmt.Sprintf(format, args...))
	}
}

// noBoardErr turns an operation's "no blackboard here" into the error
// that names a remote's board, when there is one.
func (s *Service) noBoardErr(ctx context.Context, err error) error {
	if errors.Is(err, cas.ErrNoBoard) && s.remote() == "" {
		return s.noBoard(ctx)
	}
	return err
}

// JoinHint is what a front end makes of any error before showing it: a
// "no blackboard here" becomes the command that joins a remote's board
// when a remote has one (in remote mode, git liza sync joins liza.remote's),
// whichever path found it (a claim's pick, a submit's check, a worktree
// listing read the state without a write); other errors are unchanged.
func (s *Service) JoinHint(ctx context.Context, err error) error {
	if !errors.Is(err, cas.ErrNoBoard) {
		return err
	}
	if r := s.remote(); r != "" {
		if s.Repo.RemoteHas(ctx, r, refstore.StateRef) {
			return contracts.Invalidf("no blackboard here yet, but %s has one: run `git liza sync` to join it", r)
		}
		return err
	}
	return s.noBoard(ctx)
}
