package tui

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// sgr is what the board's own styles write: Select Graphic Rendition
// sequences, and nothing else that starts with ESC.
var sgr = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// rawRune returns the first character of out that a terminal must not get
// raw and where it is, or -1 (the rule of contracts.Printable, restated).
func rawRune(out string) (rune, int) {
	for i, r := range out {
		switch {
		case r == utf8.RuneError:
			if _, n := utf8.DecodeRuneInString(out[i:]); n == 1 {
				return rune(out[i]), i
			}
		case r == '\n':
		case r < 0x20 || r >= 0x7f && r <= 0x9f, r == 0x2028, r == 0x2029,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return r, i
		case r != 0x200c && r != 0x200d && unicode.Is(unicode.Cf, r):
			return r, i
		}
	}
	return 0, -1
}

func evilModel(s string) *model {
	now := "2026-01-17T10:00:00Z"
	b := &ops.Board{
		Now: now, Goal: "goal-1: " + s, GoalStatus: s, Sprint: "sprint-1" + s, SprintStatus: s, Mode: s, IntegrationBranch: s,
		Counts: map[contracts.Status]int{contracts.Blocked: 1, contracts.Unclaimed: 1},
		Total:  2,
		Tasks: []ops.BoardTask{
			{ID: "t-1" + s, Status: contracts.Blocked, Priority: 2, Description: s, AssignedTo: "coder-1" + s, ReviewingBy: s, Reason: s},
			{ID: "t-2", Status: contracts.Status("X" + s), Priority: 3, Description: s},
		},
		Agents: []ops.BoardAgent{{ID: "coder-1" + s, Role: s, Status: s, CurrentTask: s}},
		Alarms: []contracts.Alarm{{Message: "BLOCKED: t-1 — " + s}},
		Remote: &ops.BoardRemote{Name: "origin" + s, FetchedAt: now + s},
	}
	return &model{board: b, width: 200, height: 40, err: errors.New("fetch failed: " + s),
		log: []ops.LogEntry{{Time: now + s, Agent: "coder-1" + s, Subject: "block t-1 " + s, Reason: s}}}
}

// FuzzBoardRender: whatever agents wrote, the board writes no escape
// sequence but its own styles, and no raw control, bidi or format
// character; its lines are its own.
func FuzzBoardRender(f *testing.F) {
	for _, s := range []string{"plain", "a\nb\tc\r", "\x1b]0;pwned\a\x1b[2J", "\x1b[31mred\x1b[0m", "\x1b]8;;http://x/\x1b\\y\x1b]8;;\x1b\\",
		"invoice\u202efdp.exe", "\u2066\u200b\ufeff", "\xff\x9b[2J\u009b", "日本語 👩‍💻"} {
		f.Add(s)
	}
	want := strings.Count(evilModel("x").render(), "\n")
	f.Fuzz(func(t *testing.T, s string) {
		out := evilModel(s).render()
		if n := strings.Count(out, "\n"); n != want {
			t.Fatalf("%d lines, want %d:\n%s", n, want, out)
		}
		plain := sgr.ReplaceAllString(out, "")
		if r, i := rawRune(plain); i >= 0 {
			t.Fatalf("raw %U at byte %d of %q", r, i, plain)
		}
	})
}

// An agent's colour codes are shown, not obeyed.
func TestBoardShowsAgentsEscapes(t *testing.T) {
	out := sgr.ReplaceAllString(evilModel("\x1b[31mred\x1b[0m \u202e").render(), "")
	if !strings.Contains(out, `— \x1b[31mred\x1b[0m \u202e`) {
		t.Errorf("the alarm line does not spell out the agent's escapes:\n%s", out)
	}
}
