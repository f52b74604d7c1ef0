package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// MaxLog bounds the bytes of a session log's records of the agent's
// output: an agent that floods its output (each line a record with its
// time, some 27 times its size for short lines) does not fill the disk.
// Past it the output is still parsed, not written; the End says how much
// was not kept.
var MaxLog int64 = 256 << 20

// keepSteps is how many of a session's last steps a Writer keeps for
// Classify, each text cut to keepText bytes.
const (
	keepSteps = 256
	keepText  = 4 << 10
)

// Writer is the supervisor's side of a session log: it writes the Header,
// then one Record per line the agent prints on stdout or stderr, then the
// End. Each line is wrapped in a record of its own (a JSON object on stdout
// goes in JSON, anything else in Out or Err), so nothing the agent prints
// can pass for a Header or an End. Lines are cut at MaxLine. The log is
// only appended to. The Writer parses the records as it writes them,
// keeps a Summary and the last steps, and hands each step to OnStep.
//
// Writes to the log that fail are remembered (Err) and never reported to
// the agent's pipes, so a full disk does not kill the agent.
type Writer struct {
	mu     sync.Mutex
	w      io.Writer
	format string
	parser *Parser
	sum    Summary
	steps  []Step
	onStep func(Step)
	// onSpent and spentSeen: see OnSpent (live.go).
	onSpent   func()
	spentSeen int64
	ended     bool
	err       error
	// logged is the bytes of the agent's output written to the log so
	// far; dropped what was not written past MaxLog.
	logged, dropped int64
	now             func() time.Time
	out             lineWriter
	errw            lineWriter
}

// NewWriter starts a session log on w in the given format with its
// header, which it writes at once.
func NewWriter(w io.Writer, h Header, format string) *Writer {
	if h.Format == "" {
		h.Format = format
	}
	wr := &Writer{w: w, format: format, parser: NewParser(format), now: time.Now}
	wr.out = lineWriter{wr: wr}
	wr.errw = lineWriter{wr: wr, stderr: true}
	wr.mu.Lock()
	wr.emit(Record{T: wr.now(), Header: &h})
	wr.mu.Unlock()
	return wr
}

// OnStep sets a function called with each step as it is parsed (for live
// rendering). It is called with the Writer's lock held: it must not call
// the Writer.
func (w *Writer) OnStep(fn func(Step)) {
	w.mu.Lock()
	w.onStep = fn
	w.mu.Unlock()
}

// Stdout is where the agent's standard output goes.
func (w *Writer) Stdout() io.Writer { return &w.out }

// Stderr is where the agent's standard error goes.
func (w *Writer) Stderr() io.Writer { return &w.errw }

// End writes what is left of an unfinished line, then the End record.
// Nothing is written after it.
func (w *Writer) End(e End) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return
	}
	w.out.flush()
	w.errw.flush()
	if w.dropped > 0 {
		if e.Detail != "" {
			e.Detail += "; "
		}
		e.Detail += fmt.Sprintf("the log keeps the first %d bytes of the output; %d more were not kept", MaxLog, w.dropped)
	}
	w.emit(Record{T: w.now(), End: &e})
	w.ended = true
}

// Summary is what the steps so far amount to.
func (w *Writer) Summary() Summary {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sum
}

// Steps returns the last steps parsed (at most a few hundred, their
// texts cut to a few KiB).
func (w *Writer) Steps() []Step {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Step(nil), w.steps...)
}

// Err is the first error writing the log, if any.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// emit writes r and parses it; w.mu is held.
func (w *Writer) emit(r Record) {
	if w.ended {
		return
	}
	// One Write per record (the Encoder's line), so that a reader never
	// sees half of one unless the disk fails; < > & stay as written.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(r)
	if err == nil && r.Header == nil && r.End == nil {
		// The agent's output: kept up to MaxLog, then parsed only (its
		// steps, usage and summary still count).
		if w.logged >= MaxLog {
			w.dropped += int64(b.Len())
			b.Reset()
		} else {
			w.logged += int64(b.Len())
		}
	}
	if err == nil && b.Len() > 0 {
		_, err = w.w.Write(b.Bytes())
	}
	if err != nil && w.err == nil {
		w.err = err
	}
	for _, st := range w.parser.Record(r) {
		w.sum.Add(st)
		if len(w.steps) == 2*keepSteps {
			w.steps = append(w.steps[:0], w.steps[keepSteps:]...)
		}
		kept := st
		if len(kept.Text) > keepText {
			kept.Text, kept.Bytes = cut(kept.Text, keepText), max(kept.Bytes, len(kept.Text))
		}
		if len(kept.Input) > keepText {
			kept.Input, kept.Bytes = cut(kept.Input, keepText), max(kept.Bytes, len(kept.Input))
		}
		w.steps = append(w.steps, kept)
		if w.onStep != nil {
			w.onStep(st)
		}
	}
	w.spentMoved()
}

// line makes the record of one whole line of output; full is its size
// before any cut.
func (w *Writer) line(b []byte, full int, stderr bool) {
	b = bytes.TrimSuffix(b, []byte("\r"))
	r := Record{T: w.now()}
	if full > len(b) {
		r.Bytes = full
	}
	switch {
	case stderr:
		r.Err = string(b)
	case r.Bytes == 0 && w.format != FormatText && isObject(b):
		r.JSON = append(json.RawMessage(nil), b...)
	default:
		r.Out = string(b)
	}
	if r.Err == "" && r.Out == "" && r.JSON == nil && r.Bytes == 0 {
		return // empty lines are not kept
	}
	w.emit(r)
}

// isObject: b is one valid JSON object.
func isObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 1 && b[0] == '{' && json.Valid(b)
}

// lineWriter splits one stream into lines, keeping at most MaxLine bytes
// of each.
type lineWriter struct {
	wr     *Writer
	stderr bool
	buf    []byte
	full   int // the size of the current line so far, past what buf keeps
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.wr.mu.Lock()
	defer l.wr.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if room := MaxLine - len(l.buf); room > 0 {
			l.buf = append(l.buf, chunk[:min(room, len(chunk))]...)
		}
		l.full += len(chunk)
		if i < 0 {
			break
		}
		l.wr.line(l.buf, l.full, l.stderr)
		l.buf, l.full = l.buf[:0], 0
		if cap(l.buf) > 64<<10 {
			l.buf = nil // give a huge line's buffer back
		}
		p = p[i+1:]
	}
	return n, nil
}

// flush records an unfinished last line; wr.mu is held.
func (l *lineWriter) flush() {
	if l.full > 0 {
		l.wr.line(l.buf, l.full, l.stderr)
	}
	l.buf, l.full = nil, 0
}
