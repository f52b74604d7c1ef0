// Package commands wires git-liza's verbs to the command line: flags, output
// (text and --json) and the mapping of errors to exit codes.
package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// Env is what a command reads and writes besides the repository, so that
// tests can capture it.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Dir is the directory the command runs in.
	Dir string
	// Getenv reads the environment.
	Getenv func(string) string

	argv []string // the command line being run
}

// Run parses args (args[0] is the program name), runs the command and
// returns the process exit code. It never calls os.Exit.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	shortLived()
	if !stateOnly(args) {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "git-liza: %v\n", err)
		return int(contracts.CodeInvalid)
	}
	e := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Dir: dir, Getenv: os.Getenv}
	return e.Run(ctx, args)
}

// Run runs one command line in e.
func (e *Env) Run(ctx context.Context, args []string) int {
	e.argv = args
	app := e.app()
	app.Commands = only(app, args)
	err := app.Run(ctx, args)
	if err == nil {
		return 0
	}
	code, msg := exitCode(err)
	fmt.Fprintf(e.Stderr, "git-liza: %s\n", msg)
	return int(code)
}

func (e *Env) app() *cli.Command {
	return &cli.Command{
		Name:            "git-liza",
		Usage:           "coordinate teams of AI coding agents through a blackboard kept in git",
		Writer:          e.Stdout,
		ErrWriter:       e.Stderr,
		Reader:          e.Stdin,
		HideHelpCommand: true,
		ExitErrHandler:  func(context.Context, *cli.Command, error) {},
		OnUsageError: func(_ context.Context, _ *cli.Command, err error, _ bool) error {
			return contracts.Invalidf("%v", err)
		},
		Flags: globalFlags(),
		Commands: slices.Concat([]*cli.Command{
			e.initCmd(),
			e.statusCmd(),
			e.showCmd(),
			e.logCmd(),
			e.validateCmd(),
			e.importCmd(),
			e.exportCmd(),
			e.taskCmd(),
		}, e.lifecycleCmds(), e.controlCmds(), e.supervisorCmds(), e.leverCmds(), e.gitCmds()),
	}
}

// only narrows the commands of app to the one args name, when they name
// one: the command line library prepares every command it holds before it
// runs one, which costs a short-lived process more than the work of most
// commands. Help, a mistyped name and anything unusual keep them all.
func only(app *cli.Command, args []string) []*cli.Command {
	name := commandName(args)
	for _, c := range app.Commands {
		if name != "" && (c.Name == name || !c.Hidden && c.HasName(name)) {
			return []*cli.Command{c}
		}
	}
	return app.Commands
}

// globalFlags are the options every command takes.
func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "agent", Usage: "act as agent `ID` (planner-N, coder-N, code-reviewer-N)", Sources: cli.EnvVars("LIZA_AGENT_ID")},
		&cli.BoolFlag{Name: "json", Usage: "machine-readable output on stdout"},
		&cli.StringFlag{Name: "request-id", Usage: "idempotency `KEY`: a retried request with the same key is applied once"},
		&cli.BoolFlag{Name: "offline", Usage: "with liza.remote set: commit locally; git liza sync publishes later"},
		&cli.IntFlag{Name: "generation", Usage: "supervisor registration `N` the agent runs under; refused once a newer registration of the id exists", Sources: cli.EnvVars("LIZA_AGENT_GENERATION"), Hidden: true},
		&cli.DurationFlag{Name: "retry-budget", Usage: "how long to keep retrying lost races", Value: 30 * time.Second, Sources: cli.EnvVars("LIZA_RETRY_BUDGET")},
	}
}

// commandName is the first word of args (after the program name) that is
// not a global option or its value: the command that args run.
func commandName(args []string) string {
	valued := map[string]bool{}
	for _, f := range globalFlags() {
		if _, isBool := f.(*cli.BoolFlag); !isBool {
			for _, n := range f.Names() {
				valued[n] = true
			}
		}
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" {
			return ""
		}
		if !strings.HasPrefix(a, "-") {
			return a
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasValue && valued[name] {
			i++
		}
	}
	return ""
}

// stateOnlyCommands change nothing but refs/liza/state, in one
// compare-and-swap, or only read: interrupted, they leave nothing to clean
// up, so they run without a signal handler (setting one up costs a
// short-lived process a thread and a goroutine). Every other command is
// told of SIGINT and SIGTERM through its context, so that it can undo
// what it has done outside the state, such as a worktree made for a claim
// that did not land.
var stateOnlyCommands = map[string]bool{
	"task": true, "checkpoint": true, "heartbeat": true, "handoff": true, "verdict": true,
	"anomaly": true, "discover": true, "note": true, "pause": true, "abort": true,
	"show": true, "export": true, "status": true, "log": true, "validate": true,
}

// stateOnly reports whether args run one of stateOnlyCommands.
func stateOnly(args []string) bool {
	return stateOnlyCommands[commandName(args)]
}

// session is what a command that works on the blackboard needs.
type session struct {
	*Env
	cmd   *cli.Command
	repo  *refstore.Repo
	store *cas.Store
	agent string
	json  bool
}

// action is the Action of a command that takes min to max positional
// arguments (max -1: any number) and works on the blackboard for the
// caller's agent.
func (e *Env) action(min, max int, usage string, run func(ctx context.Context, s *session, a []string) error) cli.ActionFunc {
	return func(ctx context.Context, cmd *cli.Command) error {
		a, err := args(cmd, min, max, usage)
		if err != nil {
			return err
		}
		s, err := e.open(cmd)
		if err != nil {
			return err
		}
		return run(ctx, s, a)
	}
}

// open finds the repository and checks git and the agent id.
func (e *Env) open(cmd *cli.Command) (*session, error) {
	return e.openAs(cmd, cmd.String("agent"))
}

// openAs is open for a given agent id.
func (e *Env) openAs(cmd *cli.Command, agent string) (*session, error) {
	repo, err := refstore.Open(e.Dir)
	if gerr := refstore.CheckGit(); gerr != nil {
		return nil, gerr
	}
	if err != nil {
		return nil, err
	}
	if _, err := contracts.ParseAgentID(agent); err != nil {
		return nil, err
	}
	clock, err := e.clock()
	if err != nil {
		return nil, err
	}
	s := &session{Env: e, cmd: cmd, repo: repo, agent: agent, json: cmd.Bool("json")}
	s.store = &cas.Store{Repo: repo, Clock: clock, Budget: cmd.Duration("retry-budget"), Author: identity(repo, e.Getenv),
		Remote: repo.RemoteOf(), Offline: cmd.Bool("offline")}
	if s.store.Remote != "" {
		if err := repo.CheckRemote(s.store.Remote); err != nil {
			return nil, contracts.Invalidf("liza.remote names %s, but %v", s.store.Remote, err)
		}
	}
	return s, nil
}

// clock is the one source of time (see cas.ClockFromEnv).
func (e *Env) clock() (func() time.Time, error) { return cas.ClockFromEnv(e.Getenv) }

// identity is the author of commits made for the human operator: git's
// author identity when there is one, else a fixed one.
func identity(repo *refstore.Repo, getenv func(string) string) refstore.Signature {
	name, email := getenv("GIT_AUTHOR_NAME"), getenv("GIT_AUTHOR_EMAIL")
	if name == "" {
		name, _ = repo.Config("user.name")
	}
	if email == "" {
		email, _ = repo.Config("user.email")
	}
	if name == "" {
		return refstore.Signature{}
	}
	if email == "" {
		email = "unknown"
	}
	return refstore.Signature{Name: name, Email: email}
}

// update runs an operation for the session's agent.
func (s *session) update(ctx context.Context, op cas.Op) (*cas.Result, error) {
	if err := contracts.Permit(s.agent, op.Name); err != nil {
		return nil, err
	}
	op.Agent = s.agent
	op.Request = s.cmd.String("request-id")
	op.Command = s.command()
	if s.agent != "" {
		op.Generation = int(s.cmd.Int("generation"))
	}
	return s.store.Update(ctx, op)
}

// command is the command line to record with an operation, so that sync
// can run it again on the remote's state: without the program name and
// without --offline.
func (s *session) command() []string {
	if len(s.argv) < 2 {
		return nil
	}
	out := make([]string, 0, len(s.argv)-1)
	for _, a := range s.argv[1:] {
		if a != "--offline" && a != "--offline=true" {
			out = append(out, a)
		}
	}
	return out
}

// remote is the remote of remote mode, or "" (local mode, or --offline).
func (s *session) remote() string {
	if s.store.Offline {
		return ""
	}
	return s.store.Remote
}

// branchTip is where a branch is: on the remote in remote mode (fetched
// now into its tracking ref, so its commits are here too), else here.
func (s *session) branchTip(ctx context.Context, ref string) (refstore.Hash, bool, error) {
	if r := s.remote(); r != "" {
		got, err := s.repo.Fetch(ctx, r, ref)
		if err != nil {
			return refstore.Hash{}, false, err
		}
		h, ok := got[ref]
		return h, ok, nil
	}
	return s.repo.ReadRef(ref)
}

// printJSON writes v as indented JSON.
func (s *session) printJSON(v any) error {
	enc := json.NewEncoder(s.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// args returns the positional arguments, checking their number.
func args(cmd *cli.Command, min, max int, usage string) ([]string, error) {
	a := cmd.Args().Slice()
	if len(a) < min || max >= 0 && len(a) > max {
		return nil, contracts.Invalidf("usage: git liza %s", usage)
	}
	return a, nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// shortLived sets the garbage collector for a process that runs one
// command and exits: collecting costs more than the memory it would free,
// so it runs only if the heap nears memoryLimit. A GOGC or GOMEMLIMIT set
// by the user is left alone. Commands that keep running call longLived.
func shortLived() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(memoryLimit)
	}
}

// memoryLimit bounds the heap of a short-lived command before the
// collector runs at all.
const memoryLimit = 512 << 20

// longLived restores the collector's defaults, for a command that keeps
// running (a supervisor, a watch, a team, the demo).
func longLived() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	}
}
