package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// A window at least wideWidth columns wide shows the selected task's
// detail beside the board, read previewDelay after the cursor stops on
// it (holding a key down reads no detail per task passed).
const (
	wideWidth    = 150
	previewDelay = 150 * time.Millisecond
)

type previewMsg struct{ id string }

func (m *model) wide() bool {
	w, _ := m.size()
	return w >= wideWidth
}

// preview asks for the side pane's detail of the task under the cursor,
// unless it shows it already.
func (m *model) preview() tea.Cmd {
	t := m.selectedTask()
	if t == nil || m.screen != scrBoard || !m.wide() || m.detail != nil && m.detail.id == t.ID {
		return nil
	}
	id := t.ID
	return tea.Tick(previewDelay, func(time.Time) tea.Msg { return previewMsg{id: id} })
}

// beside lays the side pane's lines to the right of the board's, each
// side cut to its width.
func beside(left, right []string, lw, rw int) []string {
	sep := dimStyle.Render("│")
	out := make([]string, len(left))
	for i, l := range left {
		l = ansi.Truncate(l, lw, "…")
		l += strings.Repeat(" ", max(0, lw-lipgloss.Width(l)))
		r := ""
		if i < len(right) {
			r = ansi.Truncate(right[i], rw, "…")
		}
		out[i] = l + sep + r
	}
	return out
}

// sidePane is n lines of the selected task's detail, for the side pane.
func (m *model) sidePane(n, width int) []string {
	t := m.selectedTask()
	var lines []string
	switch {
	case t == nil:
		lines = []string{dimStyle.Render("no task selected")}
	case m.detail == nil || m.detail.id != t.ID:
		lines = []string{headStyle.Render(p(t.ID)), dimStyle.Render("reading…")}
	default:
		lines = m.detailLines(width)
		lines = append(lines, "", dimStyle.Render("enter: this task full screen, with its session followed"))
	}
	if len(lines) > n {
		lines = lines[:n]
	}
	return lines
}

// renderDetail shows the task opened (its detail above, the tail of its
// latest session below) or the agent's session followed.
func (m *model) renderDetail(w, h int) string {
	var top []string
	title := " task "
	if m.detail != nil {
		title += p(m.detail.id) + " "
	}
	if m.screen == scrLog {
		title = " session of " + p(m.logAgent) + " "
	}
	top = append(top, titleStyle.Render(title))
	top = append(top, m.banner()...)
	bottom := []string{m.footer()}
	if s := m.statusLine(); s != "" {
		bottom = append([]string{s}, bottom...)
	}
	room := max(1, h-len(top)-len(bottom))
	var body []string
	if m.screen == scrDetail {
		info := m.detailLines(w)
		tailRoom := 0
		if m.tail != nil {
			// Half the room at least, and what the detail leaves.
			tailRoom = max(room/2, room-len(info))
		}
		infoRoom := room - tailRoom
		m.scroll = max(0, min(m.scroll, len(info)-infoRoom))
		end := min(len(info), m.scroll+infoRoom)
		body = append(body, info[m.scroll:end]...)
		for len(body) < infoRoom {
			body = append(body, "")
		}
		body = append(body, m.tailLines(tailRoom)...)
	} else {
		switch {
		case m.tail != nil:
			body = m.tailLines(room)
		case m.logNote != "":
			body = []string{dimStyle.Render(p(m.logNote))}
		default:
			body = []string{"reading the sessions…"}
		}
	}
	for len(body) < room {
		body = append(body, "")
	}
	return fitLines(append(append(top, body[:room]...), bottom...), w, h)
}

// tailLines is n lines of the session followed: a heading, then its last
// steps.
func (m *model) tailLines(n int) []string {
	if n <= 0 || m.tail == nil {
		return nil
	}
	lines, state := m.tail.last(n - 1)
	out := []string{headStyle.Render(fmt.Sprintf("%s (%s)", m.tail.head, state))}
	// The steps are escaped already (transcript.Render); p keeps them so
	// and escapes what the heading quotes.
	for _, l := range lines {
		out = append(out, "  "+p(l))
	}
	return out
}

// helpLines is the full list of keys (?).
func (m *model) helpLines() []string {
	return []string{
		titleStyle.Render(" git liza board: keys "),
		"",
		"  ↑ ↓  k j        move in the section (or scroll the detail)",
		"  pgup pgdn        a page up or down;  home end: first, last",
		"  tab              between the tasks and the agents",
		"  enter            open: a task's detail and its session, an agent's session",
		"  esc              back to the board; clears the filter",
		"  /                filter the tasks by text (id, description, reason, agent)",
		"  s                one status group alone: ready, each status in turn, all",
		"  r                read the board again (in remote mode: fetch)",
		"",
		"  The human's levers, recorded as your operations (git liza log shows them):",
		"  p                pause the team (asks y/n)",
		"  R                resume the team",
		"  A                abort the team: supervisors kill their agents (asks y/n)",
		"  n                a note for the selected task or agent (type it, enter)",
		"  u                unblock the selected task (asks y/n)",
		"  x                release the selected task from its coder or reviewer (y/n)",
		"",
		"  q, ctrl+c        quit;  any key closes this help",
	}
}
