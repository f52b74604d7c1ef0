package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

func (m *model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "git liza board"
	return v
}

var (
	titleStyle   = lipgloss.NewStyle().Bold(true).Reverse(true)
	headStyle    = lipgloss.NewStyle().Bold(true)
	dimStyle     = lipgloss.NewStyle().Faint(true)
	alarmStyle   = lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Bold(true)
	cursorStyle  = lipgloss.NewStyle().Reverse(true)
	statusStyles = map[contracts.Status]lipgloss.Style{
		contracts.Blocked:           lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Bold(true),
		contracts.IntegrationFailed: lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Bold(true),
		contracts.Rejected:          lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		contracts.ReadyForReview:    lipgloss.NewStyle().Foreground(lipgloss.Color("6")),
		contracts.Approved:          lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
		contracts.Claimed:           lipgloss.NewStyle().Foreground(lipgloss.Color("4")),
		contracts.Merged:            lipgloss.NewStyle().Foreground(lipgloss.Color("2")).Faint(true),
	}
	// The control state's banners: a colour and the mode's word, so that
	// the banner reads on a terminal without colour too.
	bannerStyles = map[string]lipgloss.Style{
		contracts.ModePaused:     lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("0")).Background(lipgloss.Color("3")),
		contracts.ModeCheckpoint: lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("0")).Background(lipgloss.Color("6")),
		contracts.ModeAborted:    lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("15")).Background(lipgloss.Color("1")),
	}
)

// p makes a text from the board printable before it is styled: a
// description, a reason, an alarm quoting one, a name from a crafted
// state, a line of a session. Lip Gloss and the truncation keep escape
// sequences as they find them, so one written raw by an agent would reach
// the terminal.
var p = contracts.Printable

// render lays the screen out in the window. Every line is cut to the
// width, never wrapped.
func (m *model) render() string {
	w, h := m.size()
	if m.board == nil {
		top := []string{titleStyle.Render(" git liza board ")}
		switch {
		case m.err != nil:
			top = append(top, "", alarmStyle.Render(p(m.err.Error())))
		default:
			top = append(top, "", "reading the blackboard…")
		}
		return fitLines(append(top, m.footer()), w, h)
	}
	if m.help {
		return fitLines(m.helpLines(), w, h)
	}
	if m.rowsBoard != m.board {
		m.refilter()
	}
	switch m.screen {
	case scrDetail, scrLog:
		return m.renderDetail(w, h)
	}
	b := m.board
	top := []string{titleStyle.Render(fmt.Sprintf(" git liza board  %s [%s] ", p(b.Goal), p(b.GoalStatus)))}
	top = append(top, m.banner()...)
	top = append(top, fmt.Sprintf("%s [%s]  mode %s  integration %s", p(b.Sprint), p(b.SprintStatus), p(b.Mode), p(b.IntegrationBranch)))
	if b.Spend != nil {
		top = append(top, b.Spend.Line())
	}
	top = append(top, headStyle.Render(countsLine(b)))
	if u := b.Unpublished; u != nil {
		// As status says it: operations made here that the remote lacks.
		line := contracts.Plural(u.Operations, "operation") + " not published"
		if b.Remote != nil {
			line += ": git liza sync"
		} else {
			line += " to " + p(u.Remote) + ": git liza sync " + p(u.Remote)
		}
		top = append(top, alarmStyle.Render(line))
	}
	if f := m.filterText(); f != "" {
		top = append(top, f)
	}
	bottom := []string{m.footer()}
	if s := m.statusLine(); s != "" {
		bottom = append([]string{s}, bottom...)
	}
	n := max(h-len(top)-len(bottom), 1)
	mid := m.sections(n)
	if m.wide() {
		lw := max(90, w*11/20)
		mid = beside(mid, m.sidePane(n, w-lw-1), lw, w-lw-1)
	}
	return fitLines(append(append(top, mid...), bottom...), w, h)
}

func (m *model) size() (int, int) {
	w, h := m.width, m.height
	if w <= 0 {
		w = 80
	}
	if h <= 0 {
		h = 24
	}
	return w, h
}

// banner is the control state when the team does not run as usual:
// PAUSED, CHECKPOINT or ABORTED, with who set it, when and why.
func (m *model) banner() []string {
	mode := m.board.Mode
	style, ok := bannerStyles[mode]
	if !ok {
		return nil
	}
	what := map[string]string{
		contracts.ModePaused:     "supervisors start no agent",
		contracts.ModeCheckpoint: "the team waits for a human",
		contracts.ModeAborted:    "supervisors kill their agents and exit",
	}[mode]
	text := " " + mode + ": " + what
	for _, sw := range m.board.Switches {
		if sw.Mode != mode {
			continue
		}
		if sw.By != "" {
			text += " · by " + p(sw.By)
		}
		if !sw.Since.IsZero() {
			text += " since " + sw.Since.UTC().Format("15:04:05Z")
		}
		if sw.Source != "state" && sw.Source != "" {
			text += " (" + p(sw.Source) + ")"
		}
		if sw.Reason != "" {
			text += ": " + p(contracts.OneLine(sw.Reason))
		}
		break
	}
	text += " · R resumes "
	return []string{style.Render(text)}
}

func (m *model) filterText() string {
	var parts []string
	if m.group != "" {
		parts = append(parts, "showing "+m.group)
	}
	if m.filter != "" {
		parts = append(parts, "filter "+fmt.Sprintf("%q", p(m.filter)))
	}
	if len(parts) == 0 {
		return ""
	}
	return dimStyle.Render(fmt.Sprintf("%s: %d tasks (esc shows all)", strings.Join(parts, ", "), len(m.rows.tasks)))
}

// statusLine is the prompt being answered, or the last lever's outcome.
func (m *model) statusLine() string {
	if q := m.prompt; q != nil {
		return headStyle.Render(p(q.label)) + p(string(q.text)) + "▏"
	}
	if m.message == "" {
		return ""
	}
	if m.failed {
		return alarmStyle.Render(p(m.message))
	}
	return p(m.message)
}

// sections shares n lines between the tasks, the agents, the alarms and
// the latest operations: each shows a few lines, the one the cursor is in
// grows to what is left.
func (m *model) sections(n int) []string {
	b := m.board
	queue := m.queueLines()
	need := map[string]int{"tasks": len(m.rows.lines), "agents": 0, "alarms": 0, "queue": len(queue), "latest": 0}
	if len(b.Agents) > 0 {
		need["agents"] = 1 + len(b.Agents)
	}
	if len(b.Alarms) > 0 {
		need["alarms"] = 1 + len(b.Alarms)
	}
	if len(m.log) > 0 {
		need["latest"] = 1 + len(m.log)
	}
	if need["tasks"] == 0 {
		need["tasks"] = 1
	}
	focus := "tasks"
	if m.focus == secAgents {
		focus = "agents"
	}
	// What each section shows when it is not the one that grows, and the
	// order in which a small window takes lines from them.
	small := map[string]int{"tasks": max(4, n/3), "agents": 3, "alarms": 2, "queue": 2, "latest": 2}
	if n >= 30 {
		small["agents"], small["alarms"], small["queue"], small["latest"] = 5, 4, 4, 4
	}
	give := map[string]int{}
	used := 0
	for _, s := range []string{"tasks", "agents", "alarms", "queue", "latest"} {
		if s != focus {
			give[s] = min(need[s], small[s])
			used += give[s]
		}
	}
	for _, s := range []string{"latest", "queue", "alarms", "agents", "tasks"} {
		for s != focus && give[s] > 0 && n-used < min(need[focus], 4) {
			give[s]--
			used--
		}
	}
	give[focus] = max(0, min(need[focus], n-used))
	// The rest goes to the tasks, then to the others, as they need it.
	for _, s := range []string{"tasks", "agents", "alarms", "queue", "latest"} {
		if extra := min(need[s]-give[s], n-used-give[focus]); s != focus && extra > 0 {
			give[s] += extra
			used += extra
		}
	}
	var out []string
	out = append(out, m.taskPane(give["tasks"])...)
	out = append(out, m.agentPane(give["agents"])...)
	if k := give["alarms"]; k > 0 {
		out = append(out, headStyle.Render(fmt.Sprintf("Alarms %d", len(b.Alarms))))
		for i := 0; i < k-1 && i < len(b.Alarms); i++ {
			line := "  " + p(b.Alarms[i].Message)
			if i == k-2 && len(b.Alarms) > k-1 {
				line = fmt.Sprintf("  … %d alarms", len(b.Alarms)-i)
			}
			out = append(out, alarmStyle.Render(line))
		}
	}
	if k := give["queue"]; k > 0 {
		if k < len(queue) {
			queue = append(queue[:k-1], dimStyle.Render(fmt.Sprintf("  … %d more lines (git liza status)", len(queue)-k+1)))
		}
		out = append(out, queue[:k]...)
	}
	if k := give["latest"]; k > 0 {
		out = append(out, headStyle.Render("Latest"))
		for i := 0; i < k-1 && i < len(m.log); i++ {
			e := m.log[i]
			line := fmt.Sprintf("  %s %-16s %s", p(e.Time[min(len(e.Time), 11):]), p(e.Agent), p(e.Subject))
			if e.Reason != "" {
				line += ": " + p(contracts.OneLine(e.Reason))
			}
			out = append(out, line)
		}
	}
	for len(out) < n {
		out = append(out, "")
	}
	return out[:n]
}

// sectionHeight is about how many lines a section shows, for pgup/pgdn.
func (m *model) sectionHeight(s section) int {
	_, h := m.size()
	return max(1, h-10)
}

// window is the part [start, end) of total lines that n lines show with
// the line cur in it, kept near start (the previous window's start):
// above and below say whether a line of the n goes to "… N above" or
// "… N more".
func window(total, cur, start, n int) (s, e int, above, below bool) {
	if total <= n {
		return 0, total, false, false
	}
	if n < 3 {
		s = max(0, min(cur, total-n))
		return s, s + n, false, false
	}
	if cur < n-1 {
		return 0, n - 1, false, true
	}
	if cur >= total-(n-1) {
		return total - (n - 1), total, true, false
	}
	inner := n - 2
	s = max(1, min(start, cur))
	if cur >= s+inner {
		s = cur - inner + 1
	}
	return s, s + inner, true, true
}

// taskPane shows n lines of the tasks around the cursor: only those
// lines are formatted, whatever the number of tasks.
func (m *model) taskPane(n int) []string {
	if n <= 0 {
		return nil
	}
	r := &m.rows
	if len(r.lines) == 0 {
		msg := "no task"
		if m.filter != "" || m.group != "" {
			msg = "no task matches (esc shows all)"
		}
		return []string{dimStyle.Render("  " + msg)}
	}
	cur := 0
	if c := m.cursor[secTasks]; c < len(r.lineOf) {
		cur = r.lineOf[c]
		// Show the heading of the cursor's status with it.
		if cur > 0 && r.lines[cur-1].task < 0 && cur-1 < m.top[secTasks] {
			m.top[secTasks] = cur - 1
		}
	}
	s, e, above, below := window(len(r.lines), cur, m.top[secTasks], n)
	m.top[secTasks] = s
	now := m.now()
	var out []string
	if above {
		prev := s - 1
		for prev >= 0 && r.lines[prev].task < 0 {
			prev--
		}
		out = append(out, dimStyle.Render(fmt.Sprintf("  … %d above", taskCount(r, prev))))
	}
	for i := s; i < e; i++ {
		l := r.lines[i]
		if l.task < 0 {
			style, ok := statusStyles[l.status]
			if !ok {
				style = lipgloss.NewStyle()
			}
			out = append(out, style.Render(fmt.Sprintf("%s %d", p(string(l.status)), l.count)))
			continue
		}
		out = append(out, m.taskRow(l.task, now))
	}
	if below {
		next := e
		for next < len(r.lines) && r.lines[next].task < 0 {
			next++
		}
		more := 0
		if next < len(r.lines) {
			more = len(r.tasks) - r.lines[next].task
		}
		out = append(out, dimStyle.Render(fmt.Sprintf("  … %d more", more)))
	}
	return out
}

func (m *model) taskRow(i int, now time.Time) string {
	t := m.rows.tasks[i]
	who := t.AssignedTo
	if t.ReviewingBy != "" {
		who += "/" + t.ReviewingBy
	}
	text := t.Description
	if t.Reason != "" {
		text = t.Reason
	}
	if w := m.rows.waits[i]; w != "" {
		text = "waits on " + w
	}
	mark := "  "
	if i == m.cursor[secTasks] && m.focus == secTasks {
		mark = "> "
	}
	row := fmt.Sprintf("%s%-12s p%d %-16s %-12s %s", mark, p(t.ID), t.Priority, p(who), p(t.LeaseText(now)), p(contracts.OneLine(text)))
	if i == m.cursor[secTasks] && m.focus == secTasks {
		return cursorStyle.Render(row)
	}
	return row
}

// agentPane shows n lines of the agents around the cursor.
func (m *model) agentPane(n int) []string {
	b := m.board
	if n <= 0 || len(b.Agents) == 0 {
		return nil
	}
	out := []string{headStyle.Render(fmt.Sprintf("Agents %d", len(b.Agents)))}
	s, e, above, below := window(len(b.Agents), m.cursor[secAgents], m.top[secAgents], n-1)
	m.top[secAgents] = s
	now := m.now()
	if above {
		out = append(out, dimStyle.Render(fmt.Sprintf("  … %d above", s)))
	}
	for i := s; i < e; i++ {
		a := b.Agents[i]
		mark := "  "
		if i == m.cursor[secAgents] && m.focus == secAgents {
			mark = "> "
		}
		row := fmt.Sprintf("%s%-18s %-14s %-9s %-12s %s", mark, p(a.ID), p(contracts.Role(a.Role).IDPrefix()), p(a.Status), p(a.CurrentTask), ops.LeaseLeft(a.LeaseExpires, now))
		if i == m.cursor[secAgents] && m.focus == secAgents {
			row = cursorStyle.Render(row)
		}
		out = append(out, row)
	}
	if below {
		out = append(out, dimStyle.Render(fmt.Sprintf("  … %d more", len(b.Agents)-e)))
	}
	return out
}

func countsLine(b *ops.Board) string {
	parts := []string{fmt.Sprintf("Tasks %d", b.Total)}
	for _, s := range contracts.AttentionOrder {
		if c := b.Counts[s]; c > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", s, c))
		}
	}
	if b.Archived > 0 {
		parts = append(parts, fmt.Sprintf("archived %d", b.Archived))
	}
	return strings.Join(parts, "  ")
}

// keysLine is the footer's list of keys, the most used first.
const keysLine = "q quit · ? keys · ↑↓ move · tab agents · enter open · / filter · s group · p pause · R resume · n note · u unblock · x release · A abort"

func (m *model) footer() string {
	s := keysLine
	if m.screen != scrBoard {
		s = "esc back · ↑↓ scroll · q quit · ? keys · p pause · R resume · n note · u unblock · x release · A abort"
	}
	if m.board != nil {
		s += " · as of " + p(m.board.Now)
		if r := m.board.Remote; r != nil && r.FetchedAt != "" {
			s += " · " + p(r.Name) + " fetched " + p(r.FetchedAt)
		}
	}
	if !m.tip.IsZero() {
		s += " · state " + m.tip.String()[:12]
	}
	if m.err != nil && m.board != nil {
		s += " · " + p(m.err.Error())
	}
	return dimStyle.Render(s)
}

// fitLines cuts each line to width columns (escape sequences kept), keeps
// at most height lines and joins them.
func fitLines(lines []string, width, height int) string {
	if len(lines) > height {
		lines = lines[:height]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, width, "…")
	}
	return strings.Join(lines, "\n")
}

// taskCount is how many tasks the lines up to i (included) show.
func taskCount(r *rows, i int) int {
	if i < 0 {
		return 0
	}
	return r.lines[i].task + 1
}
