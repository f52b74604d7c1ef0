package commands

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

func atFlag() cli.Flag {
	return &cli.StringFlag{Name: "at", Usage: "read the state at `REV` (a commit of refs/liza/state, e.g. refs/liza/state~3)"}
}

func (e *Env) showCmd() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print the state as seed-format YAML (--json: JSON with the seed's field names), or one task",
		ArgsUsage: "[ID]",
		Flags:     []cli.Flag{atFlag(), &cli.BoolFlag{Name: "all", Usage: "include archived tasks"}},
		Action: e.action(0, 1, "show [--at REV] [--all] [ID]", func(ctx context.Context, s *session, a []string) error {
			if len(a) == 1 {
				t, err := s.oneTask(ctx, s.cmd.String("at"), a[0])
				if err != nil {
					return err
				}
				return s.printDoc(t)
			}
			st, err := s.loadState(ctx, s.cmd.String("at"))
			if err != nil {
				return err
			}
			if !s.cmd.Bool("all") {
				st.Archive = nil
			}
			return s.printDoc(st)
		}),
	}
}

func (e *Env) exportCmd() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "print the whole state, archive included, as a seed-format state.yaml",
		Flags: []cli.Flag{atFlag()},
		Action: e.action(0, 0, "export [--at REV]", func(ctx context.Context, s *session, _ []string) error {
			st, err := s.loadState(ctx, s.cmd.String("at"))
			if err != nil {
				return err
			}
			return s.printDoc(st)
		}),
	}
}

// snapshot opens the state at rev, or at the tip of refs/liza/state.
func (s *session) snapshot(ctx context.Context, rev string) (*cas.Snapshot, error) {
	var commit refstore.Hash
	if rev != "" {
		c, err := s.repo.ResolveCommit(ctx, rev)
		if err != nil {
			return nil, err
		}
		commit = c
	} else {
		tip, ok, err := s.repo.ReadRef(refstore.StateRef)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, contracts.Invalidf("no blackboard here: run `git liza init GOAL` first")
		}
		commit = tip
	}
	return cas.ReadSnapshot(s.repo, commit)
}

// loadState reads the whole state at rev (or the tip).
func (s *session) loadState(ctx context.Context, rev string) (*contracts.State, error) {
	snap, err := s.snapshot(ctx, rev)
	if err != nil {
		return nil, err
	}
	return snap.Load()
}

// oneTask reads one task, live or archived, without reading the others.
func (s *session) oneTask(ctx context.Context, rev, id string) (*contracts.Task, error) {
	if err := contracts.ValidTaskID(id); err != nil {
		return nil, err
	}
	snap, err := s.snapshot(ctx, rev)
	if err != nil {
		return nil, err
	}
	t, err := snap.Task(id)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, contracts.Invalidf("no task %s", id)
	}
	return t, nil
}

// printDoc prints v as YAML, or as JSON with the same field names.
func (s *session) printDoc(v any) error {
	if s.json {
		b, err := yamlJSON(v)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(s.Stdout, "%s\n", b)
		return err
	}
	b, err := contracts.EncodeYAML(v)
	if err != nil {
		return err
	}
	_, err = s.Stdout.Write(b)
	return err
}
