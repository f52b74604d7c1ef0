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
	statusStyles = map[contracts.Status]lipgloss.Style{
		contracts.Blocked:           lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Bold(true),
		contracts.IntegrationFailed: lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Bold(true),
		contracts.Rejected:          lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		contracts.ReadyForReview:    lipgloss.NewStyle().Foreground(lipgloss.Color("6")),
		contracts.Approved:          lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
		contracts.Claimed:           lipgloss.NewStyle().Foreground(lipgloss.Color("4")),
		contracts.Merged:            lipgloss.NewStyle().Foreground(lipgloss.Color("2")).Faint(true),
	}
)

// p makes a text from the board printable before it is styled: a
// description, a reason, an alarm quoting one, a name from a crafted
// state. Lip Gloss and the truncation keep escape sequences as they find
// them, so one written raw by an agent would reach the terminal.
var p = contracts.Printable

// render lays the board out in the window: the header, the tasks in
// attention order (as many as fit), agents, alarms, the latest operations
// and a footer. Every line is cut to the width, never wrapped.
func (m *model) render() string {
	w, h := m.width, m.height
	if w <= 0 {
		w = 80
	}
	if h <= 0 {
		h = 24
	}
	var top, bottom []string
	if m.board == nil {
		top = append(top, titleStyle.Render(" git liza board "))
		switch {
		case m.err != nil:
			top = append(top, "", alarmStyle.Render(p(m.err.Error())))
		default:
			top = append(top, "", "reading the blackboard…")
		}
		return fitLines(append(top, m.footer()), w)
	}
	b := m.board
	now, _ := contracts.ParseTime(b.Now)
	top = append(top, titleStyle.Render(fmt.Sprintf(" git liza board  %s [%s] ", p(b.Goal), p(b.GoalStatus))))
	top = append(top, fmt.Sprintf("%s [%s]  mode %s  integration %s", p(b.Sprint), p(b.SprintStatus), p(b.Mode), p(b.IntegrationBranch)))
	if b.Spend != nil {
		top = append(top, b.Spend.Line())
	}
	top = append(top, headStyle.Render(countsLine(b)))

	if len(b.Agents) > 0 {
		bottom = append(bottom, headStyle.Render(fmt.Sprintf("Agents %d", len(b.Agents))))
		for _, a := range b.Agents {
			bottom = append(bottom, fmt.Sprintf("  %-18s %-14s %-9s %-12s %s", p(a.ID), p(a.Role), p(a.Status), p(a.CurrentTask), ops.LeaseLeft(a.LeaseExpires, now)))
		}
	}
	if len(b.Alarms) > 0 {
		bottom = append(bottom, headStyle.Render(fmt.Sprintf("Alarms %d", len(b.Alarms))))
		for _, a := range b.Alarms {
			bottom = append(bottom, alarmStyle.Render("  "+p(a.Message)))
		}
	}
	if len(m.log) > 0 {
		bottom = append(bottom, headStyle.Render("Latest"))
		for _, e := range m.log {
			line := fmt.Sprintf("  %s %-16s %s", p(e.Time[min(len(e.Time), 11):]), p(e.Agent), p(e.Subject))
			if e.Reason != "" {
				line += ": " + p(contracts.OneLine(e.Reason))
			}
			bottom = append(bottom, line)
		}
	}
	bottom = append(bottom, m.footer())

	room := h - len(top) - len(bottom)
	if room < 4 && len(bottom) > 1 {
		// A small window keeps the tasks and the footer.
		keep := max(1, len(bottom)-(4-room))
		bottom = append(bottom[:keep-1], bottom[len(bottom)-1])
		room = h - len(top) - len(bottom)
	}
	tasks := m.taskLines(now, max(room, 1))
	return fitLines(append(append(top, tasks...), bottom...), w)
}

// taskLines lists the tasks in attention order in at most n lines, each
// status with its count; what does not fit is summed up.
func (m *model) taskLines(now time.Time, n int) []string {
	var out []string
	secs := m.board.Sections()
	for i, sec := range secs {
		if len(out) >= n {
			break
		}
		style, ok := statusStyles[sec.Status]
		if !ok {
			style = lipgloss.NewStyle()
		}
		out = append(out, style.Render(fmt.Sprintf("%s %d", p(string(sec.Status)), len(sec.Tasks))))
		if sec.Status.Terminal() {
			continue
		}
		// Leave a line for each status still to come.
		left := n - len(out) - (len(secs) - i - 1)
		for j, t := range sec.Tasks {
			if j >= left {
				break
			}
			if j == left-1 && j < len(sec.Tasks)-1 {
				out = append(out, dimStyle.Render(fmt.Sprintf("  … %d more", len(sec.Tasks)-j)))
				break
			}
			who := t.AssignedTo
			if t.ReviewingBy != "" {
				who += "/" + t.ReviewingBy
			}
			text := t.Description
			if t.Reason != "" {
				text = t.Reason
			}
			out = append(out, fmt.Sprintf("  %-14s p%d %-18s %-12s %s", p(t.ID), t.Priority, p(who), p(t.LeaseText(now)), p(contracts.OneLine(text))))
		}
	}
	for len(out) < n {
		out = append(out, "")
	}
	return out[:n]
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

func (m *model) footer() string {
	s := "q quit · r refresh"
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

// fitLines cuts each line to width columns (escape sequences kept) and
// joins them.
func fitLines(lines []string, width int) string {
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, width, "…")
	}
	return strings.Join(lines, "\n")
}
