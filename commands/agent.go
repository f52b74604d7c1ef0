package commands

import (
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
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/agent"
	"github.com/liza-dev/git-liza/companion"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/doctor"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/proc"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// supervisorCmds start and stop teams of agents.
func (e *Env) supervisorCmds() []*cli.Command {
	return []*cli.Command{e.agentCmd(), e.runCmd(), e.logsCmd(), e.doctorCmd(), e.superviseCmd(), e.demoCmd(), e.demoAgentCmd()}
}

func agentFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "cli", Usage: "agent CLI preset: " + strings.Join(agent.PresetNames(), ", ") + " (default claude)"},
		&cli.BoolFlag{Name: "sandboxed", Usage: "this machine is an isolated sandbox: presets turn their CLI's own sandbox and prompts off"},
		&cli.DurationFlag{Name: "poll", Usage: "how often to look for work (default: the state's config poll interval)"},
		&cli.DurationFlag{Name: "backoff", Value: 2 * time.Second, Usage: "delay after a first crash; doubles with each crash in a row"},
	}
}

func (e *Env) agentCmd() *cli.Command {
	const usage = "agent planner|coder|code-reviewer [--cli NAME] [--replace] [--key PATH] [-- COMMAND ARGS...]"
	return &cli.Command{
		Name:      "agent",
		Usage:     "supervise one agent CLI for a role: claim work, run the agent, handle its exit",
		ArgsUsage: "ROLE [-- COMMAND ARGS...]",
		Description: "An agent command that is not installed is refused before anything is registered (exit 5,\n" +
			"a missing dependency). Ctrl-C, SIGTERM or SIGHUP stops the supervisor: a coder's task is parked with its work for the\n" +
			"next start, a reviewer's review released. So does closing its output.",
		Flags: append(agentFlags(),
			&cli.BoolFlag{Name: "replace", Usage: "take the agent id from a supervisor that still holds it"},
			&cli.StringFlag{Name: "key", Usage: "the agent's own SSH signing key: its supervisor's state commits, its commits and its git liza commands are signed with it"},
			// run's supervisors write their events as JSON lines, which
			// run decodes, and keep their agents' output to the logs.
			&cli.StringFlag{Name: "events", Hidden: true, Usage: "json: events as JSON lines on stdout, the agent's output in its session log only"},
			// run names itself: the supervisor stops once its parent is
			// no longer that process.
			&cli.IntFlag{Name: "parent", Hidden: true, Usage: "the pid of the git liza run that started this supervisor: it stops when that process is gone"}),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := refuseSupervisors("agent"); err != nil {
				return err
			}
			a := cmd.Args().Slice()
			if len(a) < 1 {
				return contracts.Invalidf("usage: git liza %s", usage)
			}
			role, err := contracts.ParseRole(a[0])
			if err != nil {
				return err
			}
			launch, err := agentLaunch(ctx, cmd, a[1:])
			if err != nil {
				return err
			}
			if err := signWith(cmd.String("key")); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(ctx, stopSignals...)
			defer stop()
			// Its output closed (its run gone, or agent ... | head), the
			// supervisor stops and unregisters rather than die of SIGPIPE
			// on its next line.
			keepSIGPIPE()
			ctx, out, unwatch := stopOnOutputClosed(ctx, e.Stdout)
			defer unwatch()
			if parent := int(cmd.Int("parent")); parent > 0 {
				var gone context.CancelCauseFunc
				ctx, gone = context.WithCancelCause(ctx)
				defer gone(nil)
				proc.WatchParent(ctx, parent, parentCheck, func() { gone(errParentGone) })
			}
			longLived()
			se := *e
			se.Stdout = out
			return se.supervise(ctx, cmd, role, launch)
		},
	}
}

// agentLaunch resolves the agent command line (see agent.Resolve) and
// makes the checks a team needs before anything is registered or claimed
// (doctor.Preflight): git, the agent CLI installed and recent enough, and a
// preset able to run as this user, so that a CLI that cannot run is one
// clear refusal (exit 5) rather than a crash loop that blocks a task. The
// program becomes an absolute path: the agent runs in a task's worktree,
// where a relative one would not be found.
func agentLaunch(ctx context.Context, cmd *cli.Command, args []string) (agent.Launch, error) {
	l, err := agent.Resolve(cmd.String("cli"), args, cmd.Bool("sandboxed"))
	if err != nil {
		return l, contracts.Invalidf("%v", err)
	}
	if err := doctor.Preflight(ctx, doctor.Request{Launch: l, EUID: os.Geteuid()}); err != nil {
		return l, err
	}
	path, err := exec.LookPath(l.Command[0])
	if err != nil {
		return l, contracts.Errorf(contracts.CodeMissingDep, "agent command %s is not installed: %v", l.Command[0], err)
	}
	if l.Command[0], err = filepath.Abs(path); err != nil {
		return l, err
	}
	// A preset's sessions start git liza's MCP server, git-liza-mcp,
	// when it is installed (the supervisor says once when it is not).
	if p, ok := companion.Find(MCPProgram); ok {
		l.MCP, _ = filepath.Abs(p)
	}
	return l, nil
}

// signWith makes this process, and the agent it starts, sign with the
// private key at key (none when empty): git's configuration for it goes
// in the environment (refstore.SigningEnv), which the supervisor's own
// state commits, the agent's commits and its git liza commands all read,
// and no file of the repository changes. A key others can read is
// refused.
func signWith(key string) error {
	if key == "" {
		return nil
	}
	path, err := refstore.CheckSigningKey(key)
	if err != nil {
		return err
	}
	for _, kv := range refstore.SigningEnv(os.Environ(), path) {
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GIT_CONFIG_") {
			if err := os.Setenv(k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// supervise registers an agent id for the role, runs the supervisor and
// unregisters when it stops.
func (e *Env) supervise(ctx context.Context, cmd *cli.Command, role contracts.Role, launch agent.Launch) error {
	if v := cmd.String("events"); v != "" && v != "json" {
		return contracts.Invalidf("--events takes json, not %q", v)
	}
	s, err := e.openAs(cmd, "")
	if err != nil {
		return err
	}
	root := s.repo.MainWorkTree()
	if root == "" {
		return contracts.Invalidf("agents need a checkout: run git liza agent in a repository with a work tree")
	}
	id := cmd.String("agent")
	// Before the supervisor runs, a wait to register is said where its
	// events go (run shows them), made printable either way.
	tell := func(msg string) {
		ev := agent.Event{T: s.ops.Now(), Agent: id, Kind: agent.EventWaiting, Msg: msg}
		if cmd.String("events") == "json" {
			_ = json.NewEncoder(e.Stdout).Encode(ev)
		} else {
			fmt.Fprintf(e.Stdout, "%s %s\n", ev.T.Format("15:04:05"), contracts.Printable(msg))
		}
	}
	var reg *ops.Registration
	if id != "" {
		got, err := contracts.ParseAgentID(id)
		if err != nil {
			return err
		}
		if got != role {
			return contracts.Invalidf("agent id %s is not a %s id (want %s-N)", id, role.IDPrefix(), role.IDPrefix())
		}
		if reg, err = e.registerWaiting(ctx, s, id, cmd.Bool("replace"), tell); err != nil {
			return err
		}
	} else {
		// The first free id of the role, as the seeds number agents.
		for n := 1; ; n++ {
			id = fmt.Sprintf("%s-%d", role.IDPrefix(), n)
			reg, err = e.registerWaiting(ctx, s, id, false, tell)
			if err == nil {
				break
			}
			if !strings.Contains(err.Error(), "already supervised") || n >= 99 {
				return err
			}
		}
	}
	gen := reg.Generation
	board := s.ops.As(id, gen)
	// A reviewer merges one task after another: its integration tests
	// share one worktree, removed when it stops.
	board.TestCheckout = &worktree.Kept{}
	// The program by its name: where it is installed is doctor's to say,
	// and a team's first lines should not be two absolute paths long.
	how := strings.Join(append([]string{filepath.Base(launch.Command[0])}, launch.Command[1:]...), " ")
	if launch.Preset != nil {
		how = launch.Preset.Name + " preset"
	}
	if launch.Sandboxed {
		how += " (sandboxed)"
	}
	// The supervisor's lines quote agents' text, and its agent's output is
	// whatever the model printed: both reach the terminal made printable.
	logOut, agentOut := newPrintableWriter(e.Stdout), newPrintableWriter(e.Stdout)
	defer agentOut.Flush()
	var events func(agent.Event)
	if cmd.String("events") == "json" {
		enc := json.NewEncoder(e.Stdout)
		events = func(ev agent.Event) { _ = enc.Encode(ev) }
		agentOut = newPrintableWriter(io.Discard)
	}
	say := func(kind, format string, args ...any) {
		ev := agent.Event{T: board.Now(), Agent: id, Kind: kind, Msg: fmt.Sprintf(format, args...)}
		if events != nil {
			events(ev)
		} else {
			fmt.Fprintf(e.Stdout, "%s %s\n", ev.T.Format("15:04:05"), ev.Msg)
		}
	}
	say(agent.EventStarted, "%s supervising %s (generation %d): %s", id, role.IDPrefix(), gen, how)
	c := agent.Config{
		ID: id, Role: role, Generation: gen, Repo: s.repo, Root: root,
		Launch: launch, Board: board, Events: events,
		Log: logOut, AgentOut: agentOut, Env: agentEnviron(),
		Poll: cmd.Duration("poll"), Backoff: cmd.Duration("backoff"),
		Remote:    board.Remote() != "",
		PromptDir: filepath.Join(s.repo.CommonDir, "liza", "prompts"),
		LogDir:    filepath.Join(s.repo.CommonDir, "liza", "logs", "sessions"),
		Now:       board.Now,
	}
	// A session never outlives its supervisor: killed outright (SIGKILL,
	// an out-of-memory kill), the supervisor could neither time-box it,
	// nor hold it to the budgets, nor record what it spent. On Linux the
	// kernel sends the session's agent SIGTERM when the supervisor ends;
	// the sessions are started from one thread that lives as long as the
	// supervisor (proc.Spawner), and have all ended when Run returns.
	// What the agent started in its group is ended by a keeper
	// (proc.GroupKeeper) that learns of the supervisor's end from a pipe.
	sp := proc.NewSpawner()
	var keeper proc.GroupKeeper
	c.StartSession = func(cmd *exec.Cmd) error {
		if cmd.SysProcAttr != nil {
			proc.DieWithParent(cmd.SysProcAttr)
		}
		if err := sp.Start(cmd); err != nil {
			return err
		}
		keeper.Keep(cmd.Process.Pid) // the leader of its own group (agent.ownGroup)
		return nil
	}
	c.EndSession = func(cmd *exec.Cmd) { keeper.Drop(cmd.Process.Pid) }
	runErr := agent.Run(ctx, c)
	sp.Close()
	keeper.Close()
	if errors.Is(runErr, agent.ErrStale) {
		forgetSupervisor(s.repo, id) // the board names its successor
		return contracts.Invalidf("%v", runErr)
	}
	// Unregister even when interrupted: the work must be released. More
	// stop signals may follow the first (a group killed with kill -TERM
	// -PGID, a second Ctrl-C), and a lost last write would leave the id
	// registered, refusing the next start for a lease term. This process
	// handles them; its git update-ref runs in a process group of its own
	// (refstore), out of their reach once started; a signal that lands
	// between its fork and its move to that group kills it, and the write
	// is simply tried again.
	done, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := board.TestCheckout.Close(done, s.repo); err != nil {
		fmt.Fprintf(e.Stderr, "git-liza: %s: removing its integration tests' worktree: %s\n", id, contracts.Printable(err.Error()))
	}
	out, err := board.Unregister(done, ops.UnregisterRequest{Reason: stopReason(runErr)})
	for try := 1; err != nil && ops.Class(err) == contracts.CodeGit && try < unregisterTries; try++ {
		out, err = board.Unregister(done, ops.UnregisterRequest{Reason: stopReason(runErr)})
	}
	if err != nil {
		// Its note stays: the board may still name this process.
		fmt.Fprintf(e.Stderr, "git-liza: %s: %s\n", id, contracts.Printable(err.Error()))
	} else {
		forgetSupervisor(s.repo, id)
		say(agent.EventStopped, "%s stopped%s", id, parkedLine(role, out.Released))
	}
	// An agent CLI that cannot work here (not logged in, its endpoint
	// unreachable, ...) is a missing dependency: exit 5, one line with
	// the CLI's words and the fix.
	var envErr *agent.EnvError
	if errors.As(runErr, &envErr) {
		return contracts.Errorf(contracts.CodeMissingDep, "%s stopped: %s", id, envErr.Line())
	}
	if runErr != nil {
		return contracts.Invalidf("%s: %v", id, runErr)
	}
	return nil
}

// parkedLine says, after a coder's supervisor stopped, which tasks it
// parked and how they go on.
func parkedLine(role contracts.Role, tasks []string) string {
	if role != contracts.RoleCoder || len(tasks) == 0 {
		return ""
	}
	return fmt.Sprintf("; parked %s with its work (%s)", contracts.Printable(strings.Join(tasks, ", ")), contracts.ResumeHint)
}

// parentCheck is how often a supervisor started by git liza run looks
// whether that run is still its parent: a getppid, nearly free.
const parentCheck = time.Second

// unregisterTries bounds the tries of a supervisor's last write.
const unregisterTries = 20

// agentEnviron is the environment agent processes start from: this
// process's, without the agent identity of whoever started it, and with
// git-liza on PATH so that `git liza` works inside the agent.
func agentEnviron() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "LIZA_AGENT_ID=") || strings.HasPrefix(kv, "LIZA_AGENT_GENERATION=")
	})
	if exe, err := os.Executable(); err == nil && strings.TrimSuffix(filepath.Base(exe), ".exe") == "git-liza" {
		env = append(env, "PATH="+filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	return env
}
