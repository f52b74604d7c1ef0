package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// listed is how many tasks a board page lists.
var listedTask = regexp.MustCompile(`<li class="task `)

// A board of thousands of tasks made a board page of megabytes (50,000
// tasks: 11 MB), which every open browser fetched again each time the
// state moved, up to four times a second. The board page lists the first
// tasks of each status, says how many more there are, and links to that
// status alone, a page at a time.
func TestBoardPageBoundsItsSections(t *testing.T) {
	b := newBoard(t, Options{})
	ctx := context.Background()
	extra := maxSectionTasks + statusPageTasks - 50
	for i := range extra {
		task := contracts.Task{ID: fmt.Sprintf("u%04d", i), Description: "do it", SpecRef: "specs/vision.md", DoneWhen: "done",
			Scope: "IN: x", Priority: 3, Status: contracts.Unclaimed}
		if _, err := b.human.AddTask(ctx, ops.AddTaskRequest{Task: task}); err != nil {
			t.Fatal(err)
		}
	}
	unclaimed := extra + 1 // and task b
	page := get(t, b, "/")
	if n := len(listedTask.FindAllString(page, -1)); n != maxSectionTasks+1 {
		t.Errorf("the board page lists %d tasks, want the first %d UNCLAIMED and the one CLAIMED", n, maxSectionTasks)
	}
	for _, want := range []string{
		fmt.Sprintf(`<h2 class="st-unclaimed">UNCLAIMED %d</h2>`, unclaimed),
		fmt.Sprintf(` · UNCLAIMED %d`, unclaimed),
		fmt.Sprintf(`and %d more: <a href="/?status=UNCLAIMED">every UNCLAIMED task</a>`, unclaimed-maxSectionTasks),
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the board page lacks %q", want)
		}
	}
	first := get(t, b, "/?status=UNCLAIMED")
	if n := len(listedTask.FindAllString(first, -1)); n != statusPageTasks {
		t.Errorf("the first page of UNCLAIMED lists %d tasks, want %d", n, statusPageTasks)
	}
	if strings.Contains(first, `id="task-a"`) || !strings.Contains(first, `href="/?status=UNCLAIMED&amp;page=2"`) {
		t.Error("the first page of UNCLAIMED shows another status's task, or no link to the next page")
	}
	if !strings.Contains(first, fmt.Sprintf(` · CLAIMED 1 · UNCLAIMED %d`, unclaimed)) && !strings.Contains(first, fmt.Sprintf(` · UNCLAIMED %d · CLAIMED 1`, unclaimed)) {
		t.Error("the page of one status does not count every status in its head")
	}
	second := get(t, b, "/?status=UNCLAIMED&page=2")
	if n := len(listedTask.FindAllString(second, -1)); n != unclaimed-statusPageTasks {
		t.Errorf("the second page of UNCLAIMED lists %d tasks, want %d", n, unclaimed-statusPageTasks)
	}
	if !strings.Contains(second, fmt.Sprintf("tasks %d to %d of %d", statusPageTasks+1, unclaimed, unclaimed)) {
		t.Error("the second page does not say which tasks it lists")
	}
	for _, bad := range []string{"/?status=BOGUS", "/?status=UNCLAIMED&page=0", "/?status=UNCLAIMED&page=x", "/?status=UNCLAIMED&page=99"} {
		req, _ := http.NewRequest("GET", b.ts.URL+bad, nil)
		if res, body := do(t, req); res.StatusCode != http.StatusNotFound && res.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400 or 404\n%s", bad, res.StatusCode, body)
		}
	}
}

// The log page diffs at most maxLogChanges entities an entry (an import
// of 50,000 tasks made it 34 MB), and says how many more there are.
func TestLogPageBoundsAnEntrysChanges(t *testing.T) {
	b := newBoard(t, Options{})
	entries, err := b.human.Log(context.Background(), ops.LogRequest{Max: 1})
	if err != nil || len(entries) != 1 {
		t.Fatalf("log: %v", err)
	}
	e := entries[0]
	for i := range maxLogChanges {
		e.Changes = append(e.Changes, ops.EntityDiff{Kind: "task", ID: fmt.Sprintf("t%d", i), Change: "added"})
	}
	e.MoreChanges = 49900
	rec := httptest.NewRecorder()
	b.srv.render(rec, http.StatusOK, "log", logData{Entries: []ops.LogEntry{e}, N: 1})
	page := rec.Body.String()
	if !strings.Contains(page, "and 49900 more changed: <code>git liza log -p</code> shows them all") {
		t.Errorf("the log page does not say how many more entities the entry changed:\n%s", page)
	}
}
