package ops

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"go.yaml.in/yaml/v3"

	"github.com/liza-dev/git-liza/atomicfile"
	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// taskSessions is what a usage report reads of a task: its status (from
// the index) and the sessions its history records with usage.
type taskSessions struct {
	ID       string
	Status   contracts.Status
	Sessions []spentSession
}

// spentSession is one session_ended event with usage. Rejected says its
// iteration was rejected by a review: it ran before a rejection, or it is
// the rejecting reviewer's own session, which ends just after its
// verdict. The sprint's metrics split spend the same way
// (contracts.SprintSpend).
type spentSession struct {
	Time     string          `json:"t"`
	Agent    string          `json:"a"`
	Usage    contracts.Usage `json:"u"`
	Rejected bool            `json:"r,omitempty"`
}

// sessionsOf is the sessions a history records with usage.
func sessionsOf(h []*contracts.HistoryEvent) []spentSession {
	var out []spentSession
	since, rejecter := 0, "" // the sessions since the last rejection start at since
	for _, ev := range h {
		if ev == nil {
			continue
		}
		if u, ok := contracts.SessionUsage(ev); ok {
			s := spentSession{Time: ev.Time, Agent: ev.Agent, Usage: u}
			if rejecter != "" && ev.Agent == rejecter {
				s.Rejected, rejecter = true, ""
				since = len(out) + 1
			}
			out = append(out, s)
			continue
		}
		rejecter = ""
		if ev.Event == "rejected" {
			for i := since; i < len(out); i++ {
				out[i].Rejected = true
			}
			since, rejecter = len(out), ev.Agent
		}
	}
	return out
}

// spendTasks are the tasks whose sessions a report counts: the one asked
// for, live or archived, or the tasks of the goal (contracts.SprintTasks:
// the live ones and the archived ones the sprint plans).
//
// A board may hold thousands of tasks, and a report must not read them
// all each time: a task's sessions are kept in the spend cache by the id
// of its file, which changes with every change to the task, so that only
// the files written since the last report are read. Of those, a file
// that cannot hold the words session_ended has no session (see
// mayHoldSessions), and the others are decoded side by side, their history
// alone.
//
// A process that keeps what it decoded (Options.KeepDecoded) keeps the
// cache's entries in memo too, and reads them from there.
func spendTasks(snap *cas.Snapshot, st *contracts.State, id string, memo *spendMemo) ([]*taskSessions, error) {
	if id != "" {
		t, err := snap.Task(id)
		if err != nil || t == nil {
			return nil, err
		}
		return []*taskSessions{{ID: t.ID, Status: t.Status, Sessions: sessionsOf(t.History)}}, nil
	}
	cache := memo.open(snap.Repo)
	type miss struct {
		task *taskSessions
		key  string
		dir  string
		raw  []byte
	}
	var out []*taskSessions
	var misses []miss
	for _, dir := range []string{cas.TasksDir, cas.ArchiveDir} {
		sums, err := snap.Summaries(dir)
		if err != nil {
			return nil, err
		}
		for _, x := range sums {
			if dir == cas.ArchiveDir && !st.Sprint.InScope(x.ID) {
				continue
			}
			fid, err := snap.FileID(cas.EntityFile(dir, x.ID))
			if err != nil {
				return nil, err
			}
			if fid.IsZero() {
				return nil, contracts.Errorf(contracts.CodeInconsistent, "%s: the index names task %s, which is not there", dir, x.ID)
			}
			t := &taskSessions{ID: x.ID, Status: x.Status}
			out = append(out, t)
			key := fid.String()
			if ses, ok := cache.get(key); ok {
				t.Sessions = ses
				continue
			}
			raw, _, err := snap.ReadFile(cas.EntityFile(dir, x.ID))
			if err != nil {
				return nil, err
			}
			if !mayHoldSessions(raw) {
				cache.put(key, nil)
				continue
			}
			misses = append(misses, miss{task: t, key: key, dir: dir, raw: bytes.Clone(raw)})
		}
	}
	errs := make([]error, len(misses))
	var wg sync.WaitGroup
	var next atomic.Int64
	for range min(runtime.GOMAXPROCS(0), len(misses)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(misses); i = int(next.Add(1) - 1) {
				h, err := spendHistory(misses[i].raw)
				if err != nil {
					errs[i] = contracts.Errorf(contracts.CodeInconsistent, "%s/%s.yaml: %v", misses[i].dir, misses[i].task.ID, err)
					continue
				}
				misses[i].task.Sessions = sessionsOf(h)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, m := range misses {
		cache.put(m.key, m.task.Sessions)
	}
	cache.save()
	memo.keep(cache)
	return out, nil
}

// spendHistory is what a report needs of a task file's history: its
// session_ended and rejected events, and the others as events with no
// more than a name, "-", in order. The encoder writes the history as a
// top-level key and each event as an item at two spaces ("  - "), an
// event's own lines deeper, so that the events of interest are cut out
// and decoded alone; a file not written so is decoded whole.
func spendHistory(raw []byte) ([]*contracts.HistoryEvent, error) {
	_, rest, ok := bytes.Cut(raw, []byte("\nhistory:\n"))
	if !ok {
		return wholeHistory(raw)
	}
	var out []*contracts.HistoryEvent
	for bytes.HasPrefix(rest, []byte("  - ")) {
		// The item runs to the next line that is neither deeper than it
		// nor empty (a block scalar's blank line).
		end := len(rest)
		for j := bytes.IndexByte(rest, '\n') + 1; j > 0 && j < len(rest); {
			if line := rest[j:]; line[0] != '\n' && !bytes.HasPrefix(line, []byte("    ")) {
				end = j
				break
			}
			nl := bytes.IndexByte(rest[j:], '\n')
			if nl < 0 {
				break
			}
			j += nl + 1
		}
		item := rest[:end]
		rest = rest[end:]
		// The events that are neither sessions nor rejections matter
		// only by their place: a name stands for each.
		if !isEvent(item, SessionEventTag) && !isEvent(item, "rejected") {
			// Only an event the encoder wrote is known not to be one of
			// them by its text: one spelled another way ("session_ended",
			// with a tag or a comment), which the guard decodes as what
			// it says, is read with the whole file.
			if !plainEvent(item) {
				return wholeHistory(raw)
			}
			out = append(out, &contracts.HistoryEvent{Event: "-"})
			continue
		}
		var evs []*contracts.HistoryEvent
		if err := yaml.Unmarshal(item, &evs); err != nil || len(evs) != 1 || evs[0] == nil {
			return wholeHistory(raw)
		}
		out = append(out, evs[0])
	}
	if len(rest) > 0 && (rest[0] == ' ' || rest[0] == '\n') {
		return wholeHistory(raw) // not the encoder's layout
	}
	return out, nil
}

// isEvent reports whether a history item, as the encoder writes it, is an
// event named name.
func isEvent(item []byte, name string) bool {
	return bytes.Contains(item, []byte("\n    event: "+name+"\n")) || bytes.HasPrefix(item, []byte("  - event: "+name+"\n"))
}

// plainEvent reports whether a history item has one event line, as the
// encoder writes it: its name plain, of lower-case letters, digits and
// underscores, with nothing after it.
func plainEvent(item []byte) bool {
	var line []byte
	n := bytes.Count(item, []byte("\n    event: "))
	if rest, ok := bytes.CutPrefix(item, []byte("  - event: ")); ok {
		line, n = rest, n+1
	} else if i := bytes.Index(item, []byte("\n    event: ")); i >= 0 {
		line = item[i+len("\n    event: "):]
	}
	if n != 1 {
		return false
	}
	name, _, _ := bytes.Cut(line, []byte("\n"))
	if len(name) == 0 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func wholeHistory(raw []byte) ([]*contracts.HistoryEvent, error) {
	var h struct {
		History []*contracts.HistoryEvent `yaml:"history"`
	}
	err := yaml.Unmarshal(raw, &h)
	return h.History, err
}

// spendCache keeps the sessions of task files by the files' object ids, in
// .git/liza/cache/spend: a file's content never changes, so an entry never
// goes stale. Each report writes back the entries of the files it saw
// (the others are gone from the board). It is a local file that only
// speeds reports up: a cache that cannot be read or written is read from
// the board instead. The agents' sandboxes leave .git/liza read-only (see
// the presets), so an agent cannot write its own spend down there.
type spendCache struct {
	path      string
	old, seen map[string][]spentSession
	changed   bool
}

// spendMemo is the spend cache's entries as the last report of a
// long-lived process left them (nil: none kept). The sessions in it are
// shared between reports: read-only.
type spendMemo struct {
	mu    sync.Mutex
	files map[string][]spentSession
}

// open is the spend cache as memo kept it, or as its file has it.
func (m *spendMemo) open(repo *refstore.Repo) *spendCache {
	if m != nil {
		m.mu.Lock()
		files := m.files
		m.mu.Unlock()
		if files != nil {
			c := openSpendCache(repo, false)
			c.old = files
			return c
		}
	}
	return openSpendCache(repo, true)
}

// keep keeps what a report saw, for the next.
func (m *spendMemo) keep(c *spendCache) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files = c.seen
}

// mayHoldSessions reports whether a task file may hold a session_ended
// event: its name written out, or any escape, by which a double-quoted YAML
// string can spell it without its letters in a row ("session\u005fended",
// a line broken with a backslash). A file that git-liza's encoder wrote
// holds the name as it is; one an import commit carries may spell it
// otherwise, and the guard and the goal's budget read what it says.
func mayHoldSessions(raw []byte) bool {
	return bytes.Contains(raw, []byte(SessionEventTag)) || bytes.IndexByte(raw, '\\') >= 0
}

// spendCacheVersion names the cache's format and what its entries hold
// (sessionsOf, spendHistory): change it with either. Another version is
// read as empty. 2: spendHistory reads an event spelled other than the
// encoder writes it with the whole file; the entries of 1 dropped such
// sessions (TestSpendCacheOfThePreviousRelease). 3: a file whose event is
// spelled with an escape is read (mayHoldSessions).
const spendCacheVersion = 3

// maxSpendCache bounds what is read of the cache: about 300 bytes a task
// with sessions, for a hundred thousand of them.
const maxSpendCache = 64 << 20

type spendCacheFile struct {
	Version int                       `json:"version"`
	Files   map[string][]spentSession `json:"files"`
}

// openSpendCache is the spend cache of repo, its file read when read says
// so.
func openSpendCache(repo *refstore.Repo, read bool) *spendCache {
	c := &spendCache{seen: map[string][]spentSession{}}
	if repo == nil || repo.CommonDir == "" {
		return c
	}
	c.path = filepath.Join(repo.CommonDir, "liza", "cache", "spend")
	if !read {
		return c
	}
	f, err := os.Open(c.path)
	if err != nil {
		return c
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSpendCache+1))
	var file spendCacheFile
	if err == nil && len(data) <= maxSpendCache && json.Unmarshal(data, &file) == nil && file.Version == spendCacheVersion {
		c.old = file.Files
	}
	return c
}

func (c *spendCache) get(key string) ([]spentSession, bool) {
	ses, ok := c.old[key]
	if ok {
		c.seen[key] = ses
	}
	return ses, ok
}

func (c *spendCache) put(key string, ses []spentSession) {
	c.seen[key] = ses
	c.changed = true
}

// save writes the entries seen back when a file was read or one is gone,
// through a temporary file renamed over it; a failure leaves the old
// cache, or none.
func (c *spendCache) save() {
	if c.path == "" || !c.changed && len(c.seen) == len(c.old) {
		return
	}
	data, err := json.Marshal(spendCacheFile{Version: spendCacheVersion, Files: c.seen})
	if err != nil || len(data) > maxSpendCache {
		return
	}
	_ = atomicfile.Write(c.path, data, 0o644)
}
