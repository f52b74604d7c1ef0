package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

var testNow = time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)

// teamBoard is a board as a running team has it: tasks in every state
// that needs attention, agents, alarms and operations.
func teamBoard(unclaimed int) *ops.Board {
	st := &contracts.State{
		Goal:   contracts.Goal{ID: "goal-1", Description: "Retry every API call", Status: "IN_PROGRESS"},
		Sprint: contracts.Sprint{ID: "sprint-1", Status: "IN_PROGRESS"},
		Agents: map[string]*contracts.Agent{},
	}
	add := func(id string, s contracts.Status, desc string, f func(t *contracts.Task)) {
		t := &contracts.Task{ID: id, Status: s, Priority: 3, Description: desc}
		if f != nil {
			f(t)
		}
		st.Tasks = append(st.Tasks, t)
	}
	add("b-1", contracts.Blocked, "Retry GET calls", func(t *contracts.Task) { t.BlockedReason, t.AssignedTo = "the spec is silent", "coder-1" })
	add("c-1", contracts.Claimed, "Retry PUT calls", func(t *contracts.Task) {
		t.AssignedTo, t.LeaseExpires = "coder-2", "2026-01-17T10:20:00Z"
	})
	add("m-1", contracts.Merged, "Retry HEAD calls", nil)
	// Five statuses before the unclaimed tasks, six agents and three
	// alarms: the board used to show no task row at all at 80x24.
	add("r-1", contracts.Rejected, "Retry OPTIONS calls", func(t *contracts.Task) { t.RejectionReason = "no test" })
	add("v-1", contracts.ReadyForReview, "Retry PATCH calls", func(t *contracts.Task) { t.ReviewingBy = "code-reviewer-1" })
	add("a-1", contracts.Approved, "Retry TRACE calls", nil)
	for i := 1; i <= unclaimed; i++ {
		add(fmt.Sprintf("u-%d", i), contracts.Unclaimed, fmt.Sprintf("Retry call %d", i), nil)
	}
	add("w-1", contracts.Unclaimed, "Retry POST calls", func(t *contracts.Task) { t.DependsOn = []string{"c-1", "m-1"} })
	for i := 1; i <= 6; i++ {
		st.Agents[fmt.Sprintf("coder-%d", i)] = &contracts.Agent{Role: "coder", Status: "WORKING"}
	}
	st.Agents["code-reviewer-1"] = &contracts.Agent{Role: "code_reviewer", Status: "IDLE"}
	b := ops.NewBoard(st, testNow, ops.BoardFilter{})
	b.Alarms = []contracts.Alarm{{Message: "BLOCKED: b-1 — the spec is silent"}, {Message: "a second alarm"}, {Message: "a third alarm"}}
	return b
}

func testModel(b *ops.Board, w, h int) *model {
	m := &model{width: w, height: h, svc: nil}
	var log []ops.LogEntry
	for i := range 8 {
		log = append(log, ops.LogEntry{Time: "2026-01-17T10:00:00Z", Agent: "coder-1", Subject: fmt.Sprintf("operation %d", i)})
	}
	m.setBoard(b, log, nil)
	return m
}

func press(m *model, keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "tab":
			msg = tea.KeyPressMsg{Code: tea.KeyTab}
		case "down":
			msg = tea.KeyPressMsg{Code: tea.KeyDown}
		case "pgdown":
			msg = tea.KeyPressMsg{Code: tea.KeyPgDown}
		case "end":
			msg = tea.KeyPressMsg{Code: tea.KeyEnd}
		case "home":
			msg = tea.KeyPressMsg{Code: tea.KeyHome}
		case "backspace":
			msg = tea.KeyPressMsg{Code: tea.KeyBackspace}
		default:
			r := []rune(k)[0]
			msg = tea.KeyPressMsg{Code: r, Text: k}
		}
		_, cmd = m.Update(msg)
	}
	return cmd
}

func plain(m *model) string { return ansi.Strip(m.render()) }

// taskRows are the lines of the screen that show a task.
func taskRows(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if (strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "> ")) && len(l) > 3 &&
			strings.ContainsAny(l[2:3], "bcuwrva") && l[3] == '-' {
			out = append(out, l)
		}
	}
	return out
}

// At 80x24, with agents, alarms and the latest operations on the board,
// the tasks still show, row by row, and the screen fits the window.
func TestTaskRowsAt80x24(t *testing.T) {
	m := testModel(teamBoard(40), 80, 24)
	text := plain(m)
	lines := strings.Split(text, "\n")
	if len(lines) != 24 {
		t.Errorf("%d lines, want 24:\n%s", len(lines), text)
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > 80 {
			t.Errorf("a line wider than 80 columns: %q", l)
		}
	}
	if rows := taskRows(text); len(rows) < 6 {
		t.Errorf("%d task rows at 80x24, want at least 6:\n%s", len(rows), text)
	}
	for _, want := range []string{"> b-1 ", "BLOCKED 1", "Agents 7", "Alarms 3", "Latest", "q quit · ? keys"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q at 80x24:\n%s", want, text)
		}
	}
	// The section the cursor is in grows: on the agents, all five show.
	press(m, "tab")
	text = plain(m)
	if !strings.Contains(text, "code-reviewer-1    code-reviewer") || !strings.Contains(text, "coder-6") {
		t.Errorf("the agents do not all show when they have the cursor (roles as code-reviewer):\n%s", text)
	}
}

// The cursor moves with the keys, the task pane scrolls with it, and
// enter opens the task under it.
func TestCursorAndScroll(t *testing.T) {
	m := testModel(teamBoard(40), 80, 24)
	press(m, "j", "down")
	if got := m.selectedTask().ID; got != "v-1" {
		t.Errorf("two down from b-1: %s, want v-1", got)
	}
	press(m, "k")
	if got := m.selectedTask().ID; got != "r-1" {
		t.Errorf("one up: %s, want r-1", got)
	}
	press(m, "end")
	if got := m.selectedTask().ID; got != "m-1" {
		t.Errorf("end: %s, want m-1, the last in attention order", got)
	}
	text := plain(m)
	if !strings.Contains(text, "> m-1 ") || !strings.Contains(text, "MERGED 1") || !strings.Contains(text, "above") {
		t.Errorf("the pane does not scroll to the last task:\n%s", text)
	}
	press(m, "home", "pgdown")
	if i := m.cursor[secTasks]; i < 3 {
		t.Errorf("pgdn moved the cursor to %d", i)
	}
	sel := m.selectedTask().ID
	if !strings.Contains(plain(m), "> "+sel+" ") {
		t.Errorf("the selected task %s is not on the screen:\n%s", sel, plain(m))
	}
	press(m, "home")
	press(m, "enter")
	if m.screen != scrDetail || m.detail == nil || m.detail.id != "b-1" {
		t.Fatalf("enter did not open b-1: screen %d", m.screen)
	}
	press(m, "esc")
	if m.screen != scrBoard {
		t.Errorf("esc does not go back to the board")
	}
}

// / filters the tasks as the text is typed; s shows one status group;
// a task waiting on an unmerged one says so and is not ready.
func TestFilterGroupsAndWaits(t *testing.T) {
	m := testModel(teamBoard(40), 100, 70)
	if text := plain(m); !strings.Contains(text, "w-1") || !strings.Contains(text, "waits on Retry PUT calls (CLAIMED)") {
		t.Errorf("w-1 does not say it waits on c-1 (m-1 is merged):\n%s", text)
	}
	press(m, "/", "P", "O", "S", "T")
	if len(m.rows.tasks) != 1 || m.rows.tasks[0].ID != "w-1" {
		t.Errorf("filter POST: %d tasks", len(m.rows.tasks))
	}
	press(m, "backspace", "backspace", "backspace", "U", "T", "enter")
	if m.filter != "PUT" || len(m.rows.tasks) != 1 || m.rows.tasks[0].ID != "c-1" {
		t.Errorf("filter %q: %d tasks", m.filter, len(m.rows.tasks))
	}
	press(m, "esc")
	if m.filter != "" || len(m.rows.tasks) != 47 {
		t.Errorf("esc leaves filter %q and %d tasks", m.filter, len(m.rows.tasks))
	}
	press(m, "s")
	if m.group != groupReady || len(m.rows.tasks) != 40 {
		t.Errorf("s: group %q, %d tasks; want ready, the 40 without a dependency", m.group, len(m.rows.tasks))
	}
	if text := plain(m); !strings.Contains(text, "showing ready") {
		t.Errorf("the group shown is not named:\n%s", text)
	}
	press(m, "s")
	if m.group != string(contracts.Blocked) || len(m.rows.tasks) != 1 {
		t.Errorf("s again: group %q, %d tasks", m.group, len(m.rows.tasks))
	}
}

// The destructive levers and the pause ask first: n, or any key but y,
// leaves the board as it is.
func TestLeversAskFirst(t *testing.T) {
	m := testModel(teamBoard(3), 100, 30)
	if cmd := press(m, "p"); cmd != nil || m.prompt == nil || m.prompt.kind != askConfirm {
		t.Fatalf("p pulled the lever without asking")
	}
	if !strings.Contains(plain(m), "pause the team? y/n") {
		t.Errorf("the question is not on the screen:\n%s", plain(m))
	}
	if cmd := press(m, "n"); cmd != nil || m.prompt != nil {
		t.Errorf("n pulled the lever")
	}
	if !strings.Contains(plain(m), "not done: pause the team") {
		t.Errorf("a lever not pulled does not say so:\n%s", plain(m))
	}
	press(m, "p")
	if cmd := press(m, "y"); cmd == nil {
		t.Errorf("y did not pull the lever")
	}
	// Release on a lease still running says it forces it.
	press(m, "j", "j", "j", "j")
	press(m, "x")
	if m.prompt == nil || !strings.Contains(m.prompt.label, "release c-1 from its coder coder-2 (its lease has 20m0s left: by force)? y/n") {
		t.Errorf("release asks %+v", m.prompt)
	}
	press(m, "esc")
	for _, k := range []string{"u", "A"} {
		press(m, k)
		if m.prompt == nil || m.prompt.kind != askConfirm {
			t.Errorf("%s does not ask first", k)
		}
		press(m, "n")
	}
	// A note is typed, for the task under the cursor.
	press(m, "n")
	if m.prompt == nil || m.prompt.label != "note for c-1: " {
		t.Fatalf("n asks %+v", m.prompt)
	}
	for _, r := range "use 3 retries" {
		press(m, string(r))
	}
	if !strings.Contains(plain(m), "note for c-1: use 3 retries") {
		t.Errorf("the note is not shown as typed:\n%s", plain(m))
	}
	if cmd := press(m, "enter"); cmd == nil {
		t.Errorf("enter did not leave the note")
	}
}

// PAUSED, CHECKPOINT and ABORTED show in a banner, in words.
func TestBanner(t *testing.T) {
	b := teamBoard(3)
	m := testModel(b, 100, 30)
	if strings.Contains(plain(m), "R resumes") {
		t.Errorf("a running team has a banner")
	}
	for mode, want := range map[string]string{
		contracts.ModePaused:     " PAUSED: supervisors start no agent · by Ada since 09:58:00Z: lunch · R resumes",
		contracts.ModeCheckpoint: " CHECKPOINT: the team waits for a human · by Ada since 09:58:00Z: lunch · R resumes",
		contracts.ModeAborted:    " ABORTED: supervisors kill their agents and exit · by Ada since 09:58:00Z: lunch · R resumes",
	} {
		b.Mode = mode
		b.Switches = []contracts.Switch{{Mode: mode, Source: "state", By: "Ada", Since: testNow.Add(-2 * time.Minute), Reason: "lunch"}}
		lines := strings.Split(plain(m), "\n")
		if lines[1] != want+" " {
			t.Errorf("%s: banner %q, want %q", mode, lines[1], want)
		}
		if !strings.Contains(m.render(), "\x1b[") {
			t.Errorf("%s: the banner has no colour", mode)
		}
	}
}

// A key press on a board of 10,000 tasks formats only the rows that fit.
func BenchmarkKeyPress10000(b *testing.B) {
	m := testModel(teamBoard(10000), 120, 40)
	b.ResetTimer()
	for b.Loop() {
		press(m, "j")
		_ = m.render()
	}
}

// Typing a filter on a board of 10,000 tasks filters them anew per key.
func BenchmarkFilterKey10000(b *testing.B) {
	m := testModel(teamBoard(10000), 120, 40)
	press(m, "/")
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			press(m, "9")
		} else {
			press(m, "backspace")
		}
		_ = m.render()
	}
}

// A board read anew (the state moved) keeps the cursor on the task it
// was on, wherever that task now sorts.
func TestReloadKeepsTheCursor(t *testing.T) {
	m := testModel(teamBoard(5), 100, 40)
	press(m, "/", "3", "enter", "esc")
	press(m, "end")
	if got := m.selectedTask().ID; got != "m-1" {
		t.Fatalf("end: %s", got)
	}
	press(m, "home", "j", "j", "j", "j", "j", "j")
	want := m.selectedTask().ID
	b := teamBoard(5)
	b.Tasks = append(b.Tasks[:1], b.Tasks[2:]...) // r-1 is gone
	m.Update(loadedMsg{board: b})
	if got := m.selectedTask().ID; got != want {
		t.Errorf("after a reload the cursor is on %s, want %s", got, want)
	}
}

// A wide window shows the selected task's detail beside the board, read
// once the cursor rests on it; a cursor that moved on reads no detail of
// the task it left.
func TestSidePane(t *testing.T) {
	m := testModel(teamBoard(5), 160, 40)
	if cmd := m.preview(); cmd == nil {
		t.Fatalf("no detail asked for the side pane")
	}
	press(m, "j")
	m.Update(previewMsg{id: "b-1"})
	if m.detail != nil {
		t.Errorf("the detail of b-1 was read after the cursor left it")
	}
	m.Update(previewMsg{id: "r-1"})
	if m.detail == nil || m.detail.id != "r-1" {
		t.Fatalf("the detail of r-1 was not asked for")
	}
	m.Update(detailMsg{d: &detail{id: "r-1", task: &contracts.Task{ID: "r-1", Status: contracts.Rejected, Priority: 3,
		Description: "Retry OPTIONS calls", RejectionReason: "no test"}}})
	text := plain(m)
	if !strings.Contains(text, "│r-1  REJECTED  p3") || !strings.Contains(text, "│reason: no test") {
		t.Errorf("the side pane does not show r-1:\n%s", text)
	}
	for _, l := range strings.Split(text, "\n") {
		if ansi.StringWidth(l) > 160 {
			t.Errorf("a line of %d columns", ansi.StringWidth(l))
		}
	}
	// At 80 columns there is no side pane.
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if strings.Contains(plain(m), "│") {
		t.Errorf("a side pane at 80 columns:\n%s", plain(m))
	}
}

// The ready group is what ops says a coder could claim now, in the order
// a claim takes them.
func TestReadyInClaimOrder(t *testing.T) {
	m := testModel(teamBoard(5), 100, 40)
	m.setBoard(teamBoard(5), nil, []string{"u-3", "u-1", "gone"})
	press(m, "s")
	if m.group != groupReady || len(m.rows.tasks) != 2 || m.rows.tasks[0].ID != "u-3" || m.rows.tasks[1].ID != "u-1" {
		t.Fatalf("ready: %d tasks, want u-3 then u-1", len(m.rows.tasks))
	}
	text := plain(m)
	if !strings.Contains(text, "READY, in claim order: 2\n> u-3 ") {
		t.Errorf("the ready group:\n%s", text)
	}
}

// The merge queue shows as status words it: the batch under test, what
// merges next, what waits for a dependency, what the queue failed and why.
func TestQueue(t *testing.T) {
	b := teamBoard(3)
	m := testModel(b, 100, 60)
	if strings.Contains(plain(m), "Merge queue") {
		t.Errorf("an empty queue shows")
	}
	b.Queue = &ops.QueueView{Batch: []string{"a-1", "a-2"}, Testing: []string{"a-1"}, Since: "2026-01-17T09:59:00Z",
		Waiting: []string{"a-3"}, Blocked: []ops.QueueBlocked{{ID: "a-4", Until: []string{"c-1"}}},
		Out: []ops.QueueOut{{ID: "a-5", Reason: "go test failed \x1b[2J"}}, MergeBatch: 4}
	text := plain(m)
	for _, want := range []string{
		"\nMerge queue (batches of 4)\n",
		"\n  batch under test: a-1, a-2, testing a-1 (since 2026-01-17T09:59:00Z)\n",
		"\n  next: a-3\n",
		"\n  waiting for a dependency: a-4 (until c-1)\n",
		"\n  failed: a-5: go test failed \\x1b[2J\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q:\n%s", want, text)
		}
	}
	// At 80x24 it keeps a line or two, and says how to see the rest.
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if text := plain(m); !strings.Contains(text, "Merge queue (batches of 4)") || !strings.Contains(text, "more lines (git liza status)") {
		t.Errorf("at 80x24:\n%s", text)
	}
}

// Operations made here that the remote lacks are said, as status says it.
func TestUnpublished(t *testing.T) {
	b := teamBoard(3)
	m := testModel(b, 100, 40)
	b.Unpublished = &ops.Unpublished{Remote: "origin", Operations: 3}
	if text := plain(m); !strings.Contains(text, "\n3 operations not published to origin: git liza sync origin\n") {
		t.Errorf("no unpublished line:\n%s", text)
	}
}
