package tui

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/transcript"
)

// detail is what the board shows of one task, read when it is opened and
// again when the state moves.
type detail struct {
	id       string
	loading  bool
	task     *contracts.Task
	err      error
	diff     []string // git diff --stat base..branch, bounded
	diffErr  string
	sessions []transcript.Session // the task's, oldest first, the last few
	session  *transcript.Session  // the newest: the one the tail follows
}

type detailMsg struct{ d *detail }

// Bounds of what the detail reads: it is read on every state move while
// it is open, on boards whose tasks may have touched thousands of files.
const (
	maxDiffLines    = 30
	maxSessionsShow = 8
	diffTimeout     = 5 * time.Second
)

// sessionsDir is where supervisors write session logs (git liza logs reads
// them there).
func (m *model) sessionsDir() string {
	return filepath.Join(m.o.Service.Repo.CommonDir, "liza", "logs", "sessions")
}

// loadDetail reads a task whole, its diff stat and its sessions.
func (m *model) loadDetail(id string) tea.Cmd {
	if m.o.Service == nil {
		return nil
	}
	svc, mu, ctx, dir := m.o.Service, m.svc, m.ctx, m.sessionsDir()
	return func() tea.Msg {
		d := &detail{id: id}
		mu.Lock()
		d.task, d.err = svc.Task(ctx, "", id)
		mu.Unlock()
		// The diff stat runs git on the coder's branch (up to diffTimeout):
		// outside the lock, so that a lever pulled meanwhile does not wait
		// for it. It reads the repository only, not the Service.
		if d.task != nil {
			d.diff, d.diffErr = diffStat(ctx, svc, d.task)
		}
		all, err := transcript.List(dir)
		if err != nil && d.err == nil {
			d.err = err
		}
		for _, s := range all {
			if s.Header.Task == id {
				d.sessions = append(d.sessions, s)
			}
		}
		if n := len(d.sessions); n > maxSessionsShow {
			d.sessions = d.sessions[n-maxSessionsShow:]
		}
		for i := range d.sessions {
			_ = d.sessions[i].Load() // a log that cannot be read shows what its header says
		}
		if n := len(d.sessions); n > 0 {
			s := d.sessions[n-1]
			d.session = &s
		}
		return detailMsg{d: d}
	}
}

// hexCommit is a full commit id: the only base the diff is given, so that
// a crafted state cannot pass git an option.
var hexCommit = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`) })

// diffStat is git diff --stat from the task's base to its branch (or, the
// branch gone, to the commit under review), cut to maxDiffLines lines.
func diffStat(ctx context.Context, svc *ops.Service, t *contracts.Task) ([]string, string) {
	if t.BaseCommit == "" {
		return nil, "no base commit: no worktree was made for the task yet"
	}
	if !hexCommit().MatchString(t.BaseCommit) || contracts.ValidTaskID(t.ID) != nil {
		return nil, "the base commit is not a commit id"
	}
	// The task's branch as package worktree names it (worktree.Branch).
	tip := "refs/heads/task/" + t.ID
	if _, ok, err := svc.Repo.ReadRef(tip); err != nil || !ok {
		if !hexCommit().MatchString(t.ReviewCommit) {
			return nil, "no branch task/" + t.ID + " here"
		}
		tip = t.ReviewCommit
	}
	ctx, cancel := context.WithTimeout(ctx, diffTimeout)
	defer cancel()
	out, err := svc.Repo.Git(ctx, "diff", "--stat=200", "--no-color", "--no-ext-diff", "--no-textconv", t.BaseCommit, tip, "--")
	if err != nil {
		return nil, "git diff: " + contracts.OneLine(err.Error())
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil, "no change against the base"
	}
	if len(lines) > maxDiffLines {
		// Keep the summary line (the last).
		more := len(lines) - maxDiffLines
		lines = append(lines[:maxDiffLines-1], fmt.Sprintf(" … %d more files", more), lines[len(lines)-1])
	}
	return lines, ""
}

// detailLines lays a task's detail out, one line each, escaped.
func (m *model) detailLines(width int) []string {
	d := m.detail
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if d == nil {
		return nil
	}
	bt := m.boardTask(d.id)
	switch {
	case d.task == nil && d.err != nil:
		return []string{alarmStyle.Render(p(d.err.Error()))}
	case d.task == nil:
		return []string{"reading " + p(d.id) + "…"}
	}
	t := d.task
	now := m.now()
	head := fmt.Sprintf("%s  %s  p%d", p(t.ID), p(string(t.Status)), t.Priority)
	if t.AssignedTo != "" {
		head += "  coder " + p(t.AssignedTo)
	}
	if t.ReviewingBy != "" {
		head += "  reviewer " + p(t.ReviewingBy)
	}
	if bt != nil {
		if l := bt.LeaseText(now); l != "" {
			head += "  " + p(l)
		}
	}
	out = append(out, headStyle.Render(head))
	for l := range strings.SplitSeq(t.Description, "\n") {
		out = append(out, "  "+p(l))
	}
	if len(t.DependsOn) > 0 {
		add("depends on %s", p(strings.Join(t.DependsOn, ", ")))
	}
	if i := m.rowOf(t.ID); i >= 0 && m.rows.waits[i] != "" {
		add("waits on %s", p(m.rows.waits[i]))
	}
	if r := contracts.ReasonOf(t); r != "" {
		out = append(out, alarmStyle.Render("reason: "+p(contracts.OneLine(r))))
	}
	for _, q := range t.BlockedQuestions {
		add("  question: %s", p(contracts.OneLine(q)))
	}
	for _, a := range t.Attempted {
		add("  attempted: %s", p(contracts.OneLine(a)))
	}
	if t.Worktree != "" {
		add("worktree %s", p(t.Worktree))
	}
	if t.BaseCommit != "" {
		add("base %s  branch task/%s", p(short(t.BaseCommit)), p(t.ID))
	}
	if cp := checkpointOf(t); cp != nil {
		out = append(out, headStyle.Render("Checkpoint"))
		add("  intent: %s", p(contracts.OneLine(cp.Intent)))
		if cp.Validation != "" {
			add("  validation: %s", p(contracts.OneLine(cp.Validation)))
		}
		if len(cp.FilesToModify) > 0 {
			add("  files: %s", p(strings.Join(cp.FilesToModify, ", ")))
		}
	}
	out = append(out, headStyle.Render("Diff against the base"))
	if d.diffErr != "" {
		out = append(out, dimStyle.Render("  "+p(d.diffErr)))
	}
	for _, l := range d.diff {
		out = append(out, "  "+p(l))
	}
	out = append(out, headStyle.Render(fmt.Sprintf("Sessions %d", len(d.sessions))))
	for _, s := range d.sessions {
		h := s.Header
		end := "open"
		if s.End != nil {
			end = s.End.Outcome
		}
		add("  %s %s session %d, %s, %s, %d steps", p(h.Started.UTC().Format("01-02 15:04:05")), p(h.Agent), h.Session, p(h.CLI), p(end), s.Summary.Steps)
	}
	out = append(out, headStyle.Render("History"))
	for _, e := range t.History {
		l := fmt.Sprintf("  %s %s %s", p(e.Time), p(contracts.ActorName(e.Agent)), p(e.Event))
		if e.From != "" || e.To != "" {
			l += " " + p(e.From) + "→" + p(e.To)
		}
		if e.Reason != "" {
			l += ": " + p(contracts.OneLine(e.Reason))
		}
		out = append(out, l)
	}
	return out
}

// checkpointOf is the task's latest pre-execution checkpoint.
func checkpointOf(t *contracts.Task) *contracts.Checkpoint {
	for i := len(t.History) - 1; i >= 0; i-- {
		if cp := t.History[i].Checkpoint; cp != nil {
			return cp
		}
	}
	return nil
}

func (m *model) boardTask(id string) *ops.BoardTask {
	if i := m.rowOf(id); i >= 0 {
		return m.rows.tasks[i]
	}
	return nil
}

func (m *model) rowOf(id string) int {
	for i := range m.rows.tasks {
		if m.rows.tasks[i].ID == id {
			return i
		}
	}
	return -1
}

func (m *model) now() time.Time {
	if m.board != nil {
		if t, err := contracts.ParseTime(m.board.Now); err == nil {
			return t
		}
	}
	return time.Now()
}

func short(h string) string { return h[:min(len(h), 12)] }
