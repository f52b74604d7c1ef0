package hooks

import (
	"context"
	"fmt"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// preReceive guards a shared bare repository: it hands the push's ref
// updates to ops.CheckPush, which verifies every new state commit by doing
// its recorded operation again on its parent, lets the integration branch
// move only with a merge in the same push, and keeps refs/liza/ to the
// state ref. Every problem is printed, one line each; then the push is
// refused.
//
// The pushed objects are not in the repository yet: git keeps them in a
// quarantine directory that it names to its hooks in GIT_OBJECT_DIRECTORY
// and GIT_ALTERNATE_OBJECT_DIRECTORIES, which refstore and the git
// commands it runs both honour.
func (h *Handler) preReceive(ctx context.Context) error {
	lines, err := readUpdates(h.Stdin)
	if err != nil {
		return err
	}
	updates := make([]refstore.RefUpdate, 0, len(lines))
	for _, u := range lines {
		old, ok1 := refstore.ParseHash(u.old)
		new, ok2 := refstore.ParseHash(u.new)
		if !ok1 || !ok2 {
			return contracts.Invalidf("pre-receive: unreadable update %q", u.old+" "+u.new+" "+u.ref)
		}
		updates = append(updates, refstore.RefUpdate{Name: u.ref, Old: old, New: new})
	}
	repo, err := refstore.Open(h.Dir)
	if err != nil {
		return err
	}
	clock, err := h.clock()
	if err != nil {
		return err
	}
	svc, err := ops.New(repo, ops.Options{Clock: clock})
	if err != nil {
		return err
	}
	problems, err := svc.CheckPush(ctx, updates)
	if err != nil {
		return err
	}
	if len(problems) == 0 {
		return nil
	}
	for _, p := range problems {
		fmt.Fprintf(h.Stderr, "git-liza: %s\n", contracts.Printable(p))
	}
	return contracts.Invalidf("refusing the push: %d problem(s)", len(problems))
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
