package commands

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/agent"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/proc"
	"github.com/liza-dev/git-liza/refstore"
)

func (e *Env) runCmd() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "start a whole team (planner, coders, reviewers), showing what each supervisor does; Ctrl-C stops it",
		ArgsUsage: "[-- COMMAND ARGS...]",
		Description: "run prints the supervisors' events, one line each; the agents' output goes to their session\n" +
			"logs (git liza logs). --follow AGENT, or -v for every agent, also shows those agents' steps as\n" +
			"git liza logs -f does; --json prints the events as JSON lines. A supervisor that stops for a\n" +
			"missing dependency or its environment (exit 5) stops the team: run says why once and exits 5.\n" +
			"run also watches the board and sends notifications as watch does, unless --no-notify.\n" +
			"A supervisor that dies (killed outright, crashed) is started again after --backoff, doubled for\n" +
			"each death in a row, and resumes its work; after 3 deaths in 5 minutes it is given up on, and the\n" +
			"board records why (an alarm in status, a notification).\n" +
			"Ctrl-C, SIGTERM or SIGHUP stops every supervisor: a coder's task is parked with its work, and the next run\n" +
			"resumes it (status shows it parked, with no alarm). So does closing run's output (git liza run | head):\n" +
			"run says so on stderr and exits 0. A supervisor never outlives run: killed (SIGKILL), run leaves\n" +
			"supervisors that see it gone and stop the same way. A script that started the\n" +
			"team in the background should stop it with SIGTERM: such a job ignores SIGINT, and git, when\n" +
			"git liza run came through it, then reports \"waitpid for git-liza failed\" and exits 128 though\n" +
			"the team stopped cleanly (git-liza run itself exits 0).",
		Flags: append(agentFlags(),
			&cli.IntFlag{Name: "coders", Value: 1, Usage: "how many coders"},
			&cli.IntFlag{Name: "reviewers", Value: 1, Usage: "how many code reviewers"},
			&cli.BoolFlag{Name: "no-planner", Usage: "start no planner (tasks are planned by hand)"},
			&cli.StringSliceFlag{Name: "follow", Usage: "also show the steps of agent `ID` (repeat it, or a comma list)"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "also show every agent's steps"},
			&cli.StringFlag{Name: "keys", Usage: "a directory of SSH signing keys, one per agent named by its id (DIR/coder-1): each agent signs with its own (agent --key)"},
			&cli.BoolFlag{Name: "no-notify", Usage: "send no notifications (run watches the board and sends them, as watch does, by default)"}),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := refuseSupervisors("run"); err != nil {
				return err
			}
			if _, err := agentLaunch(ctx, cmd, cmd.Args().Slice()); err != nil {
				return err
			}
			coders, reviewers := int(cmd.Int("coders")), int(cmd.Int("reviewers"))
			if coders < 0 || reviewers < 0 || coders > 32 || reviewers > 32 {
				return contracts.Invalidf("--coders and --reviewers take 0 to 32")
			}
			s, err := e.openAs(cmd, "")
			if err != nil {
				return err
			}
			if s.repo.MainWorkTree() == "" {
				return contracts.Invalidf("agents need a checkout: run git liza run in a repository with a work tree")
			}
			// Seed 001's window: no more coders than tasks may be in
			// flight at once.
			cfg, err := s.ops.Config(ctx)
			if err != nil {
				return err
			}
			if limit := cfg.InFlightLimit(); coders > limit {
				return contracts.Invalidf("--coders %d is more than max_in_flight (%d): at most %d tasks are in flight at once", coders, limit, limit)
			}
			var extra []string
			if v := cmd.String("cli"); v != "" {
				extra = append(extra, "--cli", v)
			}
			if cmd.Bool("sandboxed") {
				extra = append(extra, "--sandboxed")
			}
			if v := cmd.Duration("poll"); v > 0 {
				extra = append(extra, "--poll", v.String())
			}
			extra = append(extra, "--backoff", cmd.Duration("backoff").String())
			if a := cmd.Args().Slice(); len(a) > 0 {
				extra = append(append(extra, "--"), a...)
			}
			ctx, stop := signal.NotifyContext(ctx, stopSignals...)
			defer stop()
			// Output closed (run | head): the team stops as on Ctrl-C,
			// rather than run dying of SIGPIPE and leaving it running.
			keepSIGPIPE()
			ctx, out, unwatch := stopOnOutputClosed(ctx, e.Stdout)
			defer unwatch()
			longLived()
			defer s.startNotifier(ctx, cmd.Bool("no-notify"))()
			err = e.team(ctx, teamSpec{planner: !cmd.Bool("no-planner"), coders: coders, reviewers: reviewers, args: extra, keys: cmd.String("keys"), out: out, progress: e.progress(),
				events: true, json: cmd.Bool("json"), follow: splitList(cmd.StringSlice("follow")), followAll: cmd.Bool("verbose"), sessions: filepath.Join(s.repo.CommonDir, "liza", "logs", "sessions"),
				backoff: cmd.Duration("backoff"), gaveUp: func(id, why string) { e.retire(s, id, why) }})
			if errors.Is(context.Cause(ctx), errOutputClosed) {
				// Said where it may still be read: stderr.
				fmt.Fprintf(e.Stderr, "git-liza: run: %v: stopped the team (each coder's task parked with its work)\n", errOutputClosed)
			}
			return err
		},
	}
}

// teamSpec says which supervisors a team runs.
type teamSpec struct {
	planner           bool
	coders, reviewers int
	args              []string // flags and command given to every supervisor
	keys              string   // a directory of signing keys by agent id, or ""
	out               io.Writer
	unset             []string // environment variables the supervisors must not inherit
	quiet             bool     // do not prefix-print the supervisors' output
	log               io.Writer
	// events: the supervisors write their events as JSON lines, which
	// are shown one line each (or, with json, as JSON lines); their
	// agents' output goes only to the session logs.
	events, json bool
	// follow are the agents whose sessions' steps are shown too, from
	// their logs under sessions.
	follow    []string
	followAll bool
	sessions  string
	// exe and start are the program that runs a supervisor and how it is
	// started: git-liza itself and exec.Cmd.Start, except in tests.
	exe   string
	start func(*exec.Cmd) error
	// progress, when set, is told what the team is doing (starting,
	// stopping): on a terminal only.
	progress func(string)
	// backoff is the wait before a supervisor that died is started again
	// (doubled for each death in a row); gaveUp, when set, is told of a
	// supervisor given up on, and why (see crew).
	backoff time.Duration
	gaveUp  func(id, why string)
}

// team runs one supervisor process per agent and waits for all of them.
// Cancelling ctx asks each to stop (SIGTERM), which releases its work; so
// does a supervisor that cannot be started, for those already running.
func (e *Env) team(ctx context.Context, t teamSpec) error {
	exe := t.exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return err
		}
	}
	start := t.start
	if start == nil {
		// The supervisors are started from one thread that lives as long
		// as this process, so that their parent-death signal (see below)
		// comes when this process ends, not when some thread of it does.
		sp := proc.NewSpawner()
		defer sp.Close() // after every supervisor has ended: team waits for them
		start = sp.Start
	}
	var ids []string
	if t.planner {
		ids = append(ids, "planner-1")
	}
	for i := 1; i <= t.coders; i++ {
		ids = append(ids, fmt.Sprintf("coder-%d", i))
	}
	for i := 1; i <= t.reviewers; i++ {
		ids = append(ids, fmt.Sprintf("code-reviewer-%d", i))
	}
	if len(ids) == 0 {
		return contracts.Invalidf("a team needs at least one agent")
	}
	if t.followAll {
		t.follow = ids
	}
	for _, id := range t.follow {
		if !slices.Contains(ids, id) {
			return contracts.Invalidf("--follow %s: the team has no such agent (it runs %s)", contracts.Printable(id), strings.Join(ids, ", "))
		}
	}
	keyArgs, err := teamKeys(t.keys, ids)
	if err != nil {
		return err
	}
	width := 0
	for _, id := range ids {
		width = max(width, len(id))
	}
	var mu sync.Mutex
	emit := func(ev agent.Event) {
		mu.Lock()
		defer mu.Unlock()
		if t.log != nil {
			fmt.Fprintf(t.log, "[%-*s] %s\n", width, ev.Agent, eventLine(ev))
		}
		switch {
		case t.quiet:
		case t.json:
			b, _ := json.Marshal(ev)
			fmt.Fprintf(t.out, "%s\n", b)
		case ev.Kind == agent.EventNoWork:
			// "waiting for work" after each session said nothing a person
			// acts on (a fifth of a 4-task run's lines).
		default:
			fmt.Fprintf(t.out, "[%-*s] %s\n", width, ev.Agent, eventLine(ev))
		}
	}
	env := slices.DeleteFunc(agentEnviron(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(t.unset, k)
	})
	if t.progress != nil {
		t.progress(fmt.Sprintf("starting %s; Ctrl-C stops them", strings.Join(ids, ", ")))
	}
	// Followed agents' logs are looked at before any supervisor starts:
	// the sessions already there are not this run's.
	if len(t.follow) > 0 {
		stopFollow := followAgents(t.follow, t.sessions, emit)
		defer stopFollow()
	}
	cr := newCrew(t, len(ids), emit, func(id string) *exec.Cmd {
		role, _ := contracts.ParseAgentID(id)
		args := append(append([]string{"agent", role.IDPrefix(), "--agent", id}, keyArgs[id]...), t.args...)
		if t.events {
			args = slices.Insert(args, 4, "--events=json")
		}
		// A supervisor never outlives this process: it stops (as on
		// SIGTERM) when this process ends, told by the system on Linux
		// (its parent-death signal), and elsewhere when it sees that its
		// parent is no longer this process (--parent).
		args = slices.Insert(args, 4, "--parent", strconv.Itoa(os.Getpid()))
		c := exec.Command(exe, args...)
		c.Dir, c.Env = e.Dir, env
		ownGroup(c)
		proc.DieWithParent(c.SysProcAttr)
		return c
	}, start)
	for _, id := range ids {
		if err := cr.launch(id); err != nil {
			cr.stop()
			cr.wait()
			return contracts.Invalidf("cannot start the supervisor of %s: %v; stopped the others", id, err)
		}
	}
	var failed []string
	var envFail []string // the lines of supervisors that exited 5, each once
	stopping := false
	for range ids {
		var r result
		select {
		case r = <-cr.results:
		case <-ctx.Done():
			if !stopping {
				stopping = true
				if t.progress != nil {
					t.progress("stopping the team: each coder's task is parked with its work, and the next git liza run resumes it")
				}
				cr.stop()
			}
			r = <-cr.results
		}
		// A supervisor stopped by a missing dependency or an environment
		// failure (exit 5) stops the team: the others would meet it too.
		// Its one line is said once, however many supervisors said it.
		var ee *exec.ExitError
		if errors.As(r.err, &ee) && ee.ExitCode() == int(contracts.CodeMissingDep) {
			line := "the supervisor of " + r.id + " stopped (exit 5)"
			if n := len(r.stderr); n > 0 {
				line = strings.TrimPrefix(r.stderr[n-1], "git-liza: ")
			}
			if !slices.Contains(envFail, line) {
				envFail = append(envFail, line)
			}
			if !stopping {
				stopping = true
				if t.progress != nil {
					t.progress("stopping the team: " + r.id + " cannot go on here")
				}
				cr.stop()
			}
			continue
		}
		if !r.told {
			for _, l := range r.stderr {
				emit(agent.Event{T: time.Now(), Agent: r.id, Kind: agent.EventError, Msg: l})
			}
		}
		if r.err != nil {
			failed = append(failed, fmt.Sprintf("%s (%v)", r.id, r.err))
		}
	}
	cr.wait()
	if len(envFail) > 0 {
		return contracts.Errorf(contracts.CodeMissingDep, "%s", strings.Join(envFail, "; "))
	}
	if len(failed) > 0 && !stopping {
		return contracts.Invalidf("supervisors failed: %s", strings.Join(failed, ", "))
	}
	return nil
}

// stderrLines bounds what is kept of a supervisor's stderr: its last lines
// say why it stopped.
const stderrLines = 20

// relayEvents reads a supervisor's output: JSON events (agent --events=json)
// or, from a supervisor that does not write them, lines taken as they are,
// and hands each to emit as the event of agent id. A line longer than
// maxEventLine ends the relay; the rest of the output is read and dropped.
func relayEvents(r io.Reader, id string, emit func(agent.Event)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxEventLine)
	for sc.Scan() {
		var ev agent.Event
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil || ev.Kind == "" {
			ev = agent.Event{T: time.Now(), Kind: eventOutput, Msg: sc.Text()}
		}
		ev.Agent = id
		emit(ev)
	}
	_, _ = io.Copy(io.Discard, r)
}

// maxEventLine bounds one line of a supervisor's output.
const maxEventLine = 1024 * 1024

// eventOutput is the kind run gives a line of a supervisor that is not an
// event.
const eventOutput = "output"

// eventLine is an event as run shows it: its time and message, made
// printable (tabs kept); a line that was no event, as it was.
func eventLine(ev agent.Event) string {
	switch ev.Kind {
	case eventOutput:
		return contracts.PrintableText(ev.Msg)
	case eventStep: // rendered and escaped by transcript.Render
		return ev.T.Format("15:04:05") + "   " + ev.Msg
	}
	return ev.Line()
}

// lastLines reads r to its end and returns its last n lines, each bounded.
func lastLines(r io.Reader, n int) []string {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 64*1024)
	for sc.Scan() {
		if len(out) == n {
			out = out[1:]
		}
		out = append(out, sc.Text())
	}
	_, _ = io.Copy(io.Discard, r)
	return out
}

// teamKeys is the --key flag of each agent's supervisor, from a directory
// holding one key per agent id; every key is checked before any agent
// starts. None without a directory.
func teamKeys(dir string, ids []string) (map[string][]string, error) {
	out := map[string][]string{}
	if dir == "" {
		return out, nil
	}
	for _, id := range ids {
		path, err := refstore.CheckSigningKey(filepath.Join(dir, id))
		if err != nil {
			return nil, contracts.Invalidf("--keys %s: %v", dir, strings.TrimPrefix(err.Error(), "git-liza: "))
		}
		out[id] = []string{"--key", path}
	}
	return out, nil
}
