package tui

import (
	"context"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/testrepo"
)

// A board left open on a quiet team is read again at a tick only for what
// the clock changes (a lease that runs out, its alarm): where a read
// takes long (50,000 tasks: about 0.8 s of a core), that was a sixth of a
// core for a board on which nothing moved. A board whose read is quick is
// read at every tick, as before; one whose state moved is read by the poll.
func TestTickReadsALargeQuietBoardSeldom(t *testing.T) {
	root := testrepo.New(t, nil)
	repo, err := refstore.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := ops.New(repo, ops.Options{Budget: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.Init(ctx, ops.InitRequest{Goal: "ship it", Spec: "specs/vision.md"}); err != nil {
		t.Fatal(err)
	}
	tick := func(took, ago time.Duration) bool {
		m := newModel(ctx, Options{Service: svc, Interval: 5 * time.Second})
		m.loadTook, m.loadedAt = took, time.Now().Add(-ago)
		m.Update(tickMsg{})
		return m.loading
	}
	if !tick(20*time.Millisecond, 6*time.Second) {
		t.Error("a board read in 20 ms was not read again at a tick 6 s after the last read")
	}
	if tick(800*time.Millisecond, 6*time.Second) {
		t.Error("a board read in 0.8 s was read again at a tick 6 s after the last read, its state unmoved")
	}
	if !tick(800*time.Millisecond, 17*time.Second) {
		t.Error("a board read in 0.8 s was not read again at a tick 17 s after the last read")
	}
	// A shared board that is not read at a tick is fetched, one fetch at
	// a time.
	m := newModel(ctx, Options{Service: svc, Interval: 5 * time.Second})
	m.remote, m.loadTook, m.loadedAt = true, 800*time.Millisecond, time.Now().Add(-6*time.Second)
	m.Update(tickMsg{})
	if m.loading || !m.fetching {
		t.Fatalf("a quiet shared board at a tick: loading %v, fetching %v; want a fetch and no read", m.loading, m.fetching)
	}
	fetch := m.fetch()
	m.Update(fetch())
	if m.fetching || m.err != nil {
		t.Errorf("after the fetch: fetching %v, error %v", m.fetching, m.err)
	}
}
