package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// down is what a fetch or push returns while the hub does not answer.
func down() error {
	return &refstore.ErrUnreachable{Remote: "origin", Err: errors.New("git fetch failed: fatal: unable to connect to 127.0.0.1")}
}

// TestOutageSaidOnce: a remote that does not answer is said once, again
// every holdRemind while it lasts, and once when it answers again; a
// refusal of the credentials is no outage, and nothing is one in local
// mode.
func TestOutageSaidOnce(t *testing.T) {
	s, log := newSup(contracts.RoleCoder, "coder-1", &fakeBoard{})
	s.Remote = true
	for i := 0; i < 5; i++ {
		if !s.remoteFailed(down()) {
			t.Fatal("an unreachable remote is not an outage")
		}
	}
	if n := strings.Count(log.String(), "the remote origin does not answer (git fetch failed: fatal: unable to connect to 127.0.0.1)"); n != 1 {
		t.Errorf("the outage was said %d times:\n%s", n, log)
	}
	if w := []time.Duration{s.holdWait(), s.holdWait(), s.holdWait()}; !slices.Equal(w, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}) {
		t.Errorf("waits %v, want 1s 2s 4s", w)
	}
	for i := 0; i < 10; i++ {
		s.holdWait()
	}
	if w := s.holdWait(); w != holdMaxWait {
		t.Errorf("the wait grew to %v, want at most %v", w, holdMaxWait)
	}

	s.waits.remote.told = time.Now().Add(-holdRemind - time.Second)
	s.waits.remote.since = time.Now().Add(-holdRemind - time.Second)
	s.remoteFailed(down())
	s.remoteFailed(down())
	if n := strings.Count(log.String(), "the remote origin has not answered for 10m1s"); n != 1 {
		t.Errorf("reminded %d times:\n%s", n, log)
	}

	s.remoteAnswered()
	s.remoteAnswered()
	if n := strings.Count(log.String(), "the remote origin answers again after 10m1s: work goes on"); n != 1 {
		t.Errorf("the end of the outage was said %d times:\n%s", n, log)
	}
	if s.held() {
		t.Error("the outage is not over")
	}
	s.remoteFailed(down()) // the next outage looks again soon
	if w := s.holdWait(); w != time.Second {
		t.Errorf("the next outage waits %v first, want 1s", w)
	}
	s.remoteAnswered()

	auth := &refstore.ErrUnreachable{Remote: "origin", Why: refstore.AuthFailed, Err: errors.New("401")}
	if s.remoteFailed(auth) || s.remoteFailed(errors.New("refused")) || s.remoteFailed(nil) {
		t.Error("a refusal, or another error, taken for an outage")
	}
	s.Remote = false
	if s.remoteFailed(down()) {
		t.Error("an outage in local mode")
	}
}

// TestMergeLaneWaitsOutAnOutage: a merge that failed because the hub did
// not answer is no failure of its task (no INTEGRATION_FAILED line, no
// delay of its own, which grew to five minutes over a long outage and
// held the merge that long after the hub came back); no merge starts
// while the hub does not answer, and the merge goes on once it answers.
func TestMergeLaneWaitsOutAnOutage(t *testing.T) {
	var hubDown atomic.Bool
	hubDown.Store(true)
	f := &fakeBoard{reply: func(verb string) error {
		if hubDown.Load() && (strings.HasPrefix(verb, "merge") || verb == "sync") {
			return down()
		}
		return nil
	}}
	s, log := newSup(contracts.RoleReviewer, "code-reviewer-1", f)
	s.Remote = true
	st := &contracts.State{Tasks: []*contracts.Task{
		{ID: "a", Status: contracts.Approved, ApprovedBy: "code-reviewer-1", ReviewCommit: "c1"},
	}}
	ctx := context.Background()
	if !s.startMerge(ctx, st) {
		t.Fatal("no merge started")
	}
	s.waitMerges()
	if s.lane.failures["a"] != nil || strings.Contains(log.String(), "merge a failed") {
		t.Errorf("the outage was charged to a:\n%s", log)
	}
	if !strings.Contains(log.String(), "the remote origin does not answer") {
		t.Errorf("the outage was not said:\n%s", log)
	}
	f.reset()
	if s.startMerge(ctx, st) {
		t.Error("a merge started while the hub does not answer")
	}

	hubDown.Store(false)
	s.remoteAnswered()
	if !s.startMerge(ctx, st) {
		t.Fatal("no merge once the hub answers")
	}
	s.waitMerges()
	if !strings.Contains(log.String(), "merged a into") {
		t.Errorf("a was not merged once the hub answered:\n%s", log)
	}
}

// TestSessionEndKeptThroughAnOutage: the end of a session that could not
// be recorded while the hub did not answer is kept, and recorded once it
// answers, in order; a merge check that failed on it is not said.
func TestSessionEndKeptThroughAnOutage(t *testing.T) {
	var hubDown atomic.Bool
	hubDown.Store(true)
	f := &fakeBoard{reply: func(verb string) error {
		if hubDown.Load() {
			return down()
		}
		return nil
	}}
	s, log := newSup(contracts.RoleCoder, "coder-1", f)
	s.Remote = true
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		s.record(ctx, &work{task: &contracts.Task{ID: id}}, &session{out: &tailWriter{}, started: time.Now()}, ops.SessionCrash, "exit status 3")
	}
	if strings.Contains(log.String(), "record the session") {
		t.Errorf("a kept record was said as an error:\n%s", log)
	}
	s.recordKept(ctx) // still down: kept again
	if len(s.waits.pending) != 2 {
		t.Fatalf("%d records kept, want 2", len(s.waits.pending))
	}
	hubDown.Store(false)
	f.reset()
	s.recordKept(ctx)
	if got := f.verbs(); !slices.Equal(got, []string{"session a crash", "session b crash"}) {
		t.Errorf("recorded %q once the hub answered", got)
	}
	if len(s.waits.pending) != 0 {
		t.Error("records still kept")
	}
}

// TestDiskFullHold: a write of the supervisor's own that failed for room
// (ENOSPC) holds the team and is said once; git's words for it alone do
// not while the disk has room (text quoted into an error cannot hold the
// team), and a look at the disk that finds room ends the hold.
func TestDiskFullHold(t *testing.T) {
	s, log := newSup(contracts.RoleCoder, "coder-1", &fakeBoard{})
	s.Root = "/repo"
	s.Repo = &refstore.Repo{CommonDir: t.TempDir()}
	full := &os.PathError{Op: "write", Path: ".git/objects/pack/tmp_pack_1", Err: syscall.ENOSPC}
	for i := 0; i < 3; i++ {
		if !s.diskFailed(fmt.Errorf("writing a pack: %w", full)) {
			t.Fatal("ENOSPC is not a full disk")
		}
	}
	if n := strings.Count(log.String(), "the disk of /repo is full (writing a pack: write .git/objects/pack/tmp_pack_1: no space left on device): sessions and merges wait until there is room"); n != 1 {
		t.Errorf("said %d times:\n%s", n, log)
	}
	if during := s.heldSince(time.Now().Add(-time.Second)); during != "while the disk of /repo was full" {
		t.Errorf("heldSince = %q", during)
	}
	s.lookDisk(false) // the temporary directory's disk has room
	if s.held() || !strings.Contains(log.String(), "there is room on the disk of /repo again after") {
		t.Errorf("room did not end the hold:\n%s", log)
	}
	if s.diskFailed(errors.New("task t1 is blocked: fatal: No space left on device")) || s.held() {
		t.Error("an error's words held the team while the disk has room")
	}
}

// unstoredPush is what a push returns that the hub took but could not
// store.
func unstoredPush() error {
	return &refstore.ErrRejected{Remote: "origin", Ref: refstore.StateRef, Unstored: true,
		Reason: "fatal: unable to write loose object file: No space left on device"}
}

// TestStoreHold: a push the remote refused holds the team only when a
// probe cannot be stored either (a push too big for the remote is the
// push's own failure); the hold is said once, probed again at the loop's
// looks, and said to end once a probe lands. Nothing in local mode is a
// hold.
func TestStoreHold(t *testing.T) {
	var full atomic.Bool
	b := &fakeBoard{reply: func(verb string) error {
		if verb == "probe" && full.Load() {
			return unstoredPush()
		}
		return nil
	}}
	s, log := newSup(contracts.RoleCoder, "coder-1", b)
	s.Remote = true
	probes := func() (n int) {
		for _, v := range b.verbs() {
			if v == "probe" {
				n++
			}
		}
		return n
	}

	if s.holding(unstoredPush()) || s.held() {
		t.Fatal("a push too big for the remote, whose probe landed, holds the team")
	}
	if n := probes(); n != 1 {
		t.Fatalf("%d probes, want 1", n)
	}
	full.Store(true)
	for i := 0; i < 3; i++ {
		if !s.holding(unstoredPush()) {
			t.Fatal("a remote that stores no probe is no hold")
		}
	}
	if n := probes(); n != 2 {
		t.Errorf("%d probes, want 2: a hold that holds is not probed at each refusal", n)
	}
	if n := strings.Count(log.String(), "the remote origin cannot store what it is sent (fatal: unable to write loose object file: No space left on device)"); n != 1 {
		t.Errorf("the hold was said %d times:\n%s", n, log)
	}
	if w := []time.Duration{s.holdWait(), s.holdWait(), s.holdWait(), s.holdWait(), s.holdWait()}; !slices.Equal(w, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, storeMaxWait, storeMaxWait}) {
		t.Errorf("waits %v, want 1s 2s 4s, then %v", w, storeMaxWait)
	}
	if !s.lookStore(context.Background()) || !s.held() {
		t.Error("the look at a store still full ended the hold")
	}
	full.Store(false)
	if s.lookStore(context.Background()) || s.held() {
		t.Error("a probe that landed did not end the hold")
	}
	s.lookStore(context.Background())
	if n := strings.Count(log.String(), "the remote origin stores again after"); n != 1 {
		t.Errorf("the end was said %d times:\n%s", n, log)
	}

	// The guard, which writes as it verifies, declines a push it could
	// not write: a hook's refusal probes too, and holds only when the
	// probe cannot be stored either.
	hook := &refstore.ErrRejected{Remote: "origin", Ref: refstore.StateRef, Reason: "writing object 4f09: no space left on device"}
	before := probes()
	if s.holding(hook) || probes() != before+1 {
		t.Error("a hook's refusal, whose probe landed, held, or was not probed")
	}
	full.Store(true)
	if !s.holding(hook) || strings.Count(log.String(), "the remote origin cannot store what it is sent") != 2 {
		t.Errorf("a hook's refusal while the remote stores nothing is no hold:\n%s", log)
	}
	full.Store(false)
	s.lookStore(context.Background())
	before = probes()
	s.Remote = false
	if s.holding(unstoredPush()) || s.holding(hook) || probes() != before {
		t.Error("a hold of the remote's store in local mode")
	}
	if s.holding(errors.New("no space left on device")) || probes() != before {
		t.Error("an error that is no refusal probed")
	}
}

// TestRecordMeetsHold: a hub with a few blocks left stores the probe made
// as a session ends badly, and not the session's record a moment later.
// The record is a write too: a hold it meets means the session is not
// counted after all, and the record kept for the hold's end says why.
func TestRecordMeetsHold(t *testing.T) {
	var full atomic.Bool
	f := &fakeBoard{reply: func(verb string) error {
		if full.Load() && (verb == "probe" || strings.HasPrefix(verb, "session ")) {
			return unstoredPush()
		}
		return nil
	}}
	s, log := newSup(contracts.RoleCoder, "coder-1", f)
	s.Remote = true
	ctx := context.Background()
	w := &work{task: &contracts.Task{ID: "a"}}
	ses := &session{out: &tailWriter{}, started: time.Now()}
	if s.failedOnHold(ctx, ses.started) != "" {
		t.Fatal("a hold before the hub filled")
	}
	full.Store(true) // the probe landed; the record does not
	if !s.recordUnlessHeld(ctx, w, ses, "a", "exited 3 after 1s", "a crash", ops.SessionCrash, "exit status 3 after 1s") {
		t.Fatalf("a session whose record met the hold was counted:\n%s", log)
	}
	if len(s.waits.pending) != 1 || s.waits.pending[0].Detail != "exit status 3 after 1s while the remote origin could not store" {
		t.Fatalf("kept %+v", s.waits.pending)
	}
	if !strings.Contains(log.String(), "a: exited 3 after 1s while the remote origin could not store: not counted as a crash") {
		t.Errorf("not said:\n%s", log)
	}
	full.Store(false)
	s.lookStore(ctx)
	ses = &session{out: &tailWriter{}, started: time.Now()}
	if s.recordUnlessHeld(ctx, w, ses, "a", "exited 3 after 1s", "a crash", ops.SessionCrash, "exit status 3 after 1s") {
		t.Error("a session recorded on a hub that stores was not counted")
	}
}

// TestRecordUnstoredKept: a hub with a few blocks left stores the probe
// and not the session's record: the record, the supervisor's own and
// small, is kept and begins the hold whatever the probe found, and the
// next look, whose probe lands, ends it and records it.
func TestRecordUnstoredKept(t *testing.T) {
	var refuse atomic.Bool
	refuse.Store(true)
	f := &fakeBoard{reply: func(verb string) error {
		if refuse.Load() && strings.HasPrefix(verb, "session ") {
			return unstoredPush()
		}
		return nil
	}}
	s, log := newSup(contracts.RoleCoder, "coder-1", f)
	s.Remote = true
	ctx := context.Background()
	ses := &session{out: &tailWriter{}, started: time.Now()}
	if !s.recordUnlessHeld(ctx, &work{task: &contracts.Task{ID: "a"}}, ses, "a", "exited 3 after 1s", "a crash", ops.SessionCrash, "exit status 3 after 1s") {
		t.Fatalf("counted a session whose record the hub could not store:\n%s", log)
	}
	if len(s.waits.pending) != 1 || strings.Contains(log.String(), "record the session") {
		t.Fatalf("the record was not kept (%d kept):\n%s", len(s.waits.pending), log)
	}
	refuse.Store(false)
	s.lookStore(ctx)
	s.recordKept(ctx)
	if len(s.waits.pending) != 0 || !slices.Contains(f.verbs(), "session a crash") || s.held() {
		t.Errorf("kept %d, calls %q, held %v", len(s.waits.pending), f.verbs(), s.held())
	}
}
