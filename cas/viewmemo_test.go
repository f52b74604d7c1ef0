package cas

import (
	"context"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/refstore"
)

// TestViewsReuseOnce: within a scope, a view reads the tip the operation
// fetched or pushed last, once and while it is recent; a refused push
// forgets it; outside a scope nothing is kept.
func TestViewsReuseOnce(t *testing.T) {
	a, _ := refstore.ParseHash("1111111111111111111111111111111111111111")
	b, _ := refstore.ParseHash("2222222222222222222222222222222222222222")
	bare := context.Background()
	sawTip(bare, a)
	if _, ok := reusedTip(bare); ok {
		t.Fatal("a tip reused outside a scope")
	}

	ctx := WithViews(bare)
	if WithViews(ctx) != ctx {
		t.Error("a scope inside a scope is a new one: the inner views would fetch again")
	}
	if _, ok := reusedTip(ctx); ok {
		t.Fatal("a tip reused before anything was fetched")
	}
	sawTip(ctx, a)
	if tip, ok := reusedTip(ctx); !ok || tip != a {
		t.Fatalf("after a fetch, the view read %v %v, want %v", tip, ok, a)
	}
	// Once: the next view fetches, so that a loop that looks again sees
	// the board move.
	if _, ok := reusedTip(ctx); ok {
		t.Fatal("the same fetch read by two views")
	}
	sawTip(ctx, b)
	if tip, ok := reusedTip(ctx); !ok || tip != b {
		t.Fatalf("after a push, the view read %v %v, want %v", tip, ok, b)
	}

	// A refused push: what the scope knew may be old.
	sawTip(ctx, a)
	lostTip(ctx)
	if _, ok := reusedTip(ctx); ok {
		t.Fatal("a tip reused after a refused push")
	}

	// Old: fetched again.
	sawTip(ctx, a)
	v := ctx.Value(viewsKey{}).(*views)
	v.at = time.Now().Add(-viewReuse)
	if _, ok := reusedTip(ctx); ok {
		t.Fatalf("a tip %s old reused", viewReuse)
	}

	// No board on the remote: nothing to reuse.
	sawTip(ctx, refstore.Hash{})
	if _, ok := reusedTip(ctx); ok {
		t.Fatal("a missing tip reused")
	}
}
