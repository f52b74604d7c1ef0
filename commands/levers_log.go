package commands

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// printEntry prints what an operation appended to a list: line renders
// the text output, made printable here (it echoes ids and words the caller
// gave).
func (s *session) printEntry(r *ops.EntryResult, err error, line func(r *ops.EntryResult) string) error {
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(struct {
			*ops.EntryResult
			Commit   string `json:"commit"`
			Replayed bool   `json:"replayed"`
		}{r, r.Commit.String(), r.Replayed})
	}
	fmt.Fprintf(s.Stdout, "%s%s\n", contracts.Printable(line(r)), replayNote(r.Replayed))
	return nil
}

// parseDetails reads KEY=VALUE pairs. A value written as a decimal integer
// is kept as a number (count=3), every other value as a string.
func parseDetails(pairs []string) (contracts.Extra, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	details := contracts.Extra{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\n") {
			return nil, contracts.Invalidf("--detail %q: want KEY=VALUE", p)
		}
		if _, dup := details[k]; dup {
			return nil, contracts.Invalidf("--detail %s is given twice", k)
		}
		if n, err := strconv.Atoi(v); err == nil && strconv.Itoa(n) == v {
			details[k] = n
		} else {
			details[k] = v
		}
	}
	return details, nil
}

func (e *Env) anomalyCmd() *cli.Command {
	return &cli.Command{
		Name:      "anomaly",
		Usage:     "log an anomaly of seed 004's types (retry_loop, spec_ambiguity, ...) against a task",
		ArgsUsage: "TYPE",
		// Detail values are prose: commas do not separate them.
		DisableSliceFlagSeparator: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Usage: "the task `ID` the anomaly is about"},
			&cli.StringSliceFlag{Name: "detail", Usage: "a detail as KEY=VALUE (repeatable; the type's required keys must be present)"},
		},
		Action: e.action(1, 1, "anomaly TYPE --task ID [--detail KEY=VALUE ...]", func(ctx context.Context, s *session, a []string) error {
			details, err := parseDetails(s.cmd.StringSlice("detail"))
			if err != nil {
				return err
			}
			r, err := s.ops.Anomaly(ctx, ops.AnomalyRequest{Call: s.call(), Type: a[0], Task: s.cmd.String("task"), Details: details})
			return s.printEntry(r, err, func(r *ops.EntryResult) string {
				return fmt.Sprintf("%s logged: %s on %s", r.ID, r.Type, r.Task)
			})
		}),
	}
}

func (e *Env) discoverCmd() *cli.Command {
	const usage = "discover --desc TEXT [--severity critical|high|medium|low] [--urgency deferred|immediate] [--task ID] [--recommendation TEXT]"
	return &cli.Command{
		Name:     "discover",
		Usage:    "log an adjacent problem found during a task, without fixing it; convert N --task ID records the task it became",
		Commands: []*cli.Command{e.discoverConvertCmd()},
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "desc", Usage: "what was discovered"},
			&cli.StringFlag{Name: "severity", Usage: "critical, high, medium or low"},
			&cli.StringFlag{Name: "urgency", Value: "deferred", Usage: "deferred, or immediate to wake the planner"},
			&cli.StringFlag{Name: "task", Usage: "the task `ID` it was found during (default: the agent's current task)"},
			&cli.StringFlag{Name: "recommendation", Usage: "the suggested action"},
		},
		Action: e.action(0, 0, usage, func(ctx context.Context, s *session, _ []string) error {
			cmd := s.cmd
			r, err := s.ops.Discover(ctx, ops.DiscoverRequest{Call: s.call(), Description: cmd.String("desc"), Severity: cmd.String("severity"),
				Urgency: cmd.String("urgency"), Task: cmd.String("task"), Recommendation: cmd.String("recommendation")})
			return s.printEntry(r, err, func(r *ops.EntryResult) string {
				line := r.ID + " logged"
				if r.Task != "" {
					line += " during " + r.Task
				}
				if r.Severity != "" {
					return fmt.Sprintf("%s (%s, %s)", line, r.Severity, r.Urgency)
				}
				return fmt.Sprintf("%s (%s)", line, r.Urgency)
			})
		}),
	}
}

func (e *Env) noteCmd() *cli.Command {
	const usage, doneUsage = "note [--for ID] MESSAGE", "note --done N[,N...]"
	return &cli.Command{
		Name:      "note",
		Usage:     "leave a note for the agents (human_notes), optionally for one task or agent; a planner marks notes it has dealt with --done",
		ArgsUsage: "MESSAGE",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "for", Usage: "the task or agent `ID` the note is for"},
			&cli.StringSliceFlag{Name: "done", Usage: "planner: mark note `N` processed (as note numbers them, from 1), so that it wakes no planner again"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if done := splitList(cmd.StringSlice("done")); len(done) > 0 {
				return e.notesDone(ctx, cmd, done, doneUsage)
			}
			a, err := args(cmd, 1, 1, usage)
			if err != nil {
				return err
			}
			s, err := e.open(cmd)
			if err != nil {
				return err
			}
			r, err := s.ops.Note(ctx, ops.NoteRequest{Call: s.call(), Message: a[0], For: cmd.String("for")})
			if err := s.printEntry(r, err, func(r *ops.EntryResult) string {
				if r.For != "" {
					return fmt.Sprintf("note %d added for %s", r.N, r.For)
				}
				return fmt.Sprintf("note %d added", r.N)
			}); err != nil || s.json {
				return err
			}
			// Who reads it and when: the note is written; a board that
			// cannot be read back now only loses the hint.
			readers, err := s.ops.NoteReaders(ctx, r.For, r.By)
			if err != nil {
				return nil
			}
			for _, line := range readers {
				fmt.Fprintf(s.Stdout, "  %s\n", contracts.Printable(line))
			}
			return nil
		},
	}
}

// notesDone marks the notes done names processed, for a planner.
func (e *Env) notesDone(ctx context.Context, cmd *cli.Command, done []string, usage string) error {
	if cmd.Args().Len() > 0 || cmd.String("for") != "" {
		return contracts.Invalidf("usage: git liza %s", usage)
	}
	var nums []int
	for _, d := range done {
		n, err := strconv.Atoi(d)
		if err != nil || n < 1 {
			return contracts.Invalidf("--done %s: want a note number (1 for the first note)", d)
		}
		nums = append(nums, n)
	}
	s, err := e.open(cmd)
	if err != nil {
		return err
	}
	out, err := s.ops.NotesDone(ctx, ops.NotesDoneRequest{Call: s.call(), Notes: nums})
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(out)
	}
	if len(out.Processed) == 0 {
		fmt.Fprintln(s.Stdout, "already processed; nothing written")
		return nil
	}
	fmt.Fprintf(s.Stdout, "%s processed by %s\n", ops.NoteList(out.Processed), contracts.Printable(out.Agent))
	return nil
}
