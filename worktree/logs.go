package worktree

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Bounds of the log of a program git-liza runs for a project (the
// worktree setup, the merge's integration test): its first LogHead bytes
// and its last LogTail are kept, what lies between is cut with a line
// saying how much.
const (
	LogHead = 1 << 20
	LogTail = 64 << 10
)

// CappedLog writes the first LogHead bytes of a program's output to w,
// keeps the last LogTail of the rest, and writes those at the end (Finish)
// after a line saying how much was cut: the log's size is bounded however
// much the program prints, and a failure's last lines are still there.
type CappedLog struct {
	w       io.Writer
	written int64
	tail    []byte
	cut     int64
}

// NewCappedLog is a CappedLog writing to w.
func NewCappedLog(w io.Writer) *CappedLog { return &CappedLog{w: w} }

func (c *CappedLog) Write(p []byte) (int, error) {
	n := len(p)
	if room := LogHead - c.written; room > 0 {
		k := min(int64(len(p)), room)
		if _, err := c.w.Write(p[:k]); err != nil {
			return 0, err
		}
		c.written += k
		p = p[k:]
	}
	if len(p) > 0 {
		c.tail = append(c.tail, p...)
		// Slid back only past twice its bound: a copy of the tail per
		// LogTail bytes written, not per write.
		if over := len(c.tail) - LogTail; over > LogTail {
			c.cut += int64(over)
			c.tail = append(c.tail[:0], c.tail[over:]...)
		}
	}
	return n, nil
}

// Finish writes what was kept of the output past the head.
func (c *CappedLog) Finish() error {
	if over := len(c.tail) - LogTail; over > 0 {
		c.cut += int64(over)
		c.tail = c.tail[over:]
	}
	if c.cut > 0 {
		if _, err := fmt.Fprintf(c.w, "\n[git-liza: %d bytes of output cut here]\n", c.cut); err != nil {
			return err
		}
	}
	_, err := c.w.Write(c.tail)
	c.tail = nil
	return err
}

// PruneLogs removes the oldest of dir's files that match pattern (by
// modification time, then name) past keep.
func PruneLogs(dir, pattern string, keep int) {
	names, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(names) <= keep {
		return
	}
	type log struct {
		name string
		at   time.Time
	}
	var logs []log
	for _, n := range names {
		if fi, err := os.Lstat(n); err == nil && fi.Mode().IsRegular() {
			logs = append(logs, log{n, fi.ModTime()})
		}
	}
	slices.SortFunc(logs, func(a, b log) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	for len(logs) > keep {
		os.Remove(logs[0].name)
		logs = logs[1:]
	}
}
