package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
`
	var got []agent.Event
	relayEvents(strings.NewReader(in), "coder-1", func(ev agent.Event) { got = append(got, ev) })
	if len(got) != 3 {
		t.Fatalf("%d events, want 3: %+v", len(got), got)
	}
	if ev := got[0]; ev.Agent != "coder-1" || ev.Kind != agent.EventClaimed || ev.Task != "a" || eventLine(ev) != "10:00:00 claimed a (claimed)" {
		t.Errorf("event 1 = %+v (%q)", ev, eventLine(ev))
	}
	for _, ev := range got[1:] {
		if ev.Kind != eventOutput || ev.Agent != "coder-1" {
			t.Errorf("line taken as %+v", ev)
		}
	}
	b, _ := json.Marshal(got[0])
	if want := `{"t":"2026-01-17T10:00:00Z","agent":"coder-1","kind":"claimed","task":"a","msg":"claimed a (claimed)"}`; string(b) != want {
		t.Errorf("json = %s, want %s", b, want)
	}
}
