package cas

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/refstore"
)

func tk(id string, at time.Time) ticket {
	return ticket{id: id, commit: refstore.Hash{byte(len(id)), id[0]}, at: at}
}

// TestQueueOrder: an operation without a ticket lets every ticket go first;
// one with a ticket goes when no ticket is older (ties by id); a ticket of
// its clone left by an earlier process is its own.
func TestQueueOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	tip := refstore.Hash{1}
	for _, c := range []struct {
		name  string
		id    string
		live  []ticket
		yield bool
		ahead int
	}{
		{"empty queue", "b", nil, false, 0},
		{"others waiting", "b", []ticket{tk("a", t0)}, true, 1},
		{"first in line", "b", []ticket{tk("b", t0), tk("c", t0.Add(time.Second))}, false, 0},
		{"second in line", "c", []ticket{tk("b", t0), tk("c", t0.Add(time.Second))}, true, 1},
		{"tie by id", "b", []ticket{tk("a", t0), tk("b", t0)}, true, 1},
		{"own ticket alone", "b", []ticket{tk("b", t0)}, false, 0},
	} {
		turn := &turn{id: c.id}
		got := turn.yield(t0, tip, c.live, nil)
		if got != c.yield || turn.ahead != c.ahead {
			t.Errorf("%s: yield %v, %d ahead; want %v, %d", c.name, got, turn.ahead, c.yield, c.ahead)
		}
	}
}

// TestQueueWaitIsBounded: a ticket whose holder does not take its turn (the
// state does not move) is passed after queueIdle; a queue that moves is
// waited for at most queueWait.
func TestQueueWaitIsBounded(t *testing.T) {
	t0 := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	others := []ticket{tk("a", t0)}
	idle := &turn{id: "b"}
	if !idle.yield(t0, refstore.Hash{1}, others, nil) || !idle.yield(t0.Add(queueIdle/2), refstore.Hash{1}, others, nil) {
		t.Fatal("did not wait for a fresh ticket")
	}
	if idle.yield(t0.Add(queueIdle), refstore.Hash{1}, others, nil) {
		t.Fatal("waited on a queue that has not moved the state for queueIdle")
	}
	moving := &turn{id: "b"}
	var now time.Time
	for i := 0; ; i++ {
		now = t0.Add(time.Duration(i) * queueIdle / 2)
		if !moving.yield(now, refstore.Hash{byte(i + 1)}, others, nil) {
			break
		}
	}
	if waited := now.Sub(t0); waited < queueWait || waited > queueWait+queueIdle {
		t.Fatalf("waited %s on a moving queue, want about %s", waited, queueWait)
	}
}

// TestQueuePace: the wait before looking again follows how fast the
// queue has been going and how many turns come before the one ahead; the
// next in line looks often, and most often where a look costs no process.
func TestQueuePace(t *testing.T) {
	t0 := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	q := &turn{id: "z"}
	var live []ticket
	for i := 0; i < 5; i++ {
		live = append(live, tk(string(rune('a'+i)), t0))
	}
	q.yield(t0, refstore.Hash{1}, live, nil)
	q.yield(t0.Add(400*time.Millisecond), refstore.Hash{2}, live[2:], nil) // two turns in 400ms
	if q.pace != 100*time.Millisecond {                                    // (0 + 200ms) / 2
		t.Fatalf("pace %s", q.pace)
	}
	if p := q.poll(); p < 150*time.Millisecond || p > 200*time.Millisecond {
		t.Fatalf("poll %s with 3 ahead at 100ms a turn", p)
	}
	q.yield(t0.Add(500*time.Millisecond), refstore.Hash{3}, live[3:], nil)
	q.yield(t0.Add(600*time.Millisecond), refstore.Hash{4}, live[4:], nil)
	if q.ahead != 1 {
		t.Fatalf("ahead %d", q.ahead)
	}
	// Looking by fetch costs a process here and one on the remote: the
	// next in line looks about twice a turn, at the pace seen.
	if p := q.poll(); p < q.pace/3 || p > 2*q.pace/3+time.Millisecond || p < 20*time.Millisecond {
		t.Fatalf("poll %s next in line at %s a turn, looking by fetch", p, q.pace)
	}
	q.inPlace = true
	if p := q.poll(); p < 5*time.Millisecond || p > 10*time.Millisecond {
		t.Fatalf("poll %s next in line, looking in place", p)
	}
}

// TestQueuePaceCheapLook: where a look is a listing made in this process
// (a git daemon named by its address), a clone further back looks twice
// as often, and one that has just come next by a listing fetches at once
// the turns it only listed; once it has fetched the tip, it waits for the
// turn before as a clone that looks by fetch does.
func TestQueuePaceCheapLook(t *testing.T) {
	t0 := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	q := &turn{id: "z", cheapLook: true, listed: true, pace: 100 * time.Millisecond}
	var live []ticket
	for i := 0; i < 4; i++ {
		live = append(live, tk(string(rune('a'+i)), t0))
	}
	live = append(live, tk("z", t0.Add(time.Millisecond)))
	q.yield(t0, refstore.Hash{1}, live, nil)
	if q.ahead != 4 {
		t.Fatalf("ahead %d", q.ahead)
	}
	if p := q.poll(); p < 112*time.Millisecond || p > 150*time.Millisecond {
		t.Fatalf("poll %s with 4 ahead at 100ms a turn, looking by a listing here", p)
	}
	q.ready = refstore.Hash{1}
	q.yield(t0.Add(300*time.Millisecond), refstore.Hash{4}, live[3:], nil)
	if q.ahead != 1 {
		t.Fatalf("ahead %d", q.ahead)
	}
	if p := q.poll(); p > time.Millisecond {
		t.Fatalf("poll %s next in line, 3 turns behind the tip it listed", p)
	}
	q.ready = refstore.Hash{4}
	if p := q.poll(); p < 10*time.Millisecond {
		t.Fatalf("poll %s next in line, the tip it listed fetched", p)
	}
}

// A ticket's message carries when its clone joined, to the nanosecond;
// anything else is not a ticket's.
func TestTicketText(t *testing.T) {
	at := time.Date(2026, 11, 23, 23, 51, 3, 123456789, time.UTC)
	got, ok := ParseTicket(TicketText(at))
	if !ok || !got.Equal(at) {
		t.Fatalf("round trip: %v %v", got, ok)
	}
	for _, bad := range []string{
		TicketMessage,
		TicketMessage + "\nLiza-Since: yesterday\n",
		TicketMessage + "\nLiza-Since: 2026-11-23T23:51:03Z",
		TicketMessage + "\nLiza-Since: 2026-11-23T23:51:03Z\nLiza-Op: claim\n",
		"liza: claim\n\nLiza-Since: 2026-11-23T23:51:03Z\n",
	} {
		if _, ok := ParseTicket(bad); ok {
			t.Errorf("%q parsed as a ticket", bad)
		}
	}
}

func TestValidTicketRef(t *testing.T) {
	for name, ok := range map[string]bool{
		"refs/liza/queue/0123456789abcdef":  true,
		"refs/liza/queue/0123456789ABCDEF":  false,
		"refs/liza/queue/0123456789abcde":   false,
		"refs/liza/queue/0123456789abcdef0": false,
		"refs/liza/queue/../state":          false,
		"refs/liza/state":                   false,
	} {
		if ValidTicketRef(name) != ok {
			t.Errorf("ValidTicketRef(%q) = %v", name, !ok)
		}
	}
}

// kept is a ticket kept for a next operation (againEmail).
func kept(id string, at time.Time) ticket {
	k := tk(id, at)
	k.again = true
	return k
}

// TestKeptTickets: a clone's own kept ticket is its place while young and
// replaced when old; another clone's kept ticket is waited for while the
// queue moves, and passed once it has stood still for againIdle (a plain
// ticket is waited for until queueIdle).
func TestKeptTickets(t *testing.T) {
	t0 := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	tip := refstore.Hash{1}

	young := &turn{id: "b"}
	if young.yield(t0.Add(time.Second), tip, []ticket{kept("b", t0), tk("c", t0.Add(time.Second))}, nil) {
		t.Error("a young kept ticket of its own, first in line: waited")
	}
	if young.mine.commit.IsZero() || young.others != 1 {
		t.Errorf("young kept ticket: mine %v, others %d; want its own, 1", young.mine, young.others)
	}

	// Taken up young, it stays its place however long the wait.
	aging := kept("b", t0)
	waiting := &turn{id: "b"}
	waiting.yield(t0.Add(time.Second), tip, []ticket{tk("a", t0.Add(-time.Second)), aging}, nil)
	aging.old = true
	waiting.yield(t0.Add(againLife+time.Second), tip, []ticket{tk("a", t0.Add(-time.Second)), aging}, nil)
	if waiting.mine.commit != aging.commit || !waiting.replace.IsZero() {
		t.Errorf("a kept ticket taken up young and aged while waiting: mine %v, replace %v", waiting.mine, waiting.replace)
	}

	old := &turn{id: "b"}
	aged := kept("b", t0)
	aged.old = true // as ticketsOf marks one kept for longer than againLife
	if !old.yield(t0.Add(againLife+time.Second), tip, []ticket{aged, tk("c", t0.Add(time.Second))}, nil) {
		t.Error("an old kept ticket of its own put it ahead of a waiting clone")
	}
	if !old.mine.commit.IsZero() || old.replace != kept("b", t0).commit {
		t.Errorf("old kept ticket: mine %v, replace %v; want none and the old ticket to replace", old.mine, old.replace)
	}

	gone := &turn{id: "c"}
	line := []ticket{kept("a", t0), tk("c", t0.Add(time.Second))}
	if !gone.yield(t0, tip, line, nil) || !gone.yield(t0.Add(againIdle/2), tip, line, nil) {
		t.Fatal("did not wait for another clone's kept ticket while the queue had just moved")
	}
	if gone.yield(t0.Add(againIdle), tip, line, nil) {
		t.Error("waited for a kept ticket on a queue that stood still for againIdle")
	}
	if len(gone.gone) != 1 || gone.gone[0].id != "a" {
		t.Errorf("passed kept tickets %v, want a's, to delete after the win", gone.gone)
	}
	plain := &turn{id: "c"}
	line = []ticket{tk("a", t0), tk("c", t0.Add(time.Second))}
	plain.yield(t0, tip, line, nil)
	if !plain.yield(t0.Add(againIdle), tip, line, nil) {
		t.Error("passed a plain ticket after againIdle; it is waited for until queueIdle")
	}
}

// TestKeep: a winning push leaves its clone a new kept ticket when others
// were waiting (replacing the ticket it held), and only takes its ticket
// off the queue when none were.
func TestKeep(t *testing.T) {
	s := initStore(t)
	held := tk("0123456789abcdef", time.Now())
	alone := &turn{id: held.id, mine: held}
	if got := s.keep(alone); len(got) != 1 || got[0].Old != held.commit || !got[0].New.IsZero() {
		t.Fatalf("alone: %+v, want the ticket deleted", got)
	}
	busy := &turn{id: held.id, mine: held, others: 3}
	got := s.keep(busy)
	if len(got) != 1 || got[0].Name != QueueDir+held.id || got[0].Old != held.commit || got[0].New.IsZero() {
		t.Fatalf("others waiting: %+v, want the ticket replaced", got)
	}
	c, err := s.Repo.ReadCommit(got[0].New)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ParseTicket(c.Message); !ok || c.Author.Email != againEmail || len(c.Parents) != 0 {
		t.Fatalf("kept ticket %+v is not a kept ticket", c)
	}
	fresh := &turn{id: held.id, others: 1, replace: held.commit}
	if got := s.keep(fresh); len(got) != 1 || got[0].Old != held.commit || got[0].New.IsZero() {
		t.Fatalf("no ticket held, an old kept one to replace: %+v", got)
	}
	var none *turn
	if got := s.keep(none); len(got) != 0 {
		t.Fatalf("no turn: %+v", got)
	}
}

// TestPassedQueueKeepsNothing: an operation that goes because the queue
// stood still (its holders gone) counts no one as waiting, so its win
// keeps no ticket; one that goes after queueWait on a moving queue does.
func TestPassedQueueKeepsNothing(t *testing.T) {
	t0 := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	others := []ticket{tk("a", t0)}
	still := &turn{id: "b"}
	still.yield(t0, refstore.Hash{1}, others, nil)
	if still.yield(t0.Add(queueIdle), refstore.Hash{1}, others, nil) || still.others != 0 {
		t.Fatalf("passed a still queue: others %d, want 0", still.others)
	}
	moving := &turn{id: "b"}
	for i := 0; ; i++ {
		now := t0.Add(time.Duration(i) * queueIdle / 2)
		if !moving.yield(now, refstore.Hash{byte(i + 1)}, others, nil) {
			break
		}
	}
	if moving.others != 1 {
		t.Fatalf("passed a moving queue after queueWait: others %d, want 1", moving.others)
	}
}

// TestTicketsOf: tickets are read from their commits (a kept one older
// than againLife marked old); one whose commit this clone has not fetched
// counts as later than every ticket read, or is left out when not asked.
func TestTicketsOf(t *testing.T) {
	s := initStore(t)
	now := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	write := func(email string, at time.Time) refstore.Hash {
		c, err := s.Repo.WriteCommit(s.emptyTree(), nil, refstore.Signature{Name: "git-liza", Email: email, When: at}, TicketText(at))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	refs := map[string]refstore.Hash{
		QueueDir + "000000000000000a": write("git-liza@liza.invalid", now.Add(-2*time.Second)),
		QueueDir + "000000000000000b": write(againEmail, now.Add(-againLife-time.Second)),
		QueueDir + "000000000000000c": {0xee}, // not here
		QueueDir + "000000000000000d": write(againEmail, now.Add(-time.Second)),
		QueueDir + "not-a-ticket":     write("git-liza@liza.invalid", now),
	}
	live, stale := ticketsOf(s.Repo, refs, QueueDir, now, true)
	var got []string
	for _, k := range live {
		got = append(got, fmt.Sprintf("%s again=%v old=%v", k.id[15:], k.again, k.old))
	}
	want := []string{"b again=true old=true", "a again=false old=false", "d again=true old=false", "c again=false old=false"}
	if !slices.Equal(got, want) || len(stale) != 0 {
		t.Fatalf("live %q, stale %d; want %q", got, len(stale), want)
	}
	live, _ = ticketsOf(s.Repo, refs, QueueDir, now, false)
	if len(live) != 3 {
		t.Fatalf("without unknownLast: %d live, want 3 (the unfetched one left out)", len(live))
	}
}
