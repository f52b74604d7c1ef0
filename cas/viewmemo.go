package cas

import (
	"context"
	"sync"
	"time"

	"github.com/liza-dev/git-liza/refstore"
)

// Views of one operation. In remote mode a view fetches the remote's tip,
// and an operation that looks at the board several times (a claim plans,
// then reads the timeouts of its worktree; a review records itself, then
// reads what it checks) fetched it each time: a round trip or three to a
// hub that may be far away, and a process pair on the hub. Within the
// scope WithViews starts, a view reads instead the tip the operation
// fetched or pushed last, once, if that was within viewReuse: the next
// view fetches again, so that a loop that looks until something moves
// (an operation tried again because the board moved) sees it move. An
// attempt to write fetches as before: it decides on the remote's tip.
const viewReuse = 2 * time.Second

type viewsKey struct{}

// views is what the scope knows: the remote's tip as the operation last
// fetched or pushed it, and whether a view may still read it.
type views struct {
	mu    sync.Mutex
	tip   refstore.Hash
	at    time.Time
	fresh bool
}

// WithViews starts a scope whose views may read the tip the operation
// last fetched or pushed (see viewReuse). An operation that looks at the
// board more than once starts one; a scope already started is kept.
func WithViews(ctx context.Context) context.Context {
	if _, ok := ctx.Value(viewsKey{}).(*views); ok {
		return ctx
	}
	return context.WithValue(ctx, viewsKey{}, &views{})
}

// sawTip records, in ctx's scope, that tip is the remote's as of now (a
// fetch brought it, or a push put it there).
func sawTip(ctx context.Context, tip refstore.Hash) {
	if v, ok := ctx.Value(viewsKey{}).(*views); ok && !tip.IsZero() {
		v.mu.Lock()
		v.tip, v.at, v.fresh = tip, time.Now(), true
		v.mu.Unlock()
	}
}

// lostTip forgets what ctx's scope knew: a push was refused, so the tip
// it recorded may not be the remote's any more.
func lostTip(ctx context.Context) {
	if v, ok := ctx.Value(viewsKey{}).(*views); ok {
		v.mu.Lock()
		v.fresh = false
		v.mu.Unlock()
	}
}

// reusedTip is the tip a view reads without fetching, once: false when
// ctx has no scope, or what it knows was read already or is too old.
func reusedTip(ctx context.Context) (refstore.Hash, bool) {
	v, ok := ctx.Value(viewsKey{}).(*views)
	if !ok {
		return refstore.Hash{}, false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.fresh || time.Since(v.at) >= viewReuse {
		return refstore.Hash{}, false
	}
	v.fresh = false
	return v.tip, true
}
