package cas

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
)

// IndexFile summarises every live task on one line, so that the operations
// that need the whole board (choosing the best task, checking that an agent
// holds one task, that no two tasks in flight own the same paths, the
// in-flight window) read one blob instead of every task. It is derived from
// tasks/: each operation that changes a task rewrites it, and a full
// validation rebuilds it when it does not match.
const IndexFile = "index"

const indexHeader = "# liza index v1: id status priority created assigned_to reviewing_by lease_expires review_lease_expires depends_on paths"

func encodeIndex(idx map[string]*contracts.TaskSummary) []byte {
	ids := make([]string, 0, len(idx))
	for id := range idx {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	b := make([]byte, 0, len(indexHeader)+1+len(ids)*96)
	b = append(b, indexHeader...)
	b = append(b, '\n')
	for _, id := range ids {
		b = appendIndexLine(b, idx[id])
	}
	return b
}

// appendIndexLine appends a task's line: tab-separated fields, "-" for an
// empty one.
func appendIndexLine(b []byte, t *contracts.TaskSummary) []byte {
	field := func(i int, f string) {
		if i > 0 {
			b = append(b, '\t')
		}
		if f == "" {
			f = "-"
		}
		b = append(b, f...)
	}
	field(0, t.ID)
	field(1, string(t.Status))
	field(2, strconv.Itoa(t.Priority))
	field(3, t.Created)
	field(4, t.AssignedTo)
	field(5, t.ReviewingBy)
	field(6, t.LeaseExpires)
	field(7, t.ReviewLeaseExpires)
	field(8, strings.Join(t.DependsOn, ","))
	field(9, strings.Join(t.Paths, ","))
	return append(b, '\n')
}

// patchIndex rewrites a stored index for the tasks in changed (a nil task
// has left the board) without decoding the rest: the lines are sorted by
// id, so the changes merge in. The result is what encodeIndex gives for the
// patched set of tasks.
func patchIndex(raw []byte, changed map[string]*contracts.TaskSummary) ([]byte, error) {
	header, body, ok := bytes.Cut(raw, []byte("\n"))
	if !ok || string(header) != indexHeader {
		return nil, fmt.Errorf("unknown index format")
	}
	ids := make([]string, 0, len(changed))
	for id := range changed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]byte, 0, len(raw)+len(changed)*96)
	out = append(out, raw[:len(header)+1]...)
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
			if t := changed[ids[0]]; t != nil {
				out = appendIndexLine(out, t)
			}
			ids = ids[1:]
		}
		if len(ids) > 0 && ids[0] == id {
			if t := changed[id]; t != nil {
				out = appendIndexLine(out, t)
			}
			ids = ids[1:]
		} else {
			out = append(out, line...)
		}
		body = body[end+1:]
	}
	for _, id := range ids {
		if t := changed[id]; t != nil {
			out = appendIndexLine(out, t)
		}
	}
	return out, nil
}

func decodeIndex(data []byte) (map[string]*contracts.TaskSummary, error) {
	header, body, _ := strings.Cut(string(data), "\n")
	if header != indexHeader {
		return nil, fmt.Errorf("unknown index format")
	}
	// One allocation for every summary: the index is read whole by the
	// operations that need the board.
	tasks := make([]contracts.TaskSummary, strings.Count(body, "\n"))
	idx := make(map[string]*contracts.TaskSummary, len(tasks))
	for n := 0; body != ""; n++ {
		line, rest, ok := strings.Cut(body, "\n")
		if !ok || n >= len(tasks) {
			return nil, fmt.Errorf("index ends without a newline")
		}
		body = rest
		var f [10]string
		i := 0
		for ; i < len(f) && line != ""; i++ {
			f[i], line, _ = strings.Cut(line, "\t")
			if f[i] == "-" {
				f[i] = ""
			}
		}
		if i != len(f) || line != "" {
			return nil, fmt.Errorf("index line %d does not have 10 fields", n+2)
		}
		prio, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("index line %d: priority %q", n+2, f[2])
		}
		t := &tasks[n]
		*t = contracts.TaskSummary{
			ID: f[0], Status: contracts.Status(f[1]), Priority: prio, Created: f[3],
			AssignedTo: f[4], ReviewingBy: f[5], LeaseExpires: f[6], ReviewLeaseExpires: f[7],
			DependsOn: splitComma(f[8]), Paths: splitComma(f[9]),
		}
		idx[t.ID] = t
	}
	return idx, nil
}

func splitComma(s string) contracts.StringList {
	if s == "" {
		return contracts.StringList{}
	}
	return strings.Split(s, ",")
}

// buildIndex summarises a list of tasks.
func buildIndex(tasks []*contracts.Task) map[string]*contracts.TaskSummary {
	idx := make(map[string]*contracts.TaskSummary, len(tasks))
	for _, t := range tasks {
		idx[t.ID] = t.Summary()
	}
	return idx
}

// sameIndex reports whether two indexes say the same.
func sameIndex(a, b map[string]*contracts.TaskSummary) bool {
	return bytes.Equal(encodeIndex(a), encodeIndex(b))
}
