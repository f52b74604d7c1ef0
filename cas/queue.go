package cas

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/refstore"
)

// Turns on a shared remote. Clones that write to one remote race for its
// refs/liza/state, and a clone whose attempts cost more (one that must
// verify the others' commits before it builds, one on a slower link) can
// lose every race to a clone that wins once and keeps writing. So a clone
// that loses a race leaves a ticket on the remote, refs/liza/queue/<its
// id>, and every clone fetches the tickets with the state: a clone without
// a ticket lets those with one go first, and those with one go in the
// order of their tickets' times. The winner's push deletes its ticket with
// the state's move, in one atomic push. Tickets are only a courtesy: an
// operation waits for others at most queueWait, and not at all once the
// queue stops moving the state (its first holder has gone away) or a
// ticket is older than ticketLife; stale tickets are deleted by whoever
// sees them.
const (
	// QueueDir holds the tickets on a remote.
	QueueDir = "refs/liza/queue/"
	// TicketMessage is a ticket commit's subject: a ticket is a commit
	// with no parent and the empty tree, whose message is this subject
	// and a Liza-Since trailer, the time its clone joined the queue to
	// the nanosecond (a commit's own date counts whole seconds, too
	// coarse to order clones that join many times a second).
	TicketMessage = "liza: waiting for a turn\n"
	ticketTrailer = "Liza-Since: "

	queueWait  = 3 * time.Second
	queueIdle  = time.Second
	ticketLife = 30 * time.Second

	// againEmail marks a ticket a clone keeps for its next operation
	// when it wins a turn while others wait (see turn.keep): a clone that
	// writes again and again keeps its place in the round without a push
	// to join it each time. A kept ticket whose clone does not come back
	// holds the queue up for againIdle, not queueIdle; its own clone
	// takes it up again only within againLife.
	againEmail = "git-liza-again@liza.invalid"
	againIdle  = 500 * time.Millisecond
	againLife  = queueWait
)

// ValidTicketRef reports whether name is a ticket's ref:
// refs/liza/queue/ and 16 lowercase hex digits.
func ValidTicketRef(name string) bool {
	id, ok := strings.CutPrefix(name, QueueDir)
	return ok && len(id) == 16 && strings.Trim(id, "0123456789abcdef") == ""
}

// TicketText is the message of a ticket made at since.
func TicketText(since time.Time) string {
	return TicketMessage + "\n" + ticketTrailer + since.UTC().Format(time.RFC3339Nano) + "\n"
}

// ParseTicket returns the time a ticket's message says its clone joined
// the queue; false when the message is not a ticket's.
func ParseTicket(message string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(message, TicketMessage+"\n"+ticketTrailer)
	if !ok || len(rest) > 64 {
		return time.Time{}, false
	}
	stamp, ok := strings.CutSuffix(rest, "\n")
	if !ok {
		return time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339Nano, stamp)
	return at, err == nil
}

// ticket is one clone's place in the queue.
type ticket struct {
	id     string
	commit refstore.Hash
	at     time.Time
	// again: a ticket kept by a clone for its next operation, which may
	// not come (againEmail); old: one kept for longer than againLife.
	again, old bool
}

// turn is one operation's view of the queue of its remote.
type turn struct {
	id       string    // this clone's id
	mine     ticket    // this clone's ticket on the remote; zero commit when none
	waited   time.Time // when the operation first let others go; zero when it has not
	lastTip  refstore.Hash
	lastMove time.Time // when lastTip was first seen
	ahead    int       // how many tickets go before this operation
	// pace is how long the queue takes per turn, as seen while waiting:
	// when ahead went down from seenAhead, seen at seenAt.
	pace      time.Duration
	seenAhead int
	seenAt    time.Time
	stale     []ticket // tickets past ticketLife, to delete after a win
	// inPlace says whether the remote is read in place (peek).
	inPlace bool
	// ready is the remote tip fetched and verified while waiting; fresh
	// says the next attempt builds on it without fetching again.
	ready refstore.Hash
	fresh bool
	// listed says the queue was last looked at with ListRemote (see
	// peekRemote), where a look costs a round trip and no object;
	// cheapLook that such a look costs no process here
	// (refstore.Repo.ListsInProcess).
	listed, cheapLook bool
	// others is how many other clones' tickets the last look saw;
	// replace is this clone's own old kept ticket, which join replaces.
	others  int
	replace refstore.Hash
	// took is this clone's kept ticket as the operation took it up;
	// gone are the kept tickets it passed, whose clones went away.
	took refstore.Hash
	gone []ticket
	// guess, until the first attempt, says that attempt may build on
	// the remote's tip as this clone last saw it, without fetching (see
	// Store.guessTip); guessed says the attempt under way did.
	guess, guessed bool
}

// errYield is an attempt that let the queue go first.
var errYield = errors.New("another clone's turn")

// newTurn starts an operation's turn on the store's remote.
func (s *Store) newTurn() *turn {
	if !s.remoteMode() {
		return nil
	}
	id, err := s.cloneID()
	if err != nil {
		return nil // without an id, no queue: the operation races as before
	}
	_, local := s.localRemote(s.Remote)
	return &turn{id: id, guess: !local, cheapLook: !local && s.Repo.ListsInProcess(s.Remote)}
}

// cloneID is this clone's id in queues, made once and kept in
// <git common dir>/liza/clone-id.
func (s *Store) cloneID() (string, error) {
	path := filepath.Join(s.Repo.CommonDir, "liza", "clone-id")
	if b, err := refstore.ReadFile(path); err == nil {
		if id := strings.TrimSpace(string(b)); ValidTicketRef(QueueDir + id) {
			return id, nil
		}
	}
	var raw [8]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	tmp := path + ".tmp" + hex.EncodeToString(raw[:4])
	if err := os.WriteFile(tmp, []byte(hex.EncodeToString(raw[:])+"\n"), 0o644); err != nil {
		return "", err
	}
	// Two processes may both make one; link keeps the first.
	err := os.Link(tmp, path)
	os.Remove(tmp)
	if err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	b, err := refstore.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// tickets reads the tickets fetched from the remote, oldest first (ties
// by id), and the stale ones apart.
// A remote read in place is read there: its tracking refs may lag.
func (s *Store) tickets(ctx context.Context, now time.Time) (live, stale []ticket, err error) {
	if src, ok := s.localRemote(s.Remote); ok {
		return ticketsIn(ctx, src, QueueDir, now)
	}
	return ticketsIn(ctx, s.Repo, refstore.TrackingRef(s.Remote, QueueDir), now)
}

// ticketsIn reads the tickets under prefix in repo.
func ticketsIn(ctx context.Context, repo *refstore.Repo, prefix string, now time.Time) (live, stale []ticket, err error) {
	refs, err := repo.RefsUnder(ctx, prefix)
	if err != nil {
		return nil, nil, err
	}
	live, stale = ticketsOf(repo, refs, prefix, now, false)
	return live, stale, nil
}

// unseen is when a ticket whose commit is not here joined, as far as
// this clone knows: after every ticket it has read. A ticket that was not
// there when this clone last fetched was pushed after that fetch, and so
// after this clone's own ticket, which was there.
var unseen = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// ticketsOf reads the tickets refs name (names under prefix), oldest first
// (ties by id), and the stale ones apart. A ticket whose commit is not in
// repo is left out, or, with unknownLast, counted as unseen.
func ticketsOf(repo *refstore.Repo, refs map[string]refstore.Hash, prefix string, now time.Time, unknownLast bool) (live, stale []ticket) {
	for name, h := range refs {
		id := strings.TrimPrefix(name, prefix)
		if !ValidTicketRef(QueueDir + id) {
			continue
		}
		t := ticket{id: id, commit: h, at: unseen}
		if c, err := repo.ReadCommit(h); err == nil {
			at, ok := ParseTicket(c.Message)
			if !ok {
				at = c.Author.When
			}
			t.at, t.again = at, c.Author.Email == againEmail
			t.old = t.again && now.Sub(at) > againLife
		} else if !unknownLast {
			continue // not fetched whole: as if it were not there
		}
		// A ticket dated further ahead than a clock may be (MaxClockSkew:
		// no clone takes that clone's operations) is as stale as an old
		// one, or a clone gone with such a clock would hold its place
		// until every other clock passed its date.
		if age := now.Sub(t.at); age > ticketLife || (!t.at.Equal(unseen) && age < -MaxClockSkew) {
			stale = append(stale, t)
		} else {
			live = append(live, t)
		}
	}
	slices.SortFunc(live, func(a, b ticket) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return live, stale
}

// peek looks at the remote's queue in place, without a fetch, for an
// operation that waits for its turn: when the remote is a repository on
// this machine (refstore.LocalRemote), a look costs no process, while a
// fetch costs three. It reports whether the operation still lets others
// go first; ok is false when the remote cannot be read in place (then the
// next attempt fetches and looks). A peek only ever decides to wait: the
// attempt that follows fetches and decides again.
func (s *Store) peek(ctx context.Context, t *turn) (wait, ok bool) {
	src, ok := s.localRemote(s.Remote)
	if t.inPlace = ok; !ok {
		return false, false
	}
	tip, _, err := src.ReadRef(refstore.StateRef)
	if err != nil {
		return false, false
	}
	live, stale, err := ticketsIn(ctx, src, QueueDir, s.instant())
	if err != nil {
		return false, false
	}
	return t.yield(time.Now(), tip, live, stale), true
}

// peekRemote looks at the queue of a remote that is not read in place by
// asking it for its refs (git ls-remote): a round trip that moves no
// object, where a fetch also packs, sends, unpacks and checks what
// changed. Tickets this clone has not fetched count as later than its
// own. The tip it sees tells when the turn before has ended; the attempt
// that follows fetches.
func (s *Store) peekRemote(ctx context.Context, t *turn) (wait, ok bool) {
	refs, err := s.Repo.ListRemote(ctx, s.Remote, refstore.StateRef, QueueDir+"*")
	if err != nil {
		return false, false
	}
	queue := map[string]refstore.Hash{}
	for name, h := range refs {
		if strings.HasPrefix(name, QueueDir) {
			queue[name] = h
		}
	}
	live, stale := ticketsOf(s.Repo, queue, QueueDir, s.instant(), true)
	t.listed = true
	return t.yield(time.Now(), refs[refstore.StateRef], live, stale), true
}

// yield reports whether the operation lets the queue go first now, the
// remote's state at tip, the queue as just fetched.
func (t *turn) yield(now time.Time, tip refstore.Hash, live, stale []ticket) bool {
	t.stale = stale
	t.mine = ticket{}
	t.replace = refstore.Hash{}
	if tip != t.lastTip {
		t.lastTip, t.lastMove = tip, now
	}
	// Tickets kept for a next operation (againEmail) count while the
	// queue moves: once it has stood still for a few turns, their clones
	// are taken to have gone, and the next win deletes them. This clone's
	// own kept ticket is its place when it is young as the operation
	// first sees it (then for as long as the operation waits); an old
	// one is replaced when it joins.
	idle := now.Sub(t.lastMove) >= max(againIdle, 3*t.pace)
	t.gone = t.gone[:0]
	live = slices.DeleteFunc(slices.Clone(live), func(k ticket) bool {
		if k.id == t.id {
			if k.commit == t.took {
				return false
			}
			if k.old {
				t.replace = k.commit
				return true
			}
			t.took = k.commit
			return false
		}
		if k.again && idle {
			t.gone = append(t.gone, k)
			return true
		}
		return false
	})
	var others []ticket
	for _, k := range live {
		if k.id == t.id {
			t.mine = k // this clone's, maybe left by an earlier process of it
		} else {
			others = append(others, k)
		}
	}
	t.others = len(others)
	ahead := len(others) > 0
	t.ahead = len(others)
	if !t.mine.commit.IsZero() {
		ahead = live[0].id != t.id
		t.ahead = slices.IndexFunc(live, func(k ticket) bool { return k.id == t.id })
	}
	if !t.seenAt.IsZero() && t.ahead < t.seenAhead {
		seen := now.Sub(t.seenAt) / time.Duration(t.seenAhead-t.ahead)
		t.pace = (t.pace + seen) / 2
	}
	if t.seenAt.IsZero() || t.ahead != t.seenAhead {
		t.seenAhead, t.seenAt = t.ahead, now
	}
	if !ahead {
		return false
	}
	if !t.waited.IsZero() && now.Sub(t.lastMove) >= queueIdle {
		// The queue stands still: its holders have gone, and a win
		// keeps no ticket for them to wait behind.
		t.others = 0
		return false
	}
	if !t.waited.IsZero() && now.Sub(t.waited) >= queueWait {
		return false
	}
	if t.waited.IsZero() {
		t.waited = now
	}
	return true
}

// poll is how long to wait before looking at the queue again. The next
// in line looks often, so that its turn starts soon after the one before
// ends; the others wait about as long as the turns between take, at the
// pace seen, so that a long queue is not asked after every operation by
// everyone in it.
func (t *turn) poll() time.Duration {
	if t.ahead <= 1 {
		if t.inPlace {
			// A look in place costs no process.
			return 5*time.Millisecond + time.Duration(mrand.Int64N(int64(5*time.Millisecond)))
		}
		if t.listed {
			// The next in line looks with a fetch (peekFetched), so
			// that its turn starts soon after the one before ends: it
			// first lets half a turn at the pace seen pass since the
			// state last moved, at most 80 ms (the pace counts these
			// waits: waiting longer made turns longer, and the pace
			// with them), then looks every 10 to 20 ms. (Looking every
			// 10 to 20 ms throughout, a fetch each, took a third of a
			// core from the turn it waited for.)
			quick := 10*time.Millisecond + time.Duration(mrand.Int64N(int64(10*time.Millisecond)))
			if t.cheapLook && t.ready != t.lastTip {
				// Just come next, by a listing, behind the remote by
				// the turns it only listed: it fetches them now, so
				// that the fetch after the turn before brings that
				// turn alone.
				return time.Millisecond
			}
			if d := time.Until(t.lastMove.Add(min(t.pace/2, 80*time.Millisecond))); d > quick {
				return d
			}
			return quick
		}
		// A look at a remote not read in place is a fetch: a process
		// here and one on the remote, each as dear as a good part of the
		// turn it waits for. Looking every few dozen milliseconds took
		// the processor from the turn under way (8 clones over git
		// daemon on 2 cores made a third of one clone's adds); the next
		// in line looks about twice a turn, at the pace seen.
		if t.pace > 0 {
			return min(max(t.pace/3+time.Duration(mrand.Int64N(int64(t.pace/3)+1)), queuePoll()), time.Second)
		}
		return 2 * queuePoll()
	}
	pace := t.pace
	if pace <= 0 {
		pace = 50 * time.Millisecond
	}
	wait := time.Duration(t.ahead-1) * pace
	if t.cheapLook {
		// A look costs the remote one process and this clone none: it
		// looks twice as often, and learns sooner that it is next.
		wait /= 2
	}
	wait = wait*3/4 + time.Duration(mrand.Int64N(int64(wait/4)+1))
	return min(max(wait, 15*time.Millisecond), time.Second)
}

// release is the ref update that takes this clone's ticket off the queue
// with the operation's push; none when it holds none.
func (t *turn) release() []refstore.RefUpdate {
	if t == nil || t.mine.commit.IsZero() {
		return nil
	}
	return []refstore.RefUpdate{{Name: QueueDir + t.id, Old: t.mine.commit}}
}

// keep is the ref update of a winning push that leaves this clone a new
// ticket, at the end of the queue, when others were waiting: a clone that
// writes again soon (an agent's next step, a loop) takes it up and waits
// its turn without a push to join, which cost as much as the operation's
// own. A clone that does not come back holds the queue up for a moment
// (see againIdle). Without others waiting, or where the ticket cannot be
// written, it is release.
func (s *Store) keep(t *turn) []refstore.RefUpdate {
	if t == nil || t.others == 0 {
		return t.release()
	}
	c, _, err := s.ticketCommit(againEmail)
	if err != nil {
		return t.release()
	}
	old := t.mine.commit
	if old.IsZero() {
		old = t.replace
	}
	return []refstore.RefUpdate{{Name: QueueDir + t.id, Old: old, New: c}}
}

// join puts this clone in the queue, unless it is there: after a lost
// race, or when others are waiting already. A remote that refuses tickets
// (a guard that does not know them) leaves the operation racing as before.
func (s *Store) join(ctx context.Context, t *turn) {
	if t == nil || !t.mine.commit.IsZero() {
		return
	}
	old := t.replace // a stale or old kept ticket of this clone's is replaced
	for _, k := range t.stale {
		if k.id == t.id {
			old = k.commit
		}
	}
	c, now, err := s.ticketCommit("git-liza@liza.invalid")
	if err != nil {
		return
	}
	if err := s.Repo.Push(ctx, s.Remote, refstore.RefUpdate{Name: QueueDir + t.id, Old: old, New: c}); err == nil {
		t.mine = ticket{id: t.id, commit: c, at: now}
	}
}

// leave takes this clone's ticket off the queue when the operation ends
// without a push that would have (an error, a refusal, a budget spent).
// Best effort: a ticket left stays until it is stale.
func (s *Store) leave(ctx context.Context, t *turn) {
	if u := t.release(); u != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = s.Repo.Push(ctx, s.Remote, u...)
	}
}

// reap deletes the stale tickets seen, once, after a win.
func (s *Store) reap(ctx context.Context, t *turn) {
	if t == nil {
		return
	}
	for _, k := range append(slices.Clip(t.stale), t.gone...) {
		if k.id != t.id {
			_ = s.Repo.Push(ctx, s.Remote, refstore.RefUpdate{Name: QueueDir + k.id, Old: k.commit})
		}
	}
}

// ticketCommit writes a ticket made now, its author git-liza at email,
// and returns it and its time.
func (s *Store) ticketCommit(email string) (refstore.Hash, time.Time, error) {
	now := s.instant()
	c, err := s.Repo.WriteCommit(s.emptyTree(), nil, refstore.Signature{Name: "git-liza", Email: email, When: now}, TicketText(now))
	return c, now, err
}

// emptyTree is the id of the empty tree (written, so that it is here).
func (s *Store) emptyTree() refstore.Hash {
	h, _ := s.Repo.WriteTree(nil)
	return h
}
