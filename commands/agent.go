package commands

import (
	"bufio"
	"bytes"
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
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/agent"
	"github.com/liza-dev/git-liza/contracts"
)

// supervisorCmds start and stop teams of agents.
func (e *Env) supervisorCmds() []*cli.Command {
	return []*cli.Command{e.agentCmd(), e.runCmd(), e.superviseCmd(), e.demoCmd(), e.demoAgentCmd()}
}

func agentFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "cli", Usage: "agent CLI preset: " + strings.Join(agent.PresetNames(), ", ") + " (default claude)"},
		&cli.DurationFlag{Name: "poll", Usage: "how often to look for work (default: the state's config poll interval)"},
		&cli.DurationFlag{Name: "backoff", Value: 2 * time.Second, Usage: "delay after a first crash; doubles with each crash in a row"},
	}
}

func (e *Env) agentCmd() *cli.Command {
	const usage = "agent planner|coder|code-reviewer [--cli NAME] [--replace] [-- COMMAND ARGS...]"
	return &cli.Command{
		Name:      "agent",
		Usage:     "supervise one agent CLI for a role: claim work, run the agent, handle its exit",
		ArgsUsage: "ROLE [-- COMMAND ARGS...]",
		Description: "An agent command that is not installed is refused before anything is registered (exit 5,\n" +
			"a missing dependency). Ctrl-C or SIGTERM stops the supervisor, which releases its work.",
		Flags: append(agentFlags(),
			&cli.BoolFlag{Name: "replace", Usage: "take the agent id from a supervisor that still holds it"}),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			a := cmd.Args().Slice()
			if len(a) < 1 {
				return contracts.Invalidf("usage: git liza %s", usage)
			}
			role, err := contracts.ParseRole(a[0])
			if err != nil {
				return err
			}
			command, err := agentCommand(cmd.String("cli"), a[1:])
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			longLived()
			return e.supervise(ctx, cmd, role, command)
		},
	}
}

// agentCommand resolves the agent command line (see agent.Command) and
// checks that its program is installed, so that a missing CLI is one clear
// refusal before anything is registered or claimed rather than a crash loop
// that blocks a task. The program becomes an absolute path: the agent runs
// in a task's worktree, where a relative one would not be found.
func agentCommand(cli string, args []string) ([]string, error) {
	command, err := agent.Command(cli, args)
	if err != nil {
		return nil, contracts.Invalidf("%v", err)
	}
	path, err := exec.LookPath(command[0])
	if err != nil {
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		return nil, contracts.Errorf(contracts.CodeMissingDep, "agent command %s is not installed or not executable: %v", command[0], err)
	}
	if command[0], err = filepath.Abs(path); err != nil {
		return nil, err
	}
	return command, nil
}

// supervise registers an agent id for the role, runs the supervisor and
// unregisters when it stops.
func (e *Env) supervise(ctx context.Context, cmd *cli.Command, role contracts.Role, command []string) error {
	s, err := e.openAs(cmd, "")
	if err != nil {
		return err
	}
	root := s.repo.MainWorkTree()
	if root == "" {
		return contracts.Invalidf("agents need a checkout: run git liza agent in a repository with a work tree")
	}
	id := cmd.String("agent")
	var gen int
	if id != "" {
		got, err := contracts.ParseAgentID(id)
		if err != nil {
			return err
		}
		if got != role {
			return contracts.Invalidf("agent id %s is not a %s id (want %s-N)", id, role.IDPrefix(), role.IDPrefix())
		}
		if gen, err = e.registerAs(ctx, id, cmd.Bool("replace")); err != nil {
			return err
		}
	} else {
		// The first free id of the role, as the seeds number agents.
		for n := 1; ; n++ {
			id = fmt.Sprintf("%s-%d", role.IDPrefix(), n)
			gen, err = e.registerAs(ctx, id, false)
			if err == nil {
				break
			}
			if !strings.Contains(err.Error(), "already supervised") || n >= 99 {
				return err
			}
		}
	}
	clock, err := e.clock()
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "%s %s supervising %s (generation %d): %s\n", clock().Format("15:04:05"), id, role.IDPrefix(), gen, strings.Join(command, " "))
	c := agent.Config{
		ID: id, Role: role, Generation: gen, Repo: s.repo, Root: root,
		Command: command, Liza: e.inProcess(id, gen),
		Log: e.Stdout, AgentOut: e.Stdout, Env: agentEnviron(),
		Poll: cmd.Duration("poll"), Backoff: cmd.Duration("backoff"),
		Remote:    s.remote() != "",
		PromptDir: filepath.Join(s.repo.CommonDir, "liza", "prompts"),
		Now:       clock,
	}
	runErr := agent.Run(ctx, c)
	if errors.Is(runErr, agent.ErrStale) {
		return contracts.Invalidf("%v", runErr)
	}
	// Unregister even when interrupted: the work must be released.
	done, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.inProcess(id, gen)(done, "supervise", "exit"); err != nil {
		fmt.Fprintf(e.Stderr, "git-liza: %s: %v\n", id, err)
	} else {
		fmt.Fprintf(e.Stdout, "%s %s stopped\n", clock().Format("15:04:05"), id)
	}
	if runErr != nil {
		return contracts.Invalidf("%s: %v", id, runErr)
	}
	return nil
}

// registerAs registers id for a supervisor and returns its generation.
func (e *Env) registerAs(ctx context.Context, id string, replace bool) (int, error) {
	args := []string{"--json", "supervise", "register"}
	if replace {
		args = append(args, "--replace")
	}
	out, err := e.inProcess(id, 0)(ctx, args...)
	if err != nil {
		return 0, err
	}
	var r registration
	if err := json.Unmarshal(out, &r); err != nil {
		return 0, err
	}
	return r.Generation, nil
}

// inProcess runs git-liza commands in this process for agent id at
// generation gen (0: none), capturing their output. A failed command
// returns a *contracts.Error with its exit code and one-line message,
// wrapping the command's own error.
func (e *Env) inProcess(id string, gen int) agent.Liza {
	return func(ctx context.Context, args ...string) ([]byte, error) {
		var out bytes.Buffer
		sub := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: io.Discard, Dir: e.Dir,
			Getenv: func(k string) string {
				switch k {
				case "LIZA_AGENT_ID":
					return id
				case "LIZA_AGENT_GENERATION":
					if gen == 0 {
						return ""
					}
					return fmt.Sprint(gen)
				}
				return e.Getenv(k)
			}}
		argv := append([]string{"git-liza", "--agent", id, fmt.Sprintf("--generation=%d", gen)}, args...)
		sub.argv = argv
		app := sub.app()
		app.Commands = only(app, argv)
		if err := app.Run(ctx, argv); err != nil {
			code, msg := exitCode(err)
			return out.Bytes(), &contracts.Error{Code: code, Msg: msg, Err: err}
		}
		return out.Bytes(), nil
	}
}

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

func (e *Env) runCmd() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "start a whole team (planner, coders, reviewers) with prefixed output; Ctrl-C stops it",
		ArgsUsage: "[-- COMMAND ARGS...]",
		Description: "Ctrl-C or SIGTERM stops every supervisor, which releases its work. A script that started the\n" +
			"team in the background should stop it with SIGTERM: such a job ignores SIGINT, and git, when\n" +
			"git liza run came through it, then reports \"waitpid for git-liza failed\" and exits 128 though\n" +
			"the team stopped cleanly (git-liza run itself exits 0).",
		Flags: append(agentFlags(),
			&cli.IntFlag{Name: "coders", Value: 1, Usage: "how many coders"},
			&cli.IntFlag{Name: "reviewers", Value: 1, Usage: "how many code reviewers"},
			&cli.BoolFlag{Name: "no-planner", Usage: "start no planner (tasks are planned by hand)"}),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if _, err := agentCommand(cmd.String("cli"), cmd.Args().Slice()); err != nil {
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
			var extra []string
			if v := cmd.String("cli"); v != "" {
				extra = append(extra, "--cli", v)
			}
			if v := cmd.Duration("poll"); v > 0 {
				extra = append(extra, "--poll", v.String())
			}
			extra = append(extra, "--backoff", cmd.Duration("backoff").String())
			if a := cmd.Args().Slice(); len(a) > 0 {
				extra = append(append(extra, "--"), a...)
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			longLived()
			return e.team(ctx, teamSpec{planner: !cmd.Bool("no-planner"), coders: coders, reviewers: reviewers, args: extra, out: e.Stdout})
		},
	}
}

// teamSpec says which supervisors a team runs.
type teamSpec struct {
	planner           bool
	coders, reviewers int
	args              []string // flags and command given to every supervisor
	out               io.Writer
	unset             []string // environment variables the supervisors must not inherit
	quiet             bool     // do not prefix-print the supervisors' output
	log               io.Writer
	// exe and start are the program that runs a supervisor and how it is
	// started: git-liza itself and exec.Cmd.Start, except in tests.
	exe   string
	start func(*exec.Cmd) error
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
		start = (*exec.Cmd).Start
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
	width := 0
	for _, id := range ids {
		width = max(width, len(id))
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	type result struct {
		id  string
		err error
	}
	results := make(chan result, len(ids))
	var procs []*exec.Cmd
	stop := func() {
		for _, p := range procs {
			_ = p.Process.Signal(syscall.SIGTERM)
		}
	}
	env := slices.DeleteFunc(agentEnviron(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(t.unset, k)
	})
	for _, id := range ids {
		role, _ := contracts.ParseAgentID(id)
		args := append([]string{"agent", role.IDPrefix(), "--agent", id}, t.args...)
		c := exec.Command(exe, args...)
		c.Dir, c.Env = e.Dir, env
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		pr, pw := io.Pipe()
		c.Stdout, c.Stderr = pw, pw
		if err := start(c); err != nil {
			pw.Close()
			stop()
			for range procs {
				<-results
			}
			wg.Wait()
			return contracts.Invalidf("cannot start the supervisor of %s: %v; stopped the others", id, err)
		}
		procs = append(procs, c)
		prefix := fmt.Sprintf("[%-*s] ", width, id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(pr)
			sc.Buffer(make([]byte, 64*1024), 1024*1024)
			for sc.Scan() {
				mu.Lock()
				if t.log != nil {
					fmt.Fprintf(t.log, "%s%s\n", prefix, sc.Text())
				}
				if !t.quiet {
					fmt.Fprintf(t.out, "%s%s\n", prefix, sc.Text())
				}
				mu.Unlock()
			}
			_, _ = io.Copy(io.Discard, pr)
		}()
		go func() {
			err := c.Wait()
			pw.Close()
			results <- result{id, err}
		}()
	}
	var failed []string
	stopping := false
	for range procs {
		var r result
		select {
		case r = <-results:
		case <-ctx.Done():
			if !stopping {
				stopping = true
				stop()
			}
			r = <-results
		}
		if r.err != nil {
			failed = append(failed, fmt.Sprintf("%s (%v)", r.id, r.err))
		}
	}
	wg.Wait()
	if len(failed) > 0 && !stopping {
		return contracts.Invalidf("supervisors failed: %s", strings.Join(failed, ", "))
	}
	return nil
}
