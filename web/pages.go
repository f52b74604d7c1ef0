package web

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/transcript"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pages are the parsed templates, one set per page (each defines "main"
// inside the shared layout).
type pages struct{ t map[string]*template.Template }

var funcs = template.FuncMap{
	// p shows an agent's text on one line, escape sequences spelled out;
	// html/template then escapes it for HTML.
	"p":    contracts.Printable,
	"text": contracts.PrintableText,
	"short": func(s string) string {
		return s[:min(12, len(s))]
	},
	"lower": func(s contracts.Status) string { return strings.ToLower(string(s)) },
	"lease": func(t ops.BoardTask, now string) string {
		at, _ := contracts.ParseTime(now)
		return t.LeaseText(at)
	},
	"left": func(expires, now string) string {
		at, _ := contracts.ParseTime(now)
		return ops.LeaseLeft(expires, at)
	},
	"long":    ops.IsLong,
	"diff":    ops.WordDiff,
	"oneline": func(s string) string { return contracts.Printable(contracts.OneLine(s)) },
	"join":    strings.Join,
	// waits is "a (CLAIMED), b (unknown)".
	"waits": func(ws []ops.Waiting) string {
		parts := make([]string, len(ws))
		for i, w := range ws {
			parts[i] = contracts.Printable(w.ID) + " (" + string(w.Status) + ")"
		}
		return strings.Join(parts, ", ")
	},
}

func loadPages() (*pages, error) {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	p := &pages{t: map[string]*template.Template{}}
	for _, n := range names {
		base := strings.TrimSuffix(filepath.Base(n), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return nil, err
		}
		p.t[base] = t
	}
	return p, nil
}

// view is what every page's layout shows: the title, the tip it was read
// at, and the control state as a banner.
type view struct {
	Title string
	Path  string
	Tip   string
	Now   string
	Mode  string // RUNNING, PAUSED, ABORTED, CHECKPOINT
	// Switches are the kill switches on: who set each, when, why.
	Switches []contracts.Switch
	Remote   *ops.BoardRemote
	Page     any
}

// render executes a page into a buffer first, so that a failure is an
// error page rather than half a page.
func (s *Server) render(w http.ResponseWriter, code int, name string, page any) {
	if html, ok := s.execute(w, name, page); ok {
		writeHTML(w, code, html)
	}
}

// execute renders a page, or answers with an error.
func (s *Server) execute(w http.ResponseWriter, name string, page any) ([]byte, bool) {
	t := s.pages.t[name]
	v, ok := page.(view)
	if !ok {
		v = view{Title: name, Page: page}
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		http.Error(w, "rendering the page: "+contracts.Printable(err.Error()), http.StatusInternalServerError)
		return nil, false
	}
	return buf.Bytes(), true
}

func writeHTML(w http.ResponseWriter, code int, html []byte) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(html)
}

// fail shows an operation's error as a page.
func (s *Server) fail(w http.ResponseWriter, err error) {
	s.render(w, httpStatus(err), "result", resultPage{Message: contracts.Printable(err.Error()), Failed: true, Back: "/"})
}

// frame fills the layout's part of a page from the board. The caller
// holds s.mu.
func (s *Server) frame(title string, r *http.Request, b *ops.Board) view {
	// The tip read before the board: a page may show a newer board than
	// its tip says (and redraws once more), never an older one.
	tip := s.cache.tip
	v := view{Title: title, Path: r.URL.RequestURI(), Now: b.Now, Mode: b.Mode, Remote: b.Remote}
	if !tip.IsZero() {
		v.Tip = tip.String()
	}
	v.Switches = b.Switches
	return v
}

// taskData is a task's page.
type taskData struct {
	Task       *contracts.Task
	Checkpoint *contracts.HistoryEvent
	Diff       []refstore.FileChange
	DiffSum    diffSum
	DiffRange  string
	DiffErr    string
	Sessions   []transcript.Session
	WaitsOn    []ops.Waiting
}

func (s *Server) taskPage(w http.ResponseWriter, r *http.Request) {
	s.page(w, r, "task", func(b *ops.Board) (string, any, error) {
		return s.taskData(r, b)
	})
}

func (s *Server) taskData(r *http.Request, b *ops.Board) (string, any, error) {
	t, err := s.svc.Task(r.Context(), "", r.PathValue("id"))
	if err != nil {
		return "", nil, err
	}
	d := taskData{Task: t, Checkpoint: contracts.CurrentCheckpoint(t)}
	for _, bt := range b.Tasks {
		if bt.ID == t.ID {
			d.WaitsOn = bt.WaitsOn
		}
	}
	d.Diff, d.DiffRange, d.DiffErr = s.taskDiff(r, t)
	d.Diff, d.DiffSum = boundDiff(d.Diff)
	if sessions, err := transcript.List(s.sessionsDir()); err == nil {
		for _, ses := range sessions {
			if ses.Header.Task == t.ID {
				d.Sessions = append(d.Sessions, ses)
			}
		}
	}
	return "task " + t.ID, d, nil
}

// maxDiffFiles bounds the changed files a task's page names: a branch
// that changes thousands (generated or vendored files) made a page of
// megabytes, which every browser on the board loaded again on each change.
const maxDiffFiles = 500

// diffSum is the whole of a task's change: its files and lines, and how
// many files its page does not name.
type diffSum struct {
	Files, Added, Removed, More int
}

// boundDiff is the first maxDiffFiles of changes and the sum of them all.
func boundDiff(changes []refstore.FileChange) ([]refstore.FileChange, diffSum) {
	sum := diffSum{Files: len(changes)}
	for _, c := range changes {
		sum.Added += max(c.Added, 0)
		sum.Removed += max(c.Removed, 0)
	}
	if len(changes) > maxDiffFiles {
		sum.More = len(changes) - maxDiffFiles
		changes = changes[:maxDiffFiles]
	}
	return changes, sum
}

// taskDiff is the files a task's work changes against its base (see
// taskRange).
func (s *Server) taskDiff(r *http.Request, t *contracts.Task) ([]refstore.FileChange, string, string) {
	base, tip, why := s.taskRange(r, t)
	if why != "" || base.IsZero() {
		return nil, "", why
	}
	changes, err := s.svc.Repo.DiffFiles(r.Context(), base, tip)
	if err != nil {
		return nil, "", err.Error()
	}
	return changes, base.String()[:12] + ".." + tip.String()[:12], ""
}

// taskRange is a task's work: from its base to the commit merged or under
// review, else to the tip of its branch; why says what is missing here
// (both zero and no why: no work yet).
func (s *Server) taskRange(r *http.Request, t *contracts.Task) (base, tip refstore.Hash, why string) {
	if t.BaseCommit == "" {
		return base, tip, ""
	}
	to := t.MergeCommit
	if to == "" {
		to = t.ReviewCommit
	}
	if to == "" {
		to = "refs/heads/task/" + t.ID
	}
	ctx := r.Context()
	base, err := s.svc.Repo.ResolveCommit(ctx, t.BaseCommit)
	if err != nil {
		return base, tip, "its base commit is not in this clone"
	}
	if tip, err = s.svc.Repo.ResolveCommit(ctx, to); err != nil {
		return refstore.Hash{}, tip, "its work is not in this clone (" + to + ")"
	}
	return base, tip, ""
}

// maxPatch bounds the patch a task's diff page shows.
const maxPatch = 512 << 10

// patchData is a task's patch, line by line.
type patchData struct {
	Task  string
	Range string
	Lines []patchLine
	Cut   bool
	Why   string
}

type patchLine struct {
	Class string // "add", "del", "hunk", "file" or ""
	Text  string
}

func (s *Server) diffPage(w http.ResponseWriter, r *http.Request) {
	s.page(w, r, "diff", func(*ops.Board) (string, any, error) {
		return s.patchData(r)
	})
}

func (s *Server) patchData(r *http.Request) (string, any, error) {
	ctx := r.Context()
	t, err := s.svc.Task(ctx, "", r.PathValue("id"))
	if err != nil {
		return "", nil, err
	}
	d := patchData{Task: t.ID}
	base, tip, why := s.taskRange(r, t)
	switch {
	case why != "":
		d.Why = why
	case base.IsZero():
		d.Why = "no work yet"
	default:
		d.Range = base.String()[:12] + ".." + tip.String()[:12]
		// No external diff driver or text conversion: what the project's
		// configuration names runs no program here.
		// At most maxPatch bytes are read: git is stopped past them, so
		// that a patch of any size costs the server no more.
		out, cut, err := s.svc.Repo.GitPrefix(ctx, maxPatch, "diff", "--no-ext-diff", "--no-textconv", "--no-color", base.String(), tip.String(), "--")
		if err != nil {
			return "", nil, err
		}
		d.Cut = cut
		for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			c := ""
			switch {
			case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "), strings.HasPrefix(l, "diff --git "):
				c = "file"
			case strings.HasPrefix(l, "+"):
				c = "add"
			case strings.HasPrefix(l, "-"):
				c = "del"
			case strings.HasPrefix(l, "@@"):
				c = "hunk"
			}
			d.Lines = append(d.Lines, patchLine{Class: c, Text: contracts.PrintableText(l)})
		}
	}
	return "diff of " + t.ID, d, nil
}

func (s *Server) sessionsDir() string {
	return filepath.Join(s.svc.Repo.CommonDir, "liza", "logs", "sessions")
}

// maxSteps bounds the steps a session's page shows: the last ones.
const maxSteps = 3000

// sessionData is a session's transcript, step by step.
type sessionData struct {
	Task    string
	Session transcript.Session
	Steps   []step
	Skipped int
}

// step is one step of a session as its page shows it: its time, kind and
// one line of at most stepWidth bytes (a step's text may be 64 KiB; a
// long session keeps only what is shown).
type step struct {
	T     time.Time
	Kind  string
	Error bool
	Line  string
}

const stepWidth = 4000

func (s *Server) sessionPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := contracts.ValidTaskID(id); err != nil {
		s.fail(w, err)
		return
	}
	s.page(w, r, "session", func(*ops.Board) (string, any, error) {
		return s.sessionData(id, r.PathValue("n"))
	})
}

// sessionData is the page of task id's session number asked (1 the
// first); what is not a number is no session.
func (s *Server) sessionData(id, asked string) (string, any, error) {
	n, _ := strconv.Atoi(asked)
	sessions, err := transcript.List(s.sessionsDir())
	if err != nil || n < 1 || n > len(sessions) || sessions[n-1].Header.Task != id {
		return "", nil, contracts.Invalidf("task %s has no session %s", id, contracts.Printable(asked))
	}
	d := sessionData{Task: id, Session: sessions[n-1]}
	total := 0
	err = transcript.EachStep(d.Session.Path, func(transcript.Header) {}, func(st transcript.Step) {
		total++
		d.Steps = append(d.Steps, step{T: st.T, Kind: st.Kind, Error: st.Error, Line: transcript.Render(st, stepWidth)})
		if len(d.Steps) > 2*maxSteps {
			d.Steps = slices.Clone(d.Steps[len(d.Steps)-maxSteps:])
		}
	})
	if len(d.Steps) > maxSteps {
		d.Steps = d.Steps[len(d.Steps)-maxSteps:]
	}
	d.Skipped = total - len(d.Steps)
	if err != nil {
		return "", nil, err
	}
	return "session " + strconv.Itoa(n), d, nil
}

// logData is the audit log page.
type logData struct {
	Entries []ops.LogEntry
	Task    string
	Agent   string
	N       int
}

// maxLogChanges bounds the entities each entry of the log page shows
// changed: an import of 50,000 tasks made a log page of 34 MB, read again
// by every browser on it at each move of the state.
const maxLogChanges = 100

func (s *Server) logPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := logData{Task: q.Get("task"), Agent: q.Get("agent"), N: 50}
	if v, err := strconv.Atoi(q.Get("n")); err == nil && v > 0 {
		d.N = min(v, 500)
	}
	s.page(w, r, "log", func(*ops.Board) (string, any, error) {
		var err error
		d.Entries, err = s.svc.Log(r.Context(), ops.LogRequest{Task: d.Task, Agent: d.Agent, Max: d.N, Patch: true, MaxChanges: maxLogChanges})
		return "log", d, err
	})
}

func (s *Server) alarmsPage(w http.ResponseWriter, r *http.Request) {
	s.page(w, r, "alarms", func(b *ops.Board) (string, any, error) { return "alarms", b, nil })
}

// page serves the page of template name: under the server's lock, with
// the board at the tip (every page's frame shows it), fill makes the
// page's title and data; an error from either is the page's failure.
func (s *Server) page(w http.ResponseWriter, r *http.Request, name string, fill func(b *ops.Board) (string, any, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _, err := s.board(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	title, data, err := fill(b)
	if err != nil {
		s.fail(w, err)
		return
	}
	v := s.frame(title, r, b)
	v.Page = data
	s.render(w, http.StatusOK, name, v)
}

// static serves the embedded script and style sheet.
func (s *Server) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	data, err := staticFS.ReadFile("static/" + name)
	if err != nil || strings.Contains(name, "/") {
		http.NotFound(w, r)
		return
	}
	switch {
	case strings.HasSuffix(name, ".js"):
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case strings.HasSuffix(name, ".css"):
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	}
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
}
