package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// The board page lists the first maxSectionTasks tasks of each status (in
// attention order), and says how many more there are with a link to that
// status alone, statusPageTasks a page (/?status=S&page=N). A board of
// 50,000 tasks made a page of 11 MB, which every open browser fetched
// again each time the state moved.
const (
	maxSectionTasks = 200
	statusPageTasks = 500
)

// boardData is the board page: tasks by status (each with what it waits
// on, as ops computes it for status), agents, sprint, alarms and the
// latest operations. Status is the status the page lists alone, if any.
type boardData struct {
	Board    *ops.Board
	Sections []boardSection
	Log      []ops.LogEntry
	Status   contracts.Status
	// Counts are every status's tasks, listed or not, for the page's head.
	Counts []statusCount
}

// statusCount is how many tasks a status has.
type statusCount struct {
	Status contracts.Status
	Total  int
}

// counts are the statuses of sections and their tasks.
func counts(sections []ops.Section) []statusCount {
	out := make([]statusCount, 0, len(sections))
	for _, sec := range sections {
		out = append(out, statusCount{sec.Status, len(sec.Tasks)})
	}
	return out
}

// boardSection is one status's tasks as a page lists them: Tasks, the
// From-th to the To-th (from 1) of Total; Link to the status alone (on the
// board page), Prev and Next to the pages around (on a status's page).
type boardSection struct {
	Status           contracts.Status
	Tasks            []ops.BoardTask
	Total, From      int
	Link, Prev, Next string
}

// To is the number of the last task listed.
func (b boardSection) To() int { return b.From + len(b.Tasks) - 1 }

// More is how many of the status's tasks come after those listed.
func (b boardSection) More() int { return b.Total - b.To() }

func (s *Server) boardPage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, log, err := s.board(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	q := r.URL.Query()
	if q.Has("status") {
		s.statusPage(w, r, b, log, q)
		return
	}
	// Only the plain address is kept: a query makes no other board, and
	// addresses without end must not fill the cache.
	key := r.URL.RequestURI()
	if r.URL.RawQuery != "" {
		key = ""
	}
	if html, ok := s.cache.pages[key]; ok && key != "" {
		writeHTML(w, http.StatusOK, html)
		return
	}
	all := b.Sections()
	d := boardData{Board: b, Log: log, Counts: counts(all)}
	for _, sec := range all {
		bs := boardSection{Status: sec.Status, Tasks: sec.Tasks, Total: len(sec.Tasks), From: 1}
		if len(bs.Tasks) > maxSectionTasks {
			bs.Tasks = bs.Tasks[:maxSectionTasks]
			bs.Link = statusLink(sec.Status, 1)
		}
		d.Sections = append(d.Sections, bs)
	}
	v := s.frame("board", r, b)
	v.Page = d
	if html, ok := s.execute(w, "board", v); ok {
		if key != "" {
			s.cache.pages[key] = html
		}
		writeHTML(w, http.StatusOK, html)
	}
}

// statusPage lists the tasks of one status, a page at a time. The caller
// holds s.mu.
func (s *Server) statusPage(w http.ResponseWriter, r *http.Request, b *ops.Board, log []ops.LogEntry, q url.Values) {
	st := contracts.Status(q.Get("status"))
	if !slices.Contains(contracts.Statuses, st) {
		s.render(w, http.StatusBadRequest, "result", resultPage{Message: fmt.Sprintf("no such status: %q", contracts.Printable(string(st))), Failed: true, Back: "/"})
		return
	}
	n := 1
	if p := q.Get("page"); p != "" {
		var err error
		if n, err = strconv.Atoi(p); err != nil || n < 1 {
			s.render(w, http.StatusBadRequest, "result", resultPage{Message: "page: a number from 1", Failed: true, Back: "/"})
			return
		}
	}
	var tasks []ops.BoardTask
	all := b.Sections()
	for _, sec := range all {
		if sec.Status == st {
			tasks = sec.Tasks
		}
	}
	from := (n - 1) * statusPageTasks
	if from >= len(tasks) && n > 1 {
		s.render(w, http.StatusNotFound, "result", resultPage{Message: fmt.Sprintf("%s has %d tasks: no page %d", st, len(tasks), n), Failed: true, Back: statusLink(st, 1)})
		return
	}
	to := min(from+statusPageTasks, len(tasks))
	bs := boardSection{Status: st, Tasks: tasks[from:to], Total: len(tasks), From: from + 1}
	if n > 1 {
		bs.Prev = statusLink(st, n-1)
	}
	if to < len(tasks) {
		bs.Next = statusLink(st, n+1)
	}
	v := s.frame(string(st), r, b)
	v.Page = boardData{Board: b, Log: log, Sections: []boardSection{bs}, Status: st, Counts: counts(all)}
	s.render(w, http.StatusOK, "board", v)
}

// statusLink is the address of page n of status st's tasks.
func statusLink(st contracts.Status, n int) string {
	if n == 1 {
		return "/?status=" + url.QueryEscape(string(st))
	}
	return fmt.Sprintf("/?status=%s&page=%d", url.QueryEscape(string(st)), n)
}
