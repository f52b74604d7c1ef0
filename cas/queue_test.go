package cas

import (
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
