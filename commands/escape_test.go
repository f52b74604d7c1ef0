package commands

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// The printers for people, fed text an agent chose: nothing a terminal
// acts on, and no bidi or invisible format character, survives raw; lines
// stay the printer's own; ordinary text comes through as written.

// rawRune returns the first character of out a terminal must not get raw
// (a control other than a newline, a C1 control, a bidi or other format
// character but the joiners, a line or paragraph separator, a byte that
// is not UTF-8), and where, or -1. The rule is restated here rather than
// taken from contracts.Printable, so that the tests check it.
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

func assertNoRaw(t *testing.T, printer, out string) {
	t.Helper()
	if r, i := rawRune(out); i >= 0 {
		t.Fatalf("%s: raw %U at byte %d of %q", printer, r, i, out)
	}
}

// ordinary reports whether s is text every printer shows as written: no
// character to escape, no whitespace but single spaces (one-line fields
// are collapsed), not empty.
func ordinary(s string) bool {
	return s != "" && contracts.IsPrintable(s, false) && contracts.OneLine(s) == s
}

var fuzzSeeds = []string{
	"Retry GET calls", "héllo 日本語 مرحبا 👩‍💻", "a\nb\tc\r\n",
	"\x1b]0;pwned\a\x1b[2J\x1b[31mred\x1b[0m", "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\",
	"invoice\u202efdp.exe", "\u2066x\u2069\u200b\ufeff", "\xff\x9b[2J", "\u009b2J\u0085", `C:\x1b\path`,
}

func testBoard(s string) *ops.Board {
	now := "2026-01-17T10:00:00Z"
	return &ops.Board{
		Now: now, Goal: "goal-1: " + s, GoalStatus: "IN_PROGRESS" + s, Sprint: "sprint-1" + s, SprintStatus: s,
		Mode: "RUNNING" + s, IntegrationBranch: "integration" + s,
		Counts: map[contracts.Status]int{contracts.Blocked: 1, contracts.Unclaimed: 1, contracts.Status("X" + s): 1},
		Total:  3,
		Tasks: []ops.BoardTask{
			{ID: "t-1" + s, Status: contracts.Blocked, Priority: 2, Description: "d " + s, AssignedTo: "coder-1" + s, ReviewingBy: s, Reason: "r " + s},
			{ID: "t-2", Status: contracts.Unclaimed, Priority: 3, Description: s,
				WaitsOn: []ops.Waiting{{ID: "t-1" + s, Status: contracts.Status("X" + s)}}},
			{ID: "t-3", Status: contracts.Status("X" + s), Priority: 3, Description: s},
		},
		Agents:      []ops.BoardAgent{{ID: "coder-1" + s, Role: "coder" + s, Status: "WORKING" + s, CurrentTask: s, LeaseExpires: "2026-01-17T10:20:00Z"}},
		Switches:    []contracts.Switch{{Mode: "PAUSED" + s, Source: ".liza/PAUSE" + s, By: s, Reason: "why " + s}},
		Alarms:      []contracts.Alarm{{Message: "⚠️ BLOCKED: t-1 — " + s}},
		Remote:      &ops.BoardRemote{Name: "origin" + s, FetchedAt: now},
		Unpublished: &ops.Unpublished{Remote: "origin" + s, Operations: 2},
	}
}

// readyText is status --ready's lines for two tasks, s in every field.
func readyText(s string) string {
	var out bytes.Buffer
	writeReady(&out, []ops.ReadyTask{
		{ID: "t-1" + s, Status: contracts.Status("REJECTED" + s), Priority: 1, Description: "d " + s, AssignedTo: "coder-2" + s},
		{ID: "t-2", Status: contracts.Unclaimed, Priority: 3, Description: s},
	})
	return out.String()
}

func statusText(s string, width int) string {
	var board, out bytes.Buffer
	writeBoard(&board, testBoard(s), ops.StatusRequest{}, 10)
	_ = writeFitted(&out, board.String(), width)
	return out.String()
}

func logText(s string) string {
	e := ops.LogEntry{Commit: "0123456789abcdef" + s, Time: "2026-01-17T10:00:00Z" + s, Agent: "coder-1" + s, Subject: "block t-1 " + s,
		Reason: "because " + s, Signed: s}
	var out bytes.Buffer
	out.WriteString(logLine(e) + "\n")
	writeChanges(&out, []ops.EntityDiff{
		{Kind: "task" + s, ID: "t-1" + s, Change: "changed" + s, Fields: []contracts.FieldChange{
			{Field: "blocked_reason" + s, New: s, Added: true},
			{Field: "description", Old: s, Removed: true},
			{Field: "status", Old: "CLAIMED" + s, New: s + "BLOCKED"},
			{Field: "scope", Old: strings.Repeat("long text ", 7) + s, New: s + strings.Repeat(" long text", 7)},
		}},
	}, "    ")
	return out.String()
}

func FuzzPrinters(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	wantStatus := strings.Count(statusText("x", 0), "\n")
	wantLog := strings.Count(logText("x"), "\n")
	f.Fuzz(func(t *testing.T, s string) {
		// status, at any width.
		for _, width := range []int{0, 40} {
			out := statusText(s, width)
			assertNoRaw(t, "status", out)
			if n := strings.Count(out, "\n"); n != wantStatus {
				t.Fatalf("status: %d lines, want %d:\n%s", n, wantStatus, out)
			}
			if strings.Contains(out, "\t") {
				t.Fatalf("status: a tab survives: %q", out)
			}
			if width == 0 && ordinary(s) && !strings.Contains(out, "    t-2  p3  ") {
				t.Fatalf("status: the table lost its columns:\n%s", out)
			}
			if width == 0 && ordinary(s) && !strings.Contains(out, "  ⚠️ BLOCKED: t-1 — "+s+"\n") {
				t.Fatalf("status: ordinary text %q not shown as written:\n%s", s, out)
			}
		}
		// status --ready: one line a task, whatever its fields hold.
		ready := readyText(s)
		assertNoRaw(t, "status --ready", ready)
		if n := strings.Count(ready, "\n"); n != 2 {
			t.Fatalf("status --ready: %d lines, want 2:\n%s", n, ready)
		}
		// log and log -p (diff writes the same changes).
		out := logText(s)
		assertNoRaw(t, "log -p", out)
		if n := strings.Count(out, "\n"); n != wantLog {
			t.Fatalf("log -p: %d lines, want %d:\n%s", n, wantLog, out)
		}
		if ordinary(s) && !strings.Contains(out, "+ blocked_reason"+s+": "+s+"\n") {
			t.Fatalf("log -p: ordinary text %q not shown as written:\n%s", s, out)
		}
		// The error line: one line, quoting what it was given.
		var stderr bytes.Buffer
		e := &Env{Stderr: &stderr}
		e.fail(errors.New("no task "+s), false)
		assertNoRaw(t, "error", stderr.String())
		if n := strings.Count(stderr.String(), "\n"); n != 1 {
			t.Fatalf("error: %d lines: %q", n, stderr.String())
		}
		if ordinary(s) && stderr.String() != "git-liza: no task "+s+"\n" {
			t.Fatalf("error: %q for %q", stderr.String(), s)
		}
	})
}

// watch's transitions, on stderr and in the alerts log, and its notices.
func FuzzWatchLines(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var stderr bytes.Buffer
		logPath := filepath.Join(t.TempDir(), "alerts.log")
		w := &watcher{s: &session{Env: &Env{Stderr: &stderr}}, continuous: true, logPath: logPath,
			clock: func() time.Time { return time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC) }}
		prev := []contracts.Alarm{{Key: "blocked/a", Kind: "blocked", Message: "⚠️ BLOCKED: a — " + s}}
		cur := []contracts.Alarm{{Key: "discovery/" + s, Kind: "immediate_discovery", Message: "🚨 IMMEDIATE DISCOVERY: " + s}}
		lines, _ := alarmTransitions(prev, cur)
		for _, l := range lines {
			w.emit(l.text)
		}
		w.notice("🚨 WATCH FAILED: " + s)
		logged, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		for name, out := range map[string]string{"watch stderr": stderr.String(), "alerts.log": string(logged)} {
			assertNoRaw(t, name, out)
			if n := strings.Count(out, "\n"); n != 3 {
				t.Fatalf("%s: %d lines, want 3:\n%s", name, n, out)
			}
			if ordinary(s) && !strings.Contains(out, "🚨 IMMEDIATE DISCOVERY: "+s+"\n") {
				t.Fatalf("%s: ordinary text %q not shown as written:\n%s", name, s, out)
			}
		}
	})
}

// TestRunRelaysPrintable: git liza run prefixes its supervisors' lines, and
// an agent's output among them, made printable; tabs and letters stay.
func TestRunRelaysPrintable(t *testing.T) {
	dir := t.TempDir()
	// A stand-in supervisor, run as `sh agent ROLE --agent ID`, printing
	// what an agent might.
	script := `printf 'title \033]0;pwned\007 clear \033[2J rlo \342\200\256 ok\tcol é\r\n'` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "agent"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var out, log bytes.Buffer
	e := &Env{Dir: dir, Stdout: &out, Stderr: &out, Getenv: os.Getenv}
	if err := e.team(context.Background(), teamSpec{coders: 1, out: &out, log: &log, exe: "sh"}); err != nil {
		t.Fatal(err)
	}
	want := `[coder-1] title \x1b]0;pwned\x07 clear \x1b[2J rlo \u202e ok` + "\tcol é\n"
	if out.String() != want || log.String() != want {
		t.Errorf("relayed\n%q\nlogged\n%q\nwant\n%q", out.String(), log.String(), want)
	}
}

// TestJSONEscapes records what encoding/json does with the characters
// Printable escapes: the C0 controls come out as \u00XX, while DEL, the C1
// controls and U+202E come out raw. --json stays exact (its readers are
// programs); a person piping it to a terminal sees those raw.
func TestJSONEscapes(t *testing.T) {
	var out bytes.Buffer
	s := &session{Env: &Env{Stdout: &out}}
	if err := s.printJSON(map[string]string{"r": "\x1b]0;t\a\x7f\u009b\u202e"}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{`\u001b]0;t\u0007`, "\x7f\u009b\u202e"} {
		if !strings.Contains(got, want) {
			t.Errorf("printJSON = %q, want %q in it", got, want)
		}
	}
}

// BenchmarkStatusText times the text of status at 10,000 tasks with
// ordinary descriptions (some with letters that are not ASCII): what
// making every field printable costs where there is nothing to escape.
func BenchmarkStatusText(b *testing.B) {
	board := testBoard("")
	board.Tasks = nil
	for i := range 10000 {
		st := []contracts.Status{contracts.Unclaimed, contracts.Claimed, contracts.Blocked, contracts.ReadyForReview}[i%4]
		board.Tasks = append(board.Tasks, ops.BoardTask{ID: "t-" + strconv.Itoa(i), Status: st, Priority: 1 + i%5,
			Description: "Retry every GET call of the client with backoff — réessayer " + strconv.Itoa(i), AssignedTo: "coder-" + strconv.Itoa(i%8)})
	}
	slices.SortStableFunc(board.Tasks, func(x, y ops.BoardTask) int { return strings.Compare(string(x.Status), string(y.Status)) })
	board.Total = len(board.Tasks)
	// What the rule costs alone: one pass over the text of all 10,000
	// tasks; the fields went through it once each before, about as much.
	var all bytes.Buffer
	writeBoard(&all, board, ops.StatusRequest{}, 0)
	b.Run("rule-pass", func(b *testing.B) {
		b.SetBytes(int64(all.Len()))
		for range b.N {
			_ = contracts.PrintableText(all.String())
		}
	})
	for _, limit := range []int{10, 0} {
		b.Run("limit="+strconv.Itoa(limit), func(b *testing.B) {
			for range b.N {
				var text, out bytes.Buffer
				writeBoard(&text, board, ops.StatusRequest{}, limit)
				_ = writeFitted(&out, text.String(), 120)
			}
		})
	}
}

// FuzzPrintableWriter: a stream cut anywhere comes out as the whole text
// made printable, a character cut between two writes included.
func FuzzPrintableWriter(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, uint8(1))
	}
	f.Fuzz(func(t *testing.T, s string, step uint8) {
		var out bytes.Buffer
		w := newPrintableWriter(&out)
		n := max(1, int(step)%7)
		for i := 0; i < len(s); i += n {
			if k, err := w.Write([]byte(s[i:min(len(s), i+n)])); err != nil || k != min(n, len(s)-i) {
				t.Fatalf("Write = %d, %v", k, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if want := contracts.PrintableText(s); utf8.ValidString(s) && out.String() != want {
			t.Fatalf("in writes of %d: %q, want %q", n, out.String(), want)
		}
		assertNoRaw(t, "printableWriter", strings.ReplaceAll(out.String(), "\t", " "))
	})
}
