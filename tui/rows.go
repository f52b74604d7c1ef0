package tui

import (
	"strconv"
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

	lastHeading contracts.Status
}

// boardIndex is what filtering needs of each task of a board, computed
// once per board read: the text a filter searches, lower-cased, and what
// the task waits on. A key typed into the filter then costs a pass of
// strings.Contains over the tasks.
type boardIndex struct {
	board *ops.Board
	hay   []string
	waits []string
	// ready is the tasks a coder could claim now, in the order a claim
	// takes them (ops.ReadyIDs), as indexes into the board's tasks; nil
	// when it could not be read.
	ready []int
}

func indexBoard(b *ops.Board, ready []string) *boardIndex {
	x := &boardIndex{board: b}
	if b == nil {
		return x
	}
	byID := make(map[string]int, len(b.Tasks))
	for i := range b.Tasks {
		byID[b.Tasks[i].ID] = i
	}
	x.hay = make([]string, len(b.Tasks))
	x.waits = make([]string, len(b.Tasks))
	for i, t := range b.Tasks {
		x.hay[i] = strings.ToLower(strings.Join([]string{t.ID, t.Description, t.Reason, t.AssignedTo, t.ReviewingBy}, "\x00"))
		x.waits[i] = waitsText(t, b, byID)
	}
	if ready != nil {
		x.ready = []int{}
		for _, id := range ready {
			if i, ok := byID[id]; ok {
				x.ready = append(x.ready, i)
			}
		}
	}
	return x
}

// buildRows filters the board's tasks by text (any of id, description,
// reason, assignee, reviewer; case-insensitive) and by group (a status, or
// groupReady; "" for all). The ready group lists the tasks in the order a
// claim takes them, under one heading.
func buildRows(x *boardIndex, text, group string) rows {
	var r rows
	if x == nil || x.board == nil {
		return r
	}
	text = strings.ToLower(text)
	order := func(yield func(int) bool) {
		for i := range x.board.Tasks {
			if !yield(i) {
				return
			}
		}
	}
	if group == groupReady && x.ready != nil {
		order = func(yield func(int) bool) {
			for _, i := range x.ready {
				if !yield(i) {
					return
				}
			}
		}
	}
	if text == "" && group == "" {
		n := len(x.board.Tasks)
		r.tasks, r.waits, r.lineOf = make([]*ops.BoardTask, 0, n), make([]string, 0, n), make([]int, 0, n)
	}
	for i := range order {
		t := &x.board.Tasks[i]
		waits := x.waits[i]
		heading := t.Status
		switch {
		case group == groupReady && x.ready != nil:
			heading = readyHeading
		case group == groupReady && (t.Status != contracts.Unclaimed || waits != ""):
			// ops could not say what is ready: UNCLAIMED and waiting on
			// nothing is what a claim can take, leases aside.
			continue
		case group != "" && group != groupReady && string(t.Status) != group:
			continue
		}
		if text != "" && !strings.Contains(x.hay[i], text) {
			continue
		}
		if len(r.tasks) == 0 || r.lastHeading != heading {
			r.lines = append(r.lines, line{status: heading, task: -1})
			r.lastHeading = heading
		}
		r.lineOf = append(r.lineOf, len(r.lines))
		r.lines = append(r.lines, line{status: heading, task: len(r.tasks)})
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

// readyHeading heads the ready group.
const readyHeading = contracts.Status("READY, in claim order:")

// waitsText is what a task waits on, from ops (BoardTask.WaitsOn: its
// dependencies not MERGED, archived ones settled): the first by its title
// when it is on the board, else its id, with its status, and how many
// more ("Retry GET calls (BLOCKED) +1"); "" when it waits on nothing.
func waitsText(t ops.BoardTask, b *ops.Board, byID map[string]int) string {
	if len(t.WaitsOn) == 0 {
		return ""
	}
	w := t.WaitsOn[0]
	name := w.ID
	if i, ok := byID[w.ID]; ok {
		if d := contracts.OneLine(b.Tasks[i].Description); d != "" {
			name = d
		}
	}
	st := string(w.Status)
	if st == "" {
		st = "unknown"
	}
	out := name + " (" + st + ")"
	if n := len(t.WaitsOn) - 1; n > 0 {
		out += " +" + strconv.Itoa(n)
	}
	return out
}
