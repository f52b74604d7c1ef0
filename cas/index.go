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

// Summary is the part of a task the index keeps.
func Summary(t *contracts.Task) *contracts.Task {
	return &contracts.Task{
		ID: t.ID, Status: t.Status, Priority: t.Priority, Created: t.Created,
		AssignedTo: t.AssignedTo, ReviewingBy: t.ReviewingBy,
		LeaseExpires: t.LeaseExpires, ReviewLeaseExpires: t.ReviewLeaseExpires,
		DependsOn: t.DependsOn, Paths: t.Paths,
	}
}

func encodeIndex(idx map[string]*contracts.Task) []byte {
	ids := make([]string, 0, len(idx))
	for id := range idx {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b bytes.Buffer
	b.WriteString(indexHeader)
	b.WriteByte('\n')
	for _, id := range ids {
		t := idx[id]
		fields := []string{t.ID, string(t.Status), strconv.Itoa(t.Priority), t.Created, t.AssignedTo,
			t.ReviewingBy, t.LeaseExpires, t.ReviewLeaseExpires, strings.Join(t.DependsOn, ","), strings.Join(t.Paths, ",")}
		for i, f := range fields {
			if i > 0 {
				b.WriteByte('\t')
			}
			if f == "" {
				f = "-"
			}
			b.WriteString(f)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func decodeIndex(data []byte) (map[string]*contracts.Task, error) {
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) == 0 || lines[0] != indexHeader {
		return nil, fmt.Errorf("unknown index format")
	}
	idx := make(map[string]*contracts.Task, len(lines)-1)
	for n, line := range lines[1:] {
		f := strings.Split(line, "\t")
		if len(f) != 10 {
			return nil, fmt.Errorf("index line %d has %d fields", n+2, len(f))
		}
		for i := range f {
			if f[i] == "-" {
				f[i] = ""
			}
		}
		prio, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("index line %d: priority %q", n+2, f[2])
		}
		idx[f[0]] = &contracts.Task{
			ID: f[0], Status: contracts.Status(f[1]), Priority: prio, Created: f[3],
			AssignedTo: f[4], ReviewingBy: f[5], LeaseExpires: f[6], ReviewLeaseExpires: f[7],
			DependsOn: splitComma(f[8]), Paths: splitComma(f[9]),
		}
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
func buildIndex(tasks []*contracts.Task) map[string]*contracts.Task {
	idx := make(map[string]*contracts.Task, len(tasks))
	for _, t := range tasks {
		idx[t.ID] = Summary(t)
	}
	return idx
}

// sameIndex reports whether two indexes say the same.
func sameIndex(a, b map[string]*contracts.Task) bool {
	return bytes.Equal(encodeIndex(a), encodeIndex(b))
}
