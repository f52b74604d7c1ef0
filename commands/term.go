package commands

import (
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/liza-dev/git-liza/contracts"
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

// printableWriter passes a stream of text on with every character a
// terminal would act on, or that reorders or hides text, made visible
// (contracts.PrintableText: newlines and tabs kept). It is for a stream
// that carries agents' text to a person: a supervisor's log lines and its
// agent's output. Writes are passed on as they come, except the last
// bytes of a character cut between two writes, which wait for the rest
// (an escape sequence cut so is made visible byte by byte anyway). Safe
// for concurrent use.
type printableWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte // the start of a UTF-8 character the next write ends
}

func newPrintableWriter(w io.Writer) *printableWriter { return &printableWriter{w: w} }

func (p *printableWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	data := b
	if len(p.pending) > 0 {
		data = append(p.pending, b...)
	}
	cut := len(data) - partialRune(data)
	p.pending = append([]byte(nil), data[cut:]...)
	if _, err := io.WriteString(p.w, contracts.PrintableText(string(data[:cut]))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Flush writes what waits for the rest of a character: the stream ended,
// so it is shown as the bytes it is.
func (p *printableWriter) Flush() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.pending) == 0 {
		return nil
	}
	_, err := io.WriteString(p.w, contracts.PrintableText(string(p.pending)))
	p.pending = nil
	return err
}

// partialRune is how many bytes at the end of b begin a UTF-8 character
// that b does not complete (0 to 3).
func partialRune(b []byte) int {
	for n := 1; n <= min(3, len(b)); n++ {
		c := b[len(b)-n]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[len(b)-n:]) {
				return 0
			}
			return n
		}
	}
	return 0
}
