package tui

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// Main is the program git-liza-board, which git liza board runs: the live
// board lives in a program of its own so that the terminal interface
// library it links does not slow the start of every short git-liza
// command (see the README's Performance section). args are its arguments
// after the program name; it returns the exit code. clock, when not nil,
// replaces the wall clock (tests pin it).
func Main(ctx context.Context, clock func() time.Time, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("git-liza-board", flag.ContinueOnError)
	fs.SetOutput(stderr)
	interval := fs.Duration("interval", 5*time.Second, "how often to read the board even when refs/liza/state has not moved")
	fail := func(err error) int {
		// An error may quote the board (a status, a name): made printable
		// as the command line's errors are.
		fmt.Fprintf(stderr, "git-liza: %s\n", contracts.Printable(err.Error()))
		return int(ops.Class(err))
	}
	if err := fs.Parse(args); err != nil {
		return int(contracts.CodeInvalid)
	}
	if fs.NArg() > 0 || *interval <= 0 {
		return fail(contracts.Invalidf("usage: git liza board [--interval DURATION]"))
	}
	// The board takes the screen and reads keys: without a terminal on
	// both ends it says where the same board is, rather than what the
	// terminal library could not do.
	for _, end := range []struct {
		name string
		f    any
	}{{"stdout", stdout}, {"stdin", stdin}} {
		if !isTerminal(end.f) {
			fmt.Fprintf(stderr, "git liza board: needs a terminal (%s is not one); use git liza status or git liza serve\n", end.name)
			return 1
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		return fail(err)
	}
	repo, err := refstore.Open(dir)
	if gerr := refstore.CheckGit(); gerr != nil {
		return fail(gerr)
	}
	if err != nil {
		return fail(err)
	}
	// The levers are the operator's, as on the command line: no agent id,
	// the operator's git identity as the state commits' author. The board
	// is read again at each move: what did not change is not decoded again.
	svc, err := ops.New(repo, ops.Options{Clock: clock, Author: ops.OperatorAuthor(repo, os.Getenv), KeepDecoded: true})
	if err != nil {
		return fail(err)
	}
	// A board that cannot be read says so before taking the screen.
	if _, err := svc.Status(ctx, ops.StatusRequest{}); err != nil {
		return fail(err)
	}
	if err := Run(ctx, Options{Service: svc, Interval: *interval, Input: stdin, Output: stdout}); err != nil {
		return fail(err)
	}
	return 0
}

// isTerminal says whether f is a terminal.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}
