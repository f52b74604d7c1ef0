package commands

import (
	"bufio"
	"context"
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

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

func (e *Env) runCmd() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "start a whole team (planner, coders, reviewers) with prefixed output; Ctrl-C stops it",
		ArgsUsage: "[-- COMMAND ARGS...]",
		Description: "Ctrl-C or SIGTERM stops every supervisor: a coder's task is parked with its work, and the next run\n" +
			"resumes it (status shows it parked, with no alarm). A script that started the\n" +
			"team in the background should stop it with SIGTERM: such a job ignores SIGINT, and git, when\n" +
			"git liza run came through it, then reports \"waitpid for git-liza failed\" and exits 128 though\n" +
			"the team stopped cleanly (git-liza run itself exits 0).",
		Flags: append(agentFlags(),
			&cli.IntFlag{Name: "coders", Value: 1, Usage: "how many coders"},
			&cli.IntFlag{Name: "reviewers", Value: 1, Usage: "how many code reviewers"},
			&cli.BoolFlag{Name: "no-planner", Usage: "start no planner (tasks are planned by hand)"},
			&cli.StringFlag{Name: "keys", Usage: "a directory of SSH signing keys, one per agent named by its id (DIR/coder-1): each agent signs with its own (agent --key)"},
			&cli.BoolFlag{Name: "no-notify", Usage: "send no notifications (run watches the board and sends them, as watch does, by default)"}),
		Action: func(ctx context.Context, cmd *cli.Command) error {
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
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			longLived()
			defer s.startNotifier(ctx, cmd.Bool("no-notify"))()
			return e.team(ctx, teamSpec{planner: !cmd.Bool("no-planner"), coders: coders, reviewers: reviewers, args: extra, keys: cmd.String("keys"), out: e.Stdout, progress: e.progress()})
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
	// exe and start are the program that runs a supervisor and how it is
	// started: git-liza itself and exec.Cmd.Start, except in tests.
	exe   string
	start func(*exec.Cmd) error
	// progress, when set, is told what the team is doing (starting,
	// stopping): on a terminal only.
	progress func(string)
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
	keyArgs, err := teamKeys(t.keys, ids)
	if err != nil {
		return err
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
	if t.progress != nil {
		t.progress(fmt.Sprintf("starting %s; Ctrl-C stops them", strings.Join(ids, ", ")))
	}
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
		args := append(append([]string{"agent", role.IDPrefix(), "--agent", id}, keyArgs[id]...), t.args...)
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
				// A supervisor's output is its own lines and its agent's
				// output, which is whatever the model chose to print:
				// each line is made printable (tabs kept) before it
				// reaches the terminal or the log.
				line := contracts.PrintableText(sc.Text())
				mu.Lock()
				if t.log != nil {
					fmt.Fprintf(t.log, "%s%s\n", prefix, line)
				}
				if !t.quiet {
					fmt.Fprintf(t.out, "%s%s\n", prefix, line)
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
				if t.progress != nil {
					t.progress("stopping the team: each coder's task is parked with its work, and the next git liza run resumes it")
				}
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
