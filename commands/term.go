package commands

import (
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"
)

// terminal reports whether stdout is a terminal: progress lines are for
// people, and stay out of what a script reads.
func (e *Env) terminal() bool {
	f, ok := e.Stdout.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// width is how many columns a line of output may take: COLUMNS when set,
// else the terminal's width, else 0 (no limit: stdout is a file or a
// pipe).
func (e *Env) width() int {
	if n, err := strconv.Atoi(e.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := e.Stdout.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return 0
}

// fit cuts s to width columns, ending it with "…" when it had to be cut;
// width 0 leaves it whole. Lines are cut, never wrapped.
func fit(s string, width int) string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:width-1]), " ") + "…"
}
