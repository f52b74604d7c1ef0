package cas

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
)

// The claim index (rule set contracts.RulesClaimIndex on) keeps what a
// claim needs so that it reads what it takes, not the board:
//
//	claims/inflight        the index line (see index.go) of every live task
//	                       in flight (CLAIMED, READY_FOR_REVIEW, REJECTED,
//	                       APPROVED, INTEGRATION_FAILED), by id: what "one
//	                       task per coder", the owned paths and the
//	                       in-flight window are checked against, and the
//	                       REJECTED, INTEGRATION_FAILED and lapsed CLAIMED
//	                       tasks a claim may take
//	claims/queue/<key>     the UNCLAIMED tasks in claim order (priority,
//	                       then creation time, then natural id), cut into
//	                       chunks; each line is the task's claim key, a
//	                       tab and its index line
//
// A chunk is named after a key no greater than any of its own and greater
// than every key of the chunk before it, so that the tree's order is the
// claim order and a claim of the best task reads the first chunk. An
// operation rewrites the chunks its tasks leave or enter: a chunk that
// grows past 2*queueChunk lines is cut in chunks of queueChunk, one left
// empty goes. Like the indexes, both are derived from the tasks: replaying
// an operation makes them again, and a whole check (indexesMatch) compares
// them with what the tasks make, so a commit whose claim index lies is
// refused or has it rebuilt.
const (
	ClaimsDir    = "claims"
	inflightFile = ClaimsDir + "/inflight"
	queueDir     = ClaimsDir + "/queue"
	queueHeader  = "# liza claim queue v1: key, then the task's index line"
	queueChunk   = 128
	// maxKeyLen bounds a chunk's name (a key): an id is at most
	// contracts.MaxIDLen characters, and its key at most 44 characters
	// of priority and time, 3.5 per character of the id (one digit and
	// one letter become "0001" and the digit, the letter and "+") and
	// the id itself.
	maxKeyLen = 64 + 5*contracts.MaxIDLen
)

// inQueue reports whether a task goes in the claim queue.
func inQueue(t *contracts.TaskSummary) bool { return t != nil && t.Status == contracts.Unclaimed }

// inFlight reports whether a task goes in claims/inflight.
func inFlight(t *contracts.TaskSummary) bool { return t != nil && t.Status.InFlight() }

// ClaimKey is a string whose byte order is contracts.Less's order of
// tasks: the priority, the creation time (a time that does not parse comes
// after every one that does, as in Less), then the id, where a run of
// digits counts as its number (compareNatural), and the id itself last.
// Ids are kebab-case ([a-z0-9-]): a run of letters and hyphens ends with
// "+", below every character of an id, so that a run that is a prefix of
// another sorts first; a run of digits is "0", its length and its digits
// without leading zeros, so that it sorts after "-" and before every
// letter, as any digit does; "!" ends the id, below both.
func ClaimKey(t *contracts.TaskSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%016x.", uint64(int64(t.Priority))^(1<<63))
	if at, err := contracts.ParseTime(t.Created); err == nil {
		fmt.Fprintf(&b, "0%016x%08x.", uint64(at.Unix())^(1<<63), at.Nanosecond())
	} else {
		b.WriteString("1.")
	}
	id := t.ID
	for id != "" {
		i := 1
		digit := isDigitByte(id[0])
		for i < len(id) && isDigitByte(id[i]) == digit {
			i++
		}
		run := id[:i]
		id = id[i:]
		if !digit {
			b.WriteString(run)
			b.WriteByte('+')
			continue
		}
		n := strings.TrimLeft(run, "0")
		fmt.Fprintf(&b, "0%03d%s", len(n), n)
	}
	b.WriteByte('!')
	b.WriteString(t.ID)
	return b.String()
}

func isDigitByte(c byte) bool { return '0' <= c && c <= '9' }

// validKey reports whether name can be a chunk's name: the characters
// ClaimKey writes, within maxKeyLen.
func validKey(name string) bool {
	if name == "" || len(name) > maxKeyLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || isDigitByte(c) || c == '-' || c == '.' || c == '+' || c == '!') {
			return false
		}
	}
	return true
}

// queueEntry is one line of a chunk: the key and the rest of the line
// (the index line, its newline included).
type queueEntry struct {
	key  string
	line []byte
}

func newEntry(t *contracts.TaskSummary) queueEntry {
	return queueEntry{key: ClaimKey(t), line: appendIndexLine(nil, t)}
}

func encodeChunk(es []queueEntry) []byte {
	b := make([]byte, 0, len(queueHeader)+1+len(es)*160)
	b = append(b, queueHeader...)
	b = append(b, '\n')
	for _, e := range es {
		b = append(b, e.key...)
		b = append(b, '\t')
		b = append(b, e.line...)
	}
	return b
}

func decodeChunk(raw []byte) ([]queueEntry, error) {
	header, body, ok := bytes.Cut(raw, []byte("\n"))
	if !ok || string(header) != queueHeader {
		return nil, fmt.Errorf("unknown claim queue format")
	}
	var out []queueEntry
	for len(body) > 0 {
		end := bytes.IndexByte(body, '\n')
		if end < 0 {
			return nil, fmt.Errorf("claim queue ends without a newline")
		}
		key, line, ok := bytes.Cut(body[:end+1], []byte("\t"))
		if !ok || !validKey(string(key)) {
			return nil, fmt.Errorf("claim queue line %d has no key", len(out)+2)
		}
		out = append(out, queueEntry{key: string(key), line: line})
		body = body[end+1:]
	}
	return out, nil
}

// summary decodes an entry's index line.
func (e queueEntry) summary() (*contracts.TaskSummary, error) {
	s, err := decodeIndexLine(e.line)
	if err != nil {
		return nil, err
	}
	if ClaimKey(s) != e.key {
		return nil, fmt.Errorf("claim queue key %q is not task %s's", e.key, s.ID)
	}
	return s, nil
}

// claimFiles is the claim index of a set of live tasks, built whole:
// claims/inflight, and the queue in chunks of queueChunk, or in groups
// (claims_groups.go) when inGroups.
func claimFiles(live []*contracts.TaskSummary, inGroups bool) map[string][]byte {
	files := map[string][]byte{}
	fl := map[string]*contracts.TaskSummary{}
	var q []queueEntry
	for _, t := range live {
		if inFlight(t) {
			fl[t.ID] = t
		}
		if inQueue(t) {
			q = append(q, newEntry(t))
		}
	}
	files[inflightFile] = encodeIndex(fl)
	sort.Slice(q, func(i, j int) bool { return q[i].key < q[j].key })
	if inGroups {
		groupedFiles(files, q)
		return files
	}
	for _, part := range runs(q, queueChunk) {
		files[queueDir+"/"+part[0].key] = encodeChunk(part)
	}
	return files
}

// runs cuts xs into runs of size, the last one shorter.
func runs[T any](xs []T, size int) [][]T {
	var out [][]T
	for i := 0; i < len(xs); i += size {
		out = append(out, xs[i:min(i+size, len(xs))])
	}
	return out
}

// cut is what an operation leaves of a chunk (or a group of chunks) it
// changed: xs whole while it holds at most twice size, else runs of size.
func cut[T any](xs []T, size int) [][]T {
	if len(xs) <= 2*size {
		return [][]T{xs}
	}
	return runs(xs, size)
}

// hasClaims reports whether the state at s keeps a claim index.
func (s *Snapshot) hasClaims() (bool, error) {
	_, ok, err := s.file(inflightFile)
	return ok, err
}

// keptClaims reports whether the state at s keeps a claim index that its
// commit kept: one made under an older rule set carries the index as it
// found it (an older git-liza keeps what it does not know), which may no
// longer match its tasks.
func (s *Snapshot) keptClaims() (bool, error) {
	if s.rules < contracts.RulesClaimIndex {
		return false, nil
	}
	return s.hasClaims()
}

// writeClaims adds to files the claim index after the operation: built
// whole from every live task when the parent kept none (a board written
// under an older rule set: see keptClaims) or when the indexes are
// rebuilt, otherwise the
// parent's with the changed tasks moved (was: their parent summaries, nil
// for a new task; now: after the operation, nil when gone).
func (tx *Tx) writeClaims(files map[string][]byte, was, now map[string]*contracts.TaskSummary) error {
	kept, err := tx.Snap.keptClaims()
	if err != nil {
		return err
	}
	has, err := tx.Snap.hasClaims()
	if err != nil {
		return err
	}
	// A queue in the other shape than this operation's rules keep (the
	// first operation under RulesQueueGroups) is written whole too.
	inGroups := grouped(tx.Rules)
	if !kept || tx.rebuildIndex != nil || inGroups != grouped(tx.Snap.rules) {
		live, err := tx.liveNow()
		if err != nil {
			return err
		}
		if has {
			// Every old chunk goes, but those written again.
			old, err := tx.Snap.queueFiles()
			if err != nil {
				return err
			}
			for _, p := range old {
				files[p] = nil
			}
		}
		for p, b := range claimFiles(live, inGroups) {
			files[p] = b
		}
		return nil
	}
	flChanged := map[string]*contracts.TaskSummary{}
	var gone, come []queueEntry
	for id := range union(was, now) {
		o, n := was[id], now[id]
		if inFlight(o) || inFlight(n) {
			flChanged[id] = nil
			if inFlight(n) {
				flChanged[id] = n
			}
		}
		var oe, ne queueEntry
		if inQueue(o) {
			oe = newEntry(o)
		}
		if inQueue(n) {
			ne = newEntry(n)
		}
		if oe.key == ne.key && bytes.Equal(oe.line, ne.line) {
			continue
		}
		if oe.key != "" {
			gone = append(gone, oe)
		}
		if ne.key != "" {
			come = append(come, ne)
		}
	}
	if len(flChanged) > 0 {
		raw, _, err := tx.Snap.ReadFile(inflightFile)
		if err != nil {
			return err
		}
		out, err := patchIndex(raw, flChanged)
		if err != nil {
			return inconsistent("%s: %v", inflightFile, err)
		}
		if out == nil {
			out = []byte(indexHeader + "\n")
		}
		files[inflightFile] = out
	}
	if len(gone)+len(come) == 0 {
		return nil
	}
	if inGroups {
		return tx.moveGrouped(files, gone, come)
	}
	return tx.moveQueue(files, gone, come)
}

func union(a, b map[string]*contracts.TaskSummary) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for id := range a {
		out[id] = true
	}
	for id := range b {
		out[id] = true
	}
	return out
}

// moveQueue takes the entries gone out of the queue's chunks and puts
// those in come into theirs.
func (tx *Tx) moveQueue(files map[string][]byte, gone, come []queueEntry) error {
	chunks, err := tx.Snap.Entries(queueDir)
	if err != nil {
		return err
	}
	names := entryNames(chunks)
	// at is the chunk a key belongs in: the last whose name is not above
	// it, the first for a key below them all.
	at := func(key string) int { return max(floorIndex(names, key), 0) }
	touched := map[int][]queueEntry{}
	read := func(i int) ([]queueEntry, error) {
		if es, ok := touched[i]; ok {
			return es, nil
		}
		raw, err := tx.Snap.readFile(queueDir+"/"+names[i], chunks[i].ID)
		if err != nil {
			return nil, err
		}
		es, err := decodeChunk(raw)
		if err != nil {
			return nil, inconsistent("%s/%s: %v", queueDir, names[i], err)
		}
		touched[i] = es
		return es, nil
	}
	for _, g := range gone {
		if len(names) == 0 {
			return inconsistent("%s: task leaves an empty claim queue", queueDir)
		}
		i := at(g.key)
		es, err := read(i)
		if err != nil {
			return err
		}
		j := slices.IndexFunc(es, func(e queueEntry) bool { return e.key == g.key })
		if j < 0 {
			return inconsistent("%s/%s: a task that leaves the claim queue is not in it", queueDir, names[i])
		}
		touched[i] = slices.Delete(es, j, j+1)
	}
	var fresh []queueEntry // entries for a queue that had no chunk
	for _, c := range come {
		if len(names) == 0 {
			fresh = append(fresh, c)
			continue
		}
		i := at(c.key)
		es, err := read(i)
		if err != nil {
			return err
		}
		touched[i] = append(es, c)
	}
	write := func(name string, es []queueEntry) {
		slices.SortFunc(es, func(a, b queueEntry) int { return strings.Compare(a.key, b.key) })
		if len(es) == 0 {
			return
		}
		if es[0].key < name {
			// Only the first chunk takes keys below its name: it is
			// renamed after its first.
			files[queueDir+"/"+name] = nil
			name = es[0].key
		}
		for k, part := range cut(es, queueChunk) {
			n := part[0].key
			if k == 0 {
				n = name
			}
			files[queueDir+"/"+n] = encodeChunk(part)
		}
	}
	for i, es := range touched {
		if len(es) == 0 {
			files[queueDir+"/"+names[i]] = nil
			continue
		}
		write(names[i], es)
	}
	if len(fresh) > 0 {
		slices.SortFunc(fresh, func(a, b queueEntry) int { return strings.Compare(a.key, b.key) })
		write(fresh[0].key, fresh)
	}
	return nil
}

// claimsMatch compares the claim index of a layout 2 state with what its
// live tasks make: "" when it matches or the state keeps none its commit
// kept (keptClaims), else what differs.
func claimsMatch(snap *Snapshot, live []*contracts.Task) (string, error) {
	kept, err := snap.keptClaims()
	if err != nil || !kept {
		return "", err
	}
	sums := make([]*contracts.TaskSummary, len(live))
	for i, t := range live {
		sums[i] = t.Summary()
	}
	want := claimFiles(sums, false)
	got, _, err := snap.ReadFile(inflightFile)
	if err != nil {
		return "", err
	}
	if !bytes.Equal(got, want[inflightFile]) {
		return inflightFile, nil
	}
	var wantQ []byte
	for _, t := range sortedQueue(sums) {
		wantQ = append(wantQ, t.key...)
		wantQ = append(wantQ, '\t')
		wantQ = append(wantQ, t.line...)
	}
	if grouped(snap.rules) {
		return groupsMatch(snap, wantQ)
	}
	if groups, err := snap.Entries(groupsDir); err != nil || len(groups) > 0 {
		return groupsDir, err
	}
	chunks, err := snap.Entries(queueDir)
	if err != nil {
		return "", err
	}
	var gotQ []byte
	for i, c := range chunks {
		if c.IsTree() || !validKey(c.Name) {
			return queueDir + "/" + c.Name, nil
		}
		raw, err := snap.readFile(queueDir+"/"+c.Name, c.ID)
		if err != nil {
			return "", err
		}
		es, err := decodeChunk(raw)
		if err != nil || len(es) == 0 || es[0].key < c.Name || i+1 < len(chunks) && es[len(es)-1].key >= chunks[i+1].Name {
			return queueDir + "/" + c.Name, nil
		}
		gotQ = append(gotQ, raw[len(queueHeader)+1:]...)
	}
	if !bytes.Equal(gotQ, wantQ) {
		return queueDir, nil
	}
	return "", nil
}

func sortedQueue(sums []*contracts.TaskSummary) []queueEntry {
	var q []queueEntry
	for _, t := range sums {
		if inQueue(t) {
			q = append(q, newEntry(t))
		}
	}
	slices.SortFunc(q, func(a, b queueEntry) int { return strings.Compare(a.key, b.key) })
	return q
}
