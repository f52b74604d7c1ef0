// Package commands wires git-liza's verbs to the command line: flags, output
// (text and --json) and the mapping of errors to exit codes.
package commands

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
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
	// Clock, when set, replaces the wall clock (tests pin it); nothing in
	// the environment does.
	Clock func() time.Time

	argv []string // the command line being run
	// svc is the service the command opened, if it did: its JoinHint
	// turns a "no blackboard here" into how to join a remote's board.
	svc *ops.Service
}

// Run parses args (args[0] is the program name), runs the command and
// returns the process exit code. It never calls os.Exit.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return RunAt(ctx, nil, args, stdin, stdout, stderr)
}

// RunAt is Run with clock as the one source of time (nil: the wall clock).
// A test harness pins the clock with it; the shipped binary does not.
func RunAt(ctx context.Context, clock func() time.Time, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if wholeBoardCommands[commandName(args)] {
		longLived()
	} else {
		shortLived()
	}
	if !stateOnly(args) {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	} else {
		// Such a command catches the signals only while it talks to a
		// remote, to stop the git it runs there and take its place in
		// the remote's queue away.
		refstore.CatchSignals()
	}
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "git-liza: %v\n", err)
		return int(contracts.CodeInvalid)
	}
	e := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Dir: dir, Getenv: os.Getenv, Clock: clock}
	return e.Run(ctx, args)
}

// Run runs one command line in e.
func (e *Env) Run(ctx context.Context, args []string) int {
	e.argv, e.svc = args, nil
	if err := envBudget(e.Getenv); err != nil {
		return int(e.fail(err, jsonRequested(args)))
	}
	app := e.root(e.commandsFor(args))
	prepare(app, "")
	err := app.Run(ctx, args)
	if err == nil {
		return 0
	}
	if e.svc != nil {
		err = e.svc.JoinHint(ctx, err)
	}
	return int(e.fail(err, jsonRequested(args)))
}

// app is the whole command tree, as help, the manual and completion read it.
func (e *Env) app() *cli.Command {
	return e.root(e.commandsFor(nil))
}

// root is the top-level command holding cmds.
func (e *Env) root(cmds []*cli.Command) *cli.Command {
	return &cli.Command{
		Name:           "git-liza",
		Usage:          "coordinate teams of AI coding agents through a blackboard kept in git",
		Writer:         e.Stdout,
		ErrWriter:      e.Stderr,
		Reader:         e.Stdin,
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		Flags: append(globalFlags(),
			&cli.BoolFlag{Name: "version", Local: true, Usage: "print git-liza's version (as git liza version does)"}),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			switch {
			case cmd.Bool("version"):
				return e.printVersion(cmd.Bool("json"))
			case cmd.Args().Present():
				return unknownCommand(cmd, cmd.Args().First())
			}
			writeHelp(e.Stdout, cmd)
			return nil
		},
		Commands: cmds,
	}
}

// commandGroups are the constructors of the top-level commands, in the
// order help lists them.
func (e *Env) commandGroups() []func() []*cli.Command {
	one := func(f func() *cli.Command) func() []*cli.Command {
		return func() []*cli.Command { return []*cli.Command{f()} }
	}
	return []func() []*cli.Command{
		one(e.initCmd), one(e.statusCmd), one(e.usageCmd), one(e.showCmd), one(e.logCmd),
		one(e.validateCmd), one(e.importCmd), one(e.exportCmd), one(e.taskCmd), one(e.goalCmd),
		e.lifecycleCmds, e.controlCmds, e.supervisorCmds, e.leverCmds, e.gitCmds, e.helpCmds,
	}
}

// groupOf is the index in commandGroups of the group that builds the
// top-level command name, or -1 when it builds none (and for help, which
// lists them all): a claim then builds its own group, not the task
// command's subcommands and the nine before it. TestGroupOfEveryCommand
// holds it to commandGroups; a name it misses is still found, by building
// the groups in order.
func groupOf(name string) int {
	switch name {
	case "init":
		return 0
	case "status":
		return 1
	case "usage":
		return 2
	case "show":
		return 3
	case "log":
		return 4
	case "validate":
		return 5
	case "import":
		return 6
	case "export":
		return 7
	case "task":
		return 8
	case "goal":
		return 9
	case "claim", "checkpoint", "heartbeat", "submit", "handoff", "review", "verdict", "merge":
		return 10
	case "pause", "resume", "abort", "budget":
		return 11
	case "agent", "run", "logs", "doctor", "supervise", "demo", "demo-agent":
		return 12
	case "anomaly", "discover", "note":
		return 13
	case "worktree", "hooks", "hook", "sync", "integration", "watch", "notify", "analyze", "sprint", "prompt":
		return 14
	case "diff", "board", "serve", "mcp", "version", "install-man", "completion", "__complete":
		return 15
	}
	return -1
}

// commandsFor builds the top-level commands args need: the one they name
// (the same only would keep from the whole tree), none when they only ask
// for the version, and all of them otherwise (nil args: all). Building a
// command's flags and subcommands costs a short-lived process about as
// much as the command line library's preparing them, so the commands
// after the named one are not built at all.
func (e *Env) commandsFor(args []string) []*cli.Command {
	if versionOnly(args) {
		return nil
	}
	name := ""
	if args != nil {
		name = commandName(args)
	}
	groups := e.commandGroups()
	if i := groupOf(name); i >= 0 && name != "help" {
		for _, c := range groups[i]() {
			if named(c, name) {
				return []*cli.Command{c}
			}
		}
	}
	var all []*cli.Command
	for _, g := range groups {
		for _, c := range g() {
			if name != "" && name != "help" && named(c, name) {
				return []*cli.Command{c}
			}
			all = append(all, c)
		}
	}
	return all
}

// versionOnly reports whether args are exactly --version, with or without
// --json, in either order: the root prints the version and reads no
// command. Any other spelling builds the whole tree, as it always did.
func versionOnly(args []string) bool {
	switch len(args) {
	case 2:
		return args[1] == "--version"
	case 3:
		return args[1] == "--version" && args[2] == "--json" || args[1] == "--json" && args[2] == "--version"
	}
	return false
}

// helpCmds are the commands that read about git-liza itself.
func (e *Env) helpCmds() []*cli.Command {
	return []*cli.Command{e.diffCmd(), e.boardCmd(), e.serveCmd(), e.mcpCmd(), e.helpCmd(), e.versionCmd(), e.installManCmd(), e.completionCmd(), e.completeCmd()}
}

// named reports whether name calls c: its name, or an alias of a command
// help shows.
func named(c *cli.Command, name string) bool {
	return c.Name == name || !c.Hidden && c.HasName(name)
}

// globalFlags are the options every command takes.
func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "agent", Usage: "act as agent `ID` (planner-N, coder-N, code-reviewer-N)", Sources: cli.EnvVars("LIZA_AGENT_ID")},
		&cli.BoolFlag{Name: "json", Usage: "machine-readable output on stdout"},
		&cli.StringFlag{Name: "request-id", Usage: "idempotency `KEY`: a retried request with the same key is applied once"},
		&cli.BoolFlag{Name: "offline", Usage: "with liza.remote set: commit locally; git liza sync publishes later"},
		&cli.IntFlag{Name: "generation", Usage: "supervisor registration `N` the agent runs under; refused once a newer registration of the id exists", Sources: cli.EnvVars("LIZA_AGENT_GENERATION"), Hidden: true},
		&cli.DurationFlag{Name: "retry-budget", Usage: "how long to keep retrying lost races", Value: 30 * time.Second, Sources: cli.EnvVars("LIZA_RETRY_BUDGET"),
			Validator: positiveBudget},
	}
}

// positiveBudget refuses a retry budget that is not positive: a budget of
// nothing, or less, would give up on the first lost race.
func positiveBudget(d time.Duration) error {
	if d <= 0 {
		return contracts.Invalidf("the retry budget must be positive")
	}
	return nil
}

// envBudget refuses a LIZA_RETRY_BUDGET that is not positive, in one line
// naming the variable (the command line library would say it could not
// parse it); one it cannot parse is left to the library.
func envBudget(getenv func(string) string) error {
	v := getenv("LIZA_RETRY_BUDGET")
	if d, err := time.ParseDuration(v); v != "" && err == nil && d <= 0 {
		return contracts.Invalidf("LIZA_RETRY_BUDGET=%s: the retry budget must be positive", v)
	}
	return nil
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
// short-lived process a thread and a goroutine), but while they talk to a
// remote (refstore.CatchSignals). Every other command is
// told of SIGINT and SIGTERM through its context, so that it can undo
// what it has done outside the state, such as a worktree made for a claim
// that did not land.
var stateOnlyCommands = map[string]bool{
	"task": true, "checkpoint": true, "heartbeat": true, "handoff": true, "verdict": true,
	"anomaly": true, "discover": true, "note": true, "pause": true, "abort": true,
	"show": true, "export": true, "status": true, "log": true, "validate": true,
	"diff": true, "help": true, "version": true, "completion": true, "__complete": true,
	"goal": true,
}

// stateOnly reports whether args run one of stateOnlyCommands, or a
// claim without a worktree, which makes nothing outside the state either.
func stateOnly(args []string) bool {
	name := commandName(args)
	return stateOnlyCommands[name] || name == "claim" && claimsNoWorktree(args)
}

// claimsNoWorktree reports whether a claim's args surely ask for no
// worktree: --no-worktree given as such, and not given a value (which
// might be false) anywhere.
func claimsNoWorktree(args []string) bool {
	plain := false
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		switch f := strings.TrimLeft(a, "-"); {
		case !strings.HasPrefix(a, "-"):
		case f == "no-worktree":
			plain = true
		case strings.HasPrefix(f, "no-worktree="):
			return false
		}
	}
	return plain
}

// args returns the positional arguments, checking their number.
func args(cmd *cli.Command, min, max int, usage string) ([]string, error) {
	a := cmd.Args().Slice()
	if len(a) < min || max >= 0 && len(a) > max {
		if u, ok := strings.CutPrefix(cmd.UsageText, "git liza "); ok {
			usage = u
		}
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

// wholeBoardCommands read the whole board, or its whole history: they
// keep the collector's defaults, so that their memory follows what they
// hold at once (one entity, as they stream), not what they read.
var wholeBoardCommands = map[string]bool{
	"show": true, "export": true, "validate": true, "log": true, "diff": true, "analyze": true, "sprint": true, "import": true,
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
