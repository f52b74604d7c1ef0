package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/agent"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// TestTeamStopsOnEnvironmentFailure: a supervisor that exits 5 (a missing
// dependency, an environment failure) stops the team: the others get
// SIGTERM, run says the supervisor's one line once, however many said it,
// and exits 5.
func TestTeamStopsOnEnvironmentFailure(t *testing.T) {
	dir := t.TempDir()
	// A stand-in supervisor, run as `sh agent ROLE --agent ID ...`: the
	// coders fail for their environment, the others run until stopped.
	script := `case $3 in
coder-*) echo "git-liza: $3 cannot start" >&2; echo "git-liza: claude is not logged in: run claude /login" >&2; exit 5;;
esac
trap 'echo stopped $3 >> log; exit 0' TERM
echo started $3 >> log
while :; do sleep 0.05; done
`
	if err := os.WriteFile(filepath.Join(dir, "agent"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	e := &Env{Dir: dir, Stdout: &out, Stderr: &out, Getenv: os.Getenv}
	err := e.team(context.Background(), teamSpec{planner: true, coders: 2, reviewers: 1, out: &out, exe: "sh", events: true})
	if ops.Class(err) != contracts.CodeMissingDep {
		t.Fatalf("team = %v (class %d), want exit 5", err, ops.Class(err))
	}
	if got, want := err.Error(), "claude is not logged in: run claude /login"; !strings.HasSuffix(got, want) || strings.Count(got, "logged in") != 1 {
		t.Errorf("team = %q, want the one line %q once", got, want)
	}
	if strings.Contains(out.String(), "logged in") {
		t.Errorf("run printed the line besides its error:\n%s", out.String())
	}
	logged, _ := os.ReadFile(filepath.Join(dir, "log"))
	for _, id := range []string{"planner-1", "code-reviewer-1"} {
		if strings.Contains(string(logged), "started "+id) && !strings.Contains(string(logged), "stopped "+id) {
			t.Errorf("the supervisor of %s was left running; log:\n%s", id, logged)
		}
	}
}

// TestRelayEvents: a supervisor's JSON events are decoded and carry the
// agent of the supervisor that wrote them, whatever they say; any other
// line is shown as it was.
func TestRelayEvents(t *testing.T) {
	in := `{"t":"2026-01-17T10:00:00Z","agent":"coder-9","kind":"claimed","task":"a","msg":"claimed a (claimed)"}
not an event
{"kind":""}
{"t":"2026-01-17T10:00:00Z","kind":"error","msg":"release a: git said\nfatal: \u001b[2Jno"}
`
	var got []agent.Event
	relayEvents(strings.NewReader(in), "coder-1", func(ev agent.Event) { got = append(got, ev) })
	if len(got) != 4 {
		t.Fatalf("%d events, want 4: %+v", len(got), got)
	}
	if ev := got[0]; ev.Agent != "coder-1" || ev.Kind != agent.EventClaimed || ev.Task != "a" || eventLine(ev) != "10:00:00 claimed a (claimed)" {
		t.Errorf("event 1 = %+v (%q)", ev, eventLine(ev))
	}
	// An event is one line, escaped, whatever its message holds.
	if line, want := eventLine(got[3]), `10:00:00 release a: git said\nfatal: \x1b[2Jno`; line != want {
		t.Errorf("event 4 reads %q, want %q", line, want)
	}
	for _, ev := range got[1:3] {
		if ev.Kind != eventOutput || ev.Agent != "coder-1" {
			t.Errorf("line taken as %+v", ev)
		}
	}
	b, _ := json.Marshal(got[0])
	if want := `{"t":"2026-01-17T10:00:00Z","agent":"coder-1","kind":"claimed","task":"a","msg":"claimed a (claimed)"}`; string(b) != want {
		t.Errorf("json = %s, want %s", b, want)
	}
}

// standIn writes a stand-in supervisor, run as `sh agent ROLE --agent ID
// ...`, that counts its starts in count.ID, logs them, runs what dies says
// for its id and start (a shell command), then runs until SIGTERM.
func standIn(t *testing.T, dies string) string {
	t.Helper()
	dir := t.TempDir()
	script := `n=$(cat count.$3 2>/dev/null || echo 0); n=$((n+1)); echo $n > count.$3
echo "started $3 $n" >> log
` + dies + `
trap 'echo "stopped $3 $n" >> log; exit 0' TERM
while :; do sleep 0.05; done
`
	if err := os.WriteFile(filepath.Join(dir, "agent"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// waitFor waits until dir/log holds line, for at most 20 s.
func waitFor(t *testing.T, dir, line string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(dir, "log"))
		if strings.Contains(string(b), line+"\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the stand-ins' log:\n%s", line, b)
		}
	}
}

// wantLine fails t unless out has a line of coder-1's that says msg.
func wantLine(t *testing.T, out, msg string) {
	t.Helper()
	if !regexp.MustCompile(`(?m)^\[coder-1 +\] \d\d:\d\d:\d\d ` + regexp.QuoteMeta(msg) + `$`).MatchString(out) {
		t.Errorf("run's output has no line of coder-1's saying %q:\n%s", msg, out)
	}
}

// TestTeamRestartsASupervisorThatDied: a supervisor killed outright (an
// out-of-memory kill, a stray kill -9) is started again after the backoff,
// and run says so; the team then stops as it always does.
func TestTeamRestartsASupervisorThatDied(t *testing.T) {
	dir := standIn(t, `[ $3 = coder-1 ] && [ $n = 1 ] && kill -9 $$`)
	var out lockedBuffer
	e := &Env{Dir: dir, Stdout: &out, Stderr: &out, Getenv: os.Getenv}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- e.team(ctx, teamSpec{coders: 1, reviewers: 1, out: &out, exe: "sh", events: true, backoff: 10 * time.Millisecond})
	}()
	waitFor(t, dir, "started coder-1 2")
	waitFor(t, dir, "started code-reviewer-1 1")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("team = %v, want a clean stop", err)
	}
	waitFor(t, dir, "stopped coder-1 2")
	waitFor(t, dir, "stopped code-reviewer-1 1")
	wantLine(t, out.String(), "the supervisor of coder-1 died (signal: killed); starting it again in 10ms")
}

// TestTeamGivesUpOnASupervisorThatKeepsDying: a supervisor that dies each
// time it starts is started again agent.CrashLimit-1 times, then given up
// on (gaveUp is told why, so that the board records it), and the team goes
// on without it.
func TestTeamGivesUpOnASupervisorThatKeepsDying(t *testing.T) {
	dir := standIn(t, `[ $3 = coder-1 ] && kill -9 $$`)
	var out lockedBuffer
	e := &Env{Dir: dir, Stdout: &out, Stderr: &out, Getenv: os.Getenv}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gaveUp := make(chan string, 2)
	done := make(chan error, 1)
	go func() {
		done <- e.team(ctx, teamSpec{coders: 1, reviewers: 1, out: &out, exe: "sh", events: true, backoff: time.Millisecond,
			gaveUp: func(id, why string) { gaveUp <- id + ": " + why }})
	}()
	select {
	case got := <-gaveUp:
		if want := "coder-1: the supervisor died 3 times in 5m0s, last: signal: killed"; got != want {
			t.Errorf("gave up %q, want %q", got, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the team did not give up on coder-1:\n%s", out.String())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "count.coder-1")); strings.TrimSpace(string(b)) != "3" {
		t.Errorf("coder-1 was started %s times, want 3", b)
	}
	wantLine(t, out.String(), "the supervisor of coder-1 died 3 times in 5m0s (signal: killed): not starting it again")
	select {
	case err := <-done:
		t.Fatalf("the team stopped (%v) while code-reviewer-1 ran", err)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("team = %v, want a clean stop", err)
	}
	waitFor(t, dir, "stopped code-reviewer-1 1")
}

// TestTeamDoesNotRestartAStopThatMeantIt: a supervisor that ended on its
// own (exit 0: the goal completed, ABORT) or refused to go on (exit 1: its
// agent crash-looped, another supervisor took its id) is not started
// again; when no supervisor is left, run ends, with an error for the one
// that failed.
func TestTeamDoesNotRestartAStopThatMeantIt(t *testing.T) {
	dir := standIn(t, `case $3 in coder-1) exit 1;; coder-2) exit 0;; esac`)
	var out lockedBuffer
	e := &Env{Dir: dir, Stdout: &out, Stderr: &out, Getenv: os.Getenv}
	err := e.team(context.Background(), teamSpec{coders: 2, out: &out, exe: "sh", events: true, backoff: time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "supervisors failed: coder-1 (exit status 1)") {
		t.Errorf("team = %v, want coder-1's failure", err)
	}
	for _, id := range []string{"coder-1", "coder-2"} {
		if b, _ := os.ReadFile(filepath.Join(dir, "count."+id)); strings.TrimSpace(string(b)) != "1" {
			t.Errorf("%s was started %s times, want once", id, b)
		}
	}
	if strings.Contains(out.String(), "starting it again") {
		t.Errorf("run restarted a supervisor that meant to stop:\n%s", out.String())
	}
}
