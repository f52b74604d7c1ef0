package tui

import (
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/liza-dev/git-liza/contracts"
)

// promptKind says what a prompt is for.
type promptKind int

const (
	askFilter  promptKind = iota // text the tasks are filtered by, as it is typed
	askNote                      // a note for the selected task or agent
	askConfirm                   // y to pull a lever, anything else not
)

// prompt is the line where the user types or confirms.
type prompt struct {
	kind  promptKind
	label string
	text  []rune
	lever *lever // what y pulls (askConfirm), or the note's target
}

// maxInput bounds what a prompt takes: a note is a line for the agents,
// and the filter a few words.
const maxInput = 2000

// key acts on a key press.
func (m *model) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	if s == "ctrl+c" {
		return tea.Quit
	}
	if m.prompt != nil {
		return m.promptKey(k)
	}
	// The last lever's outcome stays until the next key.
	m.message, m.failed = "", false
	if m.help {
		m.help = false
		if s == "q" {
			return tea.Quit
		}
		return nil
	}
	switch s {
	case "q":
		return tea.Quit
	case "?":
		m.help = true
		return nil
	case "r":
		return m.reload(m.remote)
	case "p":
		return m.ask(pauseLever())
	case "R":
		return m.ask(resumeLever())
	case "A":
		return m.ask(abortLever())
	}
	switch m.screen {
	case scrDetail, scrLog:
		return m.detailKey(s)
	}
	return m.boardKey(s)
}

// boardKey moves the cursor and opens what it is on.
func (m *model) boardKey(s string) tea.Cmd {
	page := max(1, m.sectionHeight(m.focus)-1)
	switch s {
	case "esc":
		if m.filter != "" || m.group != "" {
			m.filter, m.group = "", ""
			m.refilter()
		}
	case "tab", "shift+tab":
		if m.board != nil && len(m.board.Agents) > 0 {
			m.focus = (m.focus + 1) % nSections
		}
	case "up", "k":
		m.move(-1)
	case "down", "j":
		m.move(1)
	case "pgup", "ctrl+b":
		m.move(-page)
	case "pgdown", "ctrl+f", "space":
		m.move(page)
	case "home", "g":
		m.move(-1 << 30)
	case "end", "G":
		m.move(1 << 30)
	case "/":
		m.prompt = &prompt{kind: askFilter, label: "filter: ", text: []rune(m.filter)}
	case "s":
		m.nextGroup()
		if m.group == groupReady {
			return m.reload(false) // reads what is ready, in claim order
		}
	case "enter":
		return m.open()
	case "n":
		return m.askNote()
	case "u":
		if t := m.selectedTask(); t != nil && m.focus == secTasks {
			return m.ask(unblockLever(t))
		}
	case "x":
		if t := m.selectedTask(); t != nil && m.focus == secTasks {
			return m.ask(releaseLever(t, m.now()))
		}
	}
	return nil
}

// detailKey scrolls the detail and leaves it; the levers on the task
// shown work there too.
func (m *model) detailKey(s string) tea.Cmd {
	switch s {
	case "esc", "left", "h", "backspace":
		m.screen = scrBoard
		m.stopTail()
	case "up", "k":
		m.scroll = max(0, m.scroll-1)
	case "down", "j":
		m.scroll++
	case "pgup", "ctrl+b":
		m.scroll = max(0, m.scroll-max(1, m.height-4))
	case "pgdown", "ctrl+f", "space":
		m.scroll += max(1, m.height-4)
	case "home", "g":
		m.scroll = 0
	case "end", "G":
		m.scroll = 1 << 30 // the view stops at the last page
	case "n":
		return m.askNote()
	case "u":
		if t := m.selectedTask(); t != nil && m.screen == scrDetail {
			return m.ask(unblockLever(t))
		}
	case "x":
		if t := m.selectedTask(); t != nil && m.screen == scrDetail {
			return m.ask(releaseLever(t, m.now()))
		}
	}
	return nil
}

func (m *model) move(d int) {
	m.cursor[m.focus] += d
	m.clamp()
}

// nextGroup shows the next status group alone: ready, then each status on
// the board in attention order, then all again.
func (m *model) nextGroup() {
	groups := []string{"", groupReady}
	if m.board != nil {
		for _, st := range contracts.AttentionOrder {
			if m.board.Counts[st] > 0 {
				groups = append(groups, string(st))
			}
		}
	}
	next := ""
	for i, g := range groups {
		if g == m.group && i+1 < len(groups) {
			next = groups[i+1]
		}
	}
	m.group = next
	m.cursor[secTasks] = 0
	m.focus = secTasks
	m.refilter()
}

// open shows the selected task's detail, or the selected agent's session.
func (m *model) open() tea.Cmd {
	m.scroll = 0
	if m.focus == secAgents {
		a := m.selectedAgent()
		if a == nil {
			return nil
		}
		m.screen = scrLog
		return m.openAgentLog(a.ID)
	}
	t := m.selectedTask()
	if t == nil {
		return nil
	}
	m.screen = scrDetail
	m.stopTail()
	if m.detail == nil || m.detail.id != t.ID {
		m.detail = &detail{id: t.ID, loading: true}
	} else if s := m.detail.session; s != nil {
		m.startTail(*s) // read already, for the side pane
	}
	return m.loadDetail(t.ID)
}

// ask shows a lever's confirmation, or pulls it at once when it needs
// none.
func (m *model) ask(l *lever) tea.Cmd {
	if l == nil {
		return nil
	}
	if !l.confirm {
		return m.pull(l, "")
	}
	m.prompt = &prompt{kind: askConfirm, label: l.question + "? y/n ", lever: l}
	return nil
}

// askNote asks for a note for what is selected: the task shown or under
// the cursor, or the agent under it.
func (m *model) askNote() tea.Cmd {
	var l *lever
	switch {
	case m.screen == scrLog || m.screen == scrBoard && m.focus == secAgents:
		if a := m.selectedAgent(); a != nil {
			l = noteLever(a.ID)
		}
	default:
		if t := m.selectedTask(); t != nil {
			l = noteLever(t.ID)
		}
	}
	if l == nil {
		l = noteLever("")
	}
	m.prompt = &prompt{kind: askNote, label: l.question + ": ", lever: l}
	return nil
}

// promptKey edits the prompt's text, or answers its question.
func (m *model) promptKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.prompt
	s := k.String()
	if p.kind == askConfirm {
		m.prompt = nil
		if s == "y" || s == "Y" {
			return m.pull(p.lever, "")
		}
		m.message, m.failed = "not done: "+p.lever.question, false
		return nil
	}
	switch s {
	case "esc":
		m.prompt = nil
		if p.kind == askFilter {
			m.filter = ""
			m.refilter()
		}
		return nil
	case "enter":
		m.prompt = nil
		if p.kind == askNote {
			if len(p.text) == 0 {
				m.message, m.failed = "no note: it was empty", false
				return nil
			}
			return m.pull(p.lever, string(p.text))
		}
		return nil
	case "backspace", "ctrl+h":
		if len(p.text) > 0 {
			p.text = p.text[:len(p.text)-1]
		}
	case "ctrl+u":
		p.text = p.text[:0]
	case "space":
		p.text = append(p.text, ' ')
	default:
		m.typed(k.Text)
		return nil
	}
	m.edited()
	return nil
}

// typed adds what a key or a paste typed to the prompt: a control
// character is kept out (a note is one line), and so is what goes past
// maxInput.
func (m *model) typed(s string) {
	p := m.prompt
	for _, r := range s {
		if (r >= 0x20 && r < 0x7f || r > 0x9f) && r != utf8.RuneError && len(p.text) < maxInput {
			p.text = append(p.text, r)
		}
	}
	m.edited()
}

// edited follows the prompt's text: the filter applies as it is typed.
func (m *model) edited() {
	p := m.prompt
	if p.kind == askFilter {
		m.filter = string(p.text)
		m.cursor[secTasks] = 0
		m.focus = secTasks
		m.refilter()
	}
}
