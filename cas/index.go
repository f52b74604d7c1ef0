package cas

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// IndexFile, in each directory of tasks/ and of archive/, summarises every
// task of that directory on one line, so that what needs the whole board
// (choosing the best task, checking that an agent holds one task, that no
// two tasks in flight own the same paths, the in-flight window, the board
// a person reads, the order of an export) reads small files instead of
// every task. It is derived from the tasks beside it: each operation that
// changes a task rewrites its directory's index, and a full validation
// rebuilds the indexes when they do not match.
const IndexFile = "index"

const indexHeader = "# liza index v2: id status priority created assigned_to reviewing_by lease_expires review_lease_expires depends_on paths iteration review_cycles failed_by reassigned"

const indexFields = 14

// encodeIndex writes the index of a set of summaries, sorted by id.
func encodeIndex(idx map[string]*contracts.TaskSummary) []byte {
	ids := make([]string, 0, len(idx))
	for id := range idx {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	b := make([]byte, 0, len(indexHeader)+1+len(ids)*128)
	b = append(b, indexHeader...)
	b = append(b, '\n')
	for _, id := range ids {
		b = appendIndexLine(b, idx[id])
	}
	return b
}

// shards writes the index of every directory that holds one of tasks, by
// <x>/<y>.
func shards(tasks []*contracts.Task) map[string][]byte {
	by := map[string]map[string]*contracts.TaskSummary{}
	for _, t := range tasks {
		b := bucket(t.ID)
		if by[b] == nil {
			by[b] = map[string]*contracts.TaskSummary{}
		}
		by[b][t.ID] = t.Summary()
	}
	out := make(map[string][]byte, len(by))
	for b, idx := range by {
		out[b] = encodeIndex(idx)
	}
	return out
}

// appendIndexLine appends a task's line: tab-separated fields, "-" for an
// empty one, lists joined by commas. A value's tab, newline, comma and "%"
// are written %XX and a value that is "-" (or an empty list item) is
// marked with a "%" before it, so that no value can forge a field, an
// item or a line.
func appendIndexLine(b []byte, t *contracts.TaskSummary) []byte {
	field := func(i int, f string) {
		if i > 0 {
			b = append(b, '\t')
		}
		if f == "" {
			b = append(b, '-')
			return
		}
		if f == "-" {
			b = append(b, "%-"...)
			return
		}
		b = appendEscaped(b, f)
	}
	list := func(i int, l []string) {
		if i > 0 {
			b = append(b, '\t')
		}
		if len(l) == 0 {
			b = append(b, '-')
			return
		}
		for j, x := range l {
			if j > 0 {
				b = append(b, ',')
			}
			if x == "" || x == "-" {
				// "%" then nothing or "-": an item that would read as an
				// empty field.
				b = append(b, '%')
				b = append(b, x...)
				continue
			}
			b = appendEscaped(b, x)
		}
	}
	field(0, t.ID)
	field(1, string(t.Status))
	field(2, strconv.Itoa(t.Priority))
	field(3, t.Created)
	field(4, t.AssignedTo)
	field(5, t.ReviewingBy)
	field(6, t.LeaseExpires)
	field(7, t.ReviewLeaseExpires)
	list(8, t.DependsOn)
	list(9, t.Paths)
	field(10, strconv.Itoa(t.Iteration))
	field(11, strconv.Itoa(t.ReviewCycles))
	field(12, strconv.Itoa(t.FailedBy))
	field(13, strconv.FormatBool(t.Reassigned))
	return append(b, '\n')
}

func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\t', '\n', '\r', ',', '%':
			b = append(b, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
		default:
			b = append(b, c)
		}
	}
	return b
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) || s[i+1] == '-' {
			continue // "%" alone or before "-": an empty or "-" list item
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("bad escape in %q", s)
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", fmt.Errorf("bad escape in %q", s)
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), nil
}

// patchIndex rewrites a stored index for the tasks in changed (a nil task
// has left the directory) without decoding the rest: the lines are sorted
// by id, so the changes merge in. The result is what encodeIndex gives for
// the patched set of tasks, or nil when no task is left.
func patchIndex(raw []byte, changed map[string]*contracts.TaskSummary) ([]byte, error) {
	if raw == nil {
		raw = []byte(indexHeader + "\n")
	}
	header, body, ok := bytes.Cut(raw, []byte("\n"))
	if !ok || string(header) != indexHeader {
		return nil, fmt.Errorf("unknown index format")
	}
	ids := make([]string, 0, len(changed))
	for id := range changed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]byte, 0, len(raw)+len(changed)*128)
	out = append(out, raw[:len(header)+1]...)
	lines := 0
	emit := func(id string) {
		if t := changed[id]; t != nil {
			out = appendIndexLine(out, t)
			lines++
		}
	}
	for len(body) > 0 {
		end := bytes.IndexByte(body, '\n')
		if end < 0 {
			return nil, fmt.Errorf("index ends without a newline")
		}
		line := body[:end+1]
		tab := bytes.IndexByte(line, '\t')
		if tab < 0 {
			return nil, fmt.Errorf("index line without fields")
		}
		id := string(line[:tab])
		for len(ids) > 0 && ids[0] < id {
			emit(ids[0])
			ids = ids[1:]
		}
		if len(ids) > 0 && ids[0] == id {
			emit(id)
			ids = ids[1:]
		} else {
			out = append(out, line...)
			lines++
		}
		body = body[end+1:]
	}
	for _, id := range ids {
		emit(id)
	}
	if lines == 0 {
		return nil, nil
	}
	return out, nil
}

// decodeIndex reads an index file into summaries, in file (id) order.
func decodeIndex(data []byte) ([]*contracts.TaskSummary, error) {
	header, body, _ := strings.Cut(string(data), "\n")
	if header != indexHeader {
		return nil, fmt.Errorf("unknown index format")
	}
	// One allocation for every summary of the file.
	tasks := make([]contracts.TaskSummary, strings.Count(body, "\n"))
	out := make([]*contracts.TaskSummary, len(tasks))
	for n := 0; body != ""; n++ {
		line, rest, ok := strings.Cut(body, "\n")
		if !ok || n >= len(tasks) {
			return nil, fmt.Errorf("index ends without a newline")
		}
		body = rest
		var f [indexFields]string
		i := 0
		for ; i < len(f) && line != ""; i++ {
			f[i], line, _ = strings.Cut(line, "\t")
		}
		if i != len(f) || line != "" {
			return nil, fmt.Errorf("index line %d does not have %d fields", n+2, indexFields)
		}
		var err error
		str := func(s string) string {
			if s == "-" {
				return ""
			}
			v, e := unescape(s)
			if e != nil && err == nil {
				err = e
			}
			return v
		}
		num := func(s string) int {
			v, e := strconv.Atoi(s)
			if e != nil && err == nil {
				err = fmt.Errorf("%q is not a number", s)
			}
			return v
		}
		list := func(s string) contracts.StringList {
			if s == "-" {
				return contracts.StringList{}
			}
			parts := strings.Split(s, ",")
			for j, p := range parts {
				parts[j] = str(p)
			}
			return parts
		}
		reassigned, rerr := strconv.ParseBool(f[13])
		t := &tasks[n]
		*t = contracts.TaskSummary{
			ID: str(f[0]), Status: contracts.Status(str(f[1])), Priority: num(f[2]), Created: str(f[3]),
			AssignedTo: str(f[4]), ReviewingBy: str(f[5]), LeaseExpires: str(f[6]), ReviewLeaseExpires: str(f[7]),
			DependsOn: list(f[8]), Paths: list(f[9]),
			Iteration: num(f[10]), ReviewCycles: num(f[11]), FailedBy: num(f[12]), Reassigned: reassigned,
		}
		if err == nil && rerr != nil {
			err = fmt.Errorf("%q is not true or false", f[13])
		}
		if err != nil {
			return nil, fmt.Errorf("index line %d: %v", n+2, err)
		}
		out[n] = t
	}
	return out, nil
}

// indexEntry decodes the line of task id in an index file, without
// decoding the others (nil when it has none): an operation on a board of
// 50,000 tasks changes one task of a directory of about 200.
func indexEntry(raw []byte, id string) (*contracts.TaskSummary, error) {
	header, body, ok := bytes.Cut(raw, []byte("\n"))
	if !ok || string(header) != indexHeader {
		return nil, fmt.Errorf("unknown index format")
	}
	for len(body) > 0 {
		end := bytes.IndexByte(body, '\n')
		if end < 0 {
			return nil, fmt.Errorf("index ends without a newline")
		}
		line := body[:end+1]
		body = body[end+1:]
		tab := bytes.IndexByte(line, '\t')
		if tab < 0 {
			return nil, fmt.Errorf("index line without fields")
		}
		if string(line[:tab]) != id {
			continue
		}
		return decodeIndexLine(line)
	}
	return nil, nil
}

// decodeIndexLine decodes one line of an index (or of the claim index),
// its newline included.
func decodeIndexLine(line []byte) (*contracts.TaskSummary, error) {
	s, err := decodeIndex(append([]byte(indexHeader+"\n"), line...))
	if err != nil {
		return nil, err
	}
	if len(s) != 1 {
		return nil, fmt.Errorf("an index line of %d tasks", len(s))
	}
	return s[0], nil
}

// shardCache keeps decoded index files by blob id: a file's content never
// changes, and most of the board's files are the same from one operation
// to the next, so a process that reads the board again and again (a
// supervisor) decodes only the files that changed. The summaries are
// shared: treat them as read-only.
var shardCache = summaryCache{m: map[refstore.Hash][]*contracts.TaskSummary{}, max: shardCacheMax}

// shardCacheMax bounds the cache: four boards' worth of directories.
const shardCacheMax = 4 * 256

func cachedShard(repo *refstore.Repo, id refstore.Hash) ([]*contracts.TaskSummary, error) {
	if s, ok := shardCache.get(id); ok {
		return s, nil
	}
	raw, err := repo.ReadBlobMax(id, MaxIndex)
	if err != nil {
		return nil, err
	}
	s, err := decodeIndex(raw)
	if err != nil {
		return nil, err
	}
	shardCache.put(id, s)
	return s, nil
}

// subtreeCache keeps the summaries under a <x> directory of tasks/ or
// archive/ by the directory's tree id (see Snapshot.summariesUnder). The
// summaries are shared: treat them as read-only.
var subtreeCache = summaryCache{m: map[refstore.Hash][]*contracts.TaskSummary{}, max: 4 * 16}

// summaryCache is a bounded map of summaries by object id, emptied when
// full.
type summaryCache struct {
	sync.Mutex
	m   map[refstore.Hash][]*contracts.TaskSummary
	max int
}

func (c *summaryCache) get(id refstore.Hash) ([]*contracts.TaskSummary, bool) {
	c.Lock()
	defer c.Unlock()
	s, ok := c.m[id]
	return s, ok
}

func (c *summaryCache) put(id refstore.Hash, s []*contracts.TaskSummary) {
	c.Lock()
	defer c.Unlock()
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[id] = s
}

// buildIndex summarises a list of tasks.
func buildIndex(tasks []*contracts.Task) map[string]*contracts.TaskSummary {
	idx := make(map[string]*contracts.TaskSummary, len(tasks))
	for _, t := range tasks {
		idx[t.ID] = t.Summary()
	}
	return idx
}
