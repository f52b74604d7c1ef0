package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// FuzzKeys: whatever keys are pressed, on a board empty or full, in a
// window of any size, the board neither panics nor draws past the window.
func FuzzKeys(f *testing.F) {
	f.Add("jjj\tjk\n\x1bsss/x\n\x1b", uint8(80), uint8(24), true)
	f.Add("GgG\n\x1b\tG\n", uint8(20), uint8(5), false)
	f.Add("p n x u A ?q", uint8(1), uint8(1), true)
	keys := map[rune]string{'\t': "tab", '\n': "enter", '\x1b': "esc", ' ': "pgdown", 'D': "end", 'H': "home", '\b': "backspace"}
	f.Fuzz(func(t *testing.T, seq string, w, h uint8, full bool) {
		b := ops.NewBoard(&contracts.State{}, testNow, ops.BoardFilter{})
		if full {
			b = teamBoard(30)
		}
		m := testModel(b, int(w), int(h))
		for _, r := range seq {
			k, ok := keys[r]
			if !ok {
				k = string(r)
			}
			if k == "q" || k == "" {
				continue
			}
			press(m, k)
			out := m.render()
			lines := strings.Split(out, "\n")
			if ww, hh := m.size(); len(lines) > hh {
				t.Fatalf("%dx%d: %d lines after %q", ww, hh, len(lines), k)
			}
			for _, l := range lines {
				if ww, _ := m.size(); ansi.StringWidth(l) > ww {
					t.Fatalf("a line of %d columns in %d: %q", ansi.StringWidth(l), ww, ansi.Strip(l))
				}
			}
		}
	})
}
