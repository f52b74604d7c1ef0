package tui

import (
	"strings"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// groupReady is the status group "ready": UNCLAIMED tasks whose
// dependencies are all merged, those a claim can take now.
const groupReady = "ready"

// line is one line of the task pane: a status heading (task < 0) or a
// task, by its index in the rows.
type line struct {
	status contracts.Status
	count  int
	task   int
}

// rows is the task pane's content: the tasks the filter lets through, in
// the board's attention order, and the lines that show them under their
// status headings. It is computed when the board or the filter changes,
// never on a key press that only moves the cursor: a board of 10,000
// tasks renders only the lines that fit.
type rows struct {
	tasks  []*ops.BoardTask // into the board's tasks, which a read never changes
	waits  []string         // per task: the titles of the unmerged tasks it depends on, "" when none
	lines  []line
	lineOf []int // per task: its line
}

// boardIndex is what filtering needs of each task of a board, computed
// once per board read: the text a filter searches, lower-cased, and what
// the task waits on. A key typed into the filter then costs a pass of
// strings.Contains over the tasks.
type boardIndex struct {
	board *ops.Board
	hay   []string
	waits []string
}

func indexBoard(b *ops.Board) *boardIndex {
	x := &boardIndex{board: b}
	if b == nil {
		return x
	}
	byID := make(map[string]*ops.BoardTask, len(b.Tasks))
	for i := range b.Tasks {
		byID[b.Tasks[i].ID] = &b.Tasks[i]
	}
	x.hay = make([]string, len(b.Tasks))
	x.waits = make([]string, len(b.Tasks))
	for i, t := range b.Tasks {
		x.hay[i] = strings.ToLower(strings.Join([]string{t.ID, t.Description, t.Reason, t.AssignedTo, t.ReviewingBy}, "\x00"))
		x.waits[i] = waitsOn(t, byID)
	}
	return x
}

// buildRows filters the board's tasks by text (any of id, description,
// reason, assignee, reviewer; case-insensitive) and by group (a status, or
// groupReady; "" for all).
func buildRows(x *boardIndex, text, group string) rows {
	var r rows
	if x == nil || x.board == nil {
		return r
	}
	text = strings.ToLower(text)
	if text == "" && group == "" {
		n := len(x.board.Tasks)
		r.tasks, r.waits, r.lineOf = make([]*ops.BoardTask, 0, n), make([]string, 0, n), make([]int, 0, n)
	}
	for i := range x.board.Tasks {
		t := &x.board.Tasks[i]
		waits := x.waits[i]
		switch {
		case group == groupReady && (t.Status != contracts.Unclaimed || waits != ""):
			continue
		case group != "" && group != groupReady && string(t.Status) != group:
			continue
		case text != "" && !strings.Contains(x.hay[i], text):
			continue
		}
		if len(r.tasks) == 0 || r.tasks[len(r.tasks)-1].Status != t.Status {
			r.lines = append(r.lines, line{status: t.Status, task: -1})
		}
		r.lineOf = append(r.lineOf, len(r.lines))
		r.lines = append(r.lines, line{status: t.Status, task: len(r.tasks)})
		r.tasks = append(r.tasks, t)
		r.waits = append(r.waits, waits)
	}
	// Each heading counts the tasks under it.
	for i := range r.lines {
		if r.lines[i].task >= 0 {
			continue
		}
		n := 0
		for j := i + 1; j < len(r.lines) && r.lines[j].task >= 0; j++ {
			n++
		}
		r.lines[i].count = n
	}
	return r
}

// waitsOn names the live dependencies of a task not yet MERGED, by their
// descriptions ("waits on Retry GET calls"; "+N" for more than one), for
// the tasks still to be claimed. A dependency not on the live board is
// archived, which only terminal tasks are; one SUPERSEDED or ABANDONED
// still holds the task back, as the claim's pick has it.
//
// Computed here from depends_on until ops exports the ready set that
// status --ready lists (another part of issue 29): the board should then
// use that function.
func waitsOn(t ops.BoardTask, byID map[string]*ops.BoardTask) string {
	if t.Status != contracts.Unclaimed && t.Status != contracts.Draft {
		return ""
	}
	var names []string
	for _, d := range t.DependsOn {
		dep, ok := byID[d]
		if !ok || dep.Status == contracts.Merged {
			continue
		}
		name := contracts.OneLine(dep.Description)
		if name == "" {
			name = dep.ID
		}
		names = append(names, name)
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return names[0] + " (+" + itoa(len(names)-1) + ")"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
