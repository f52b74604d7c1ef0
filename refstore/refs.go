package refstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// StateRef is where the blackboard lives.
const StateRef = "refs/liza/state"

// RefUpdate moves Name from Old to New. A zero Old means the ref must not
// exist yet; a zero New deletes it.
type RefUpdate struct {
	Name string
	Old  Hash
	New  Hash
}

// ErrStale means a compare-and-swap lost: some ref was not at the expected
// old value (or its lock was held by a concurrent update). Nothing moved.
var ErrStale = errors.New("ref moved concurrently")

// UpdateRefs moves every ref in one transaction with git update-ref --stdin,
// each from its expected old value: all move or none does. A lost race comes
// back as ErrStale; any other failure as *GitError.
//
// core.warnAmbiguousRefs is off because git 2.39's update-ref was seen to
// lose updates under concurrent pack-refs when it resolves ambiguous names.
func (r *Repo) UpdateRefs(ctx context.Context, reason string, updates ...RefUpdate) error {
	var in strings.Builder
	in.WriteString("start\n")
	for _, u := range updates {
		if u.New.IsZero() {
			fmt.Fprintf(&in, "delete %s %s\n", u.Name, u.Old)
		} else {
			fmt.Fprintf(&in, "update %s %s %s\n", u.Name, u.New, u.Old)
		}
	}
	in.WriteString("prepare\ncommit\n")
	args := []string{"-c", "core.warnAmbiguousRefs=false", "update-ref", "--create-reflog", "--stdin"}
	if reason != "" {
		args = append(args, "-m", reason)
	}
	_, err := Run(ctx, r.Dir(), []byte(in.String()), args...)
	var ge *GitError
	if errors.As(err, &ge) && staleRef(ge.Stderr) {
		return ErrStale
	}
	return err
}

// staleRef recognises update-ref's complaints about a ref that moved or is
// locked by a concurrent writer.
func staleRef(stderr string) bool {
	for _, s := range []string{
		"but expected",
		"reference already exists",
		"File exists",
		"unable to resolve reference",
		"cannot lock ref",
		"incorrect old value",
		"is at ",
	} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}
