package commands

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"time"

	"github.com/liza-dev/git-liza/companion"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
)

// BoardProgram is the program that shows the live board. It is a program
// of its own (package git-liza-board, on the tui package) so that git-liza
// does not link the terminal interface library: linking it cost every
// short command about 1.3 ms at start-up (measured; see the README).
const BoardProgram = "git-liza-board"

func (e *Env) boardCmd() *cli.Command {
	return &cli.Command{
		Name: "board",
		Usage: "an interactive, full-screen view of the team: tasks by what needs attention, agents, alarms, the latest operations; " +
			"a task's detail with its session live; the human's levers on keys (? lists them); without a terminal, one line and exit 1",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "interval", Value: 5 * time.Second, Usage: "how often to read the board even when refs/liza/state has not moved (leases run down; in remote mode: fetch)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if _, err := args(cmd, 0, 0, "board [--interval DURATION]"); err != nil {
				return err
			}
			prog, err := program(BoardProgram, "git liza board")
			if err != nil {
				return err
			}
			return e.runProgram(ctx, prog, "--interval", cmd.Duration("interval").String())
		},
	}
}

// program finds a companion program (see package companion), or says how
// to install it.
func program(name, what string) (string, error) {
	if p, ok := companion.Find(name); ok {
		return p, nil
	}
	return "", contracts.Errorf(contracts.CodeMissingDep, "%s runs %s, which is not installed: go install github.com/liza-dev/git-liza/%s@latest", what, name, name)
}

// runProgram runs a companion program in the command's directory, on its
// standard streams, until it ends; an interrupt of git-liza interrupts it.
func (e *Env) runProgram(ctx context.Context, prog string, args ...string) error {
	c := exec.CommandContext(ctx, prog, args...)
	c.Dir, c.Stdin, c.Stdout, c.Stderr = e.Dir, e.Stdin, e.Stdout, e.Stderr
	c.Cancel = func() error { return c.Process.Signal(os.Interrupt) }
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		// It said why on stderr already.
		return &saidError{code: contracts.Code(ee.ExitCode())}
	}
	return err
}

// saidError is an exit code whose message was printed already.
type saidError struct{ code contracts.Code }

func (e *saidError) Error() string { return "" }
