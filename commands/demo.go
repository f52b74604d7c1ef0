package commands

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// demoFiles are the demo project's first commit: a spec, and an
// integration test that runs every test the coders write.
var demoFiles = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"specs/vision.md": `# Greeting toolkit

A few POSIX shell commands that greet people.

## Commands
- bin/greet NAME prints "Hello, NAME!"; with no NAME, "Hello, World!".
- bin/farewell NAME prints "Goodbye, NAME!"; with no NAME, "Goodbye, World!".
- bin/shout NAME prints the greeting of bin/greet in capitals.

Every command has a test in tests/, run by scripts/integration-test.sh.
`,
		"scripts/integration-test.sh": `#!/bin/sh
# Runs every test of the project; a failure stops the merge.
set -e
for t in tests/*_test.sh; do
	[ -e "$t" ] || continue
	sh "$t"
done
`,
		"README.md": "# greeting toolkit\n\nA project worked by a git-liza team. See specs/vision.md.\n",
	}
})

func (e *Env) demoCmd() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "watch a scripted team (planner, 2 coders, reviewer) work a small goal in a temporary repository",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "make the demo repository in `DIR` (default: a new temporary directory)"},
			&cli.DurationFlag{Name: "timeout", Value: 50 * time.Second, Usage: "abort the team if the goal is not done by then"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := refuseSupervisors("demo"); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			longLived()
			return e.demo(ctx, cmd.String("dir"), cmd.Duration("timeout"))
		},
	}
}

// demo builds a repository, plans nothing itself, and lets a planner, two
// coders and a reviewer, all scripted, take the goal to COMPLETED while it
// prints the board as it changes.
func (e *Env) demo(ctx context.Context, dir string, timeout time.Duration) error {
	start := time.Now()
	if err := refstore.CheckGit(); err != nil {
		return err
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "git-liza-demo-")
		if err != nil {
			return err
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	dir, _ = filepath.Abs(dir)
	if err := demoRepo(ctx, dir); err != nil {
		return err
	}
	w := e.Stdout
	fmt.Fprintf(w, "git-liza demo in %s\n\n", dir)
	in := &Env{Stdin: strings.NewReader(""), Stdout: w, Stderr: e.Stderr, Dir: dir, Getenv: demoGetenv(e.Getenv)}
	if code := in.Run(ctx, []string{"git-liza", "init", "--spec", "specs/vision.md", "Ship the greeting toolkit of specs/vision.md"}); code != 0 {
		return contracts.Errorf(contracts.Code(code), "demo: init failed")
	}
	repo, err := refstore.Open(dir)
	if err != nil {
		return err
	}
	logPath := filepath.Join(repo.CommonDir, "liza", "demo-team.log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return err
	}
	teamLog, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer teamLog.Close()
	fmt.Fprintf(w, "\nTeam: planner-1, coder-1, coder-2, code-reviewer-1 (scripted agents; their output goes to %s)\n\n", logPath)

	exe, err := os.Executable()
	if err != nil {
		return err
	}
	teamCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- in.team(teamCtx, teamSpec{planner: true, coders: 2, reviewers: 1, out: w, quiet: true, log: teamLog,
			args:  []string{"--poll", "300ms", "--backoff", "200ms", "--", exe, "demo-agent"},
			unset: demoUnset})
	}()
	var teamErr error
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last refstore.Hash
	prev := ""
	for running := true; running; {
		select {
		case teamErr = <-done:
			running = false
		case <-tick.C:
		}
		last, prev = showProgress(ctx, repo, last, prev, w)
	}
	if teamCtx.Err() != nil && ctx.Err() == nil {
		teamErr = fmt.Errorf("the goal was not completed within %s", timeout)
	}

	fmt.Fprintln(w, "\n== Board ==")
	in.Run(ctx, []string{"git-liza", "status"})
	fmt.Fprintln(w, "\n== Spend (git liza usage) ==")
	in.Run(ctx, []string{"git-liza", "usage"})
	fmt.Fprintln(w, "\n== Audit log (git liza log) ==")
	in.Run(ctx, []string{"git-liza", "log"})
	fmt.Fprintln(w, "\n== Integration branch ==")
	if out, err := repo.Git(ctx, "log", "--oneline", "--graph", "integration"); err == nil {
		w.Write(out)
	}
	fmt.Fprintf(w, "\nThe demo repository is %s (took %s).\n", dir, time.Since(start).Round(100*time.Millisecond))
	fmt.Fprintf(w, "Look around:  cd %s && git log --stat refs/liza/state\n", dir)
	fmt.Fprintf(w, "              (and, with git-liza installed: git liza status, git liza show)\n")
	fmt.Fprintf(w, "Remove it:    rm -rf %s\n", dir)
	if teamErr != nil {
		return contracts.Invalidf("demo: %v", teamErr)
	}
	st, err := loadTip(repo)
	if err != nil {
		return err
	}
	if st.Goal.Status != "COMPLETED" {
		return contracts.Invalidf("demo: the team stopped with the goal %s", st.Goal.Status)
	}
	return nil
}

// demoRepo makes the demo project: a repository with one commit. It sets
// an identity in the repository's own config, so that the demo works
// where git has none configured.
func demoRepo(ctx context.Context, dir string) error {
	for path, body := range demoFiles() {
		p := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(path, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.name", "Demo Operator"},
		{"config", "user.email", "operator@demo.invalid"},
		{"add", "."},
		{"commit", "-q", "-m", "greeting toolkit: vision and integration test"},
	} {
		if _, err := refstore.Run(ctx, dir, nil, args...); err != nil {
			return err
		}
	}
	return nil
}

// demoUnset is what the demo's processes must not take from the user's
// environment.
var demoUnset = []string{"LIZA_NOW", "LIZA_AGENT_ID", "LIZA_AGENT_GENERATION", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR"}

func demoGetenv(getenv func(string) string) func(string) string {
	return func(k string) string {
		switch k {
		case "LIZA_AGENT_ID", "LIZA_AGENT_GENERATION", "LIZA_NOW", "GIT_DIR", "GIT_WORK_TREE":
			return ""
		}
		return getenv(k)
	}
}

// showProgress prints the state commits made since last, each with the
// board's counts when they changed.
func showProgress(ctx context.Context, repo *refstore.Repo, last refstore.Hash, prev string, w interface{ Write([]byte) (int, error) }) (refstore.Hash, string) {
	tip, ok, err := repo.ReadRef(refstore.StateRef)
	if err != nil || !ok || tip == last {
		return last, prev
	}
	rng := tip.String()
	if !last.IsZero() {
		rng = last.String() + ".." + tip.String()
	}
	out, err := repo.Git(ctx, "log", "--reverse", "--first-parent", "--format=%ad %s", "--date=format:%H:%M:%S", rng)
	if err != nil {
		return last, prev
	}
	fmt.Fprintf(w, "%s", out)
	if st, err := loadTip(repo); err == nil {
		if c := boardCounts(st); c != prev {
			fmt.Fprintf(w, "         board: %s\n", c)
			prev = c
		}
	}
	return tip, prev
}

// boardCounts is one line of task counts by status.
func boardCounts(st *contracts.State) string {
	counts := map[contracts.Status]int{}
	for _, t := range st.Tasks {
		counts[t.Status]++
	}
	var parts []string
	for _, s := range contracts.Statuses {
		if n := counts[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", s, n))
		}
	}
	if len(parts) == 0 {
		return "no tasks"
	}
	return strings.Join(parts, " · ")
}

func loadTip(repo *refstore.Repo) (*contracts.State, error) {
	tip, _, err := repo.ReadRef(refstore.StateRef)
	if err != nil {
		return nil, err
	}
	snap, err := cas.ReadSnapshot(repo, tip)
	if err != nil {
		return nil, err
	}
	return snap.Load()
}
