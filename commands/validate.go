package commands

import (
	"context"
	"fmt"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

func (e *Env) validateCmd() *cli.Command {
	return &cli.Command{
		Name:  "validate",
		Usage: "check the state against the contract (exit 1 and every problem when invalid)",
		Flags: []cli.Flag{
			atFlag(),
			&cli.StringFlag{Name: "file", Usage: "validate a seed-format state.yaml at `PATH` instead"},
			&cli.BoolFlag{Name: "history", Usage: "check every commit of refs/liza/state and every transition between consecutive states"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if _, err := args(cmd, 0, 0, "validate [--at REV | --file PATH] [--history]"); err != nil {
				return err
			}
			if cmd.IsSet("file") && (cmd.IsSet("at") || cmd.Bool("history")) {
				return contracts.Invalidf("--file cannot be combined with --at or --history")
			}
			if path := cmd.String("file"); path != "" {
				data, err := os.ReadFile(path)
				if err != nil {
					return contracts.Invalidf("cannot read %s: %v", path, err)
				}
				st, err := contracts.ParseState(data)
				if err != nil {
					return contracts.Invalidf("%s: %v", path, err)
				}
				return e.verdict(cmd, contracts.Validate(st), 1)
			}
			s, err := e.open(cmd)
			if err != nil {
				return err
			}
			snap, err := s.snapshot(ctx, cmd.String("at"))
			if err != nil {
				return err
			}
			if cmd.Bool("history") {
				problems, n, err := validateHistory(s.repo, snap.Commit)
				if err != nil {
					return err
				}
				return e.verdict(cmd, problems, n)
			}
			st, err := snap.Load()
			if err != nil {
				return err
			}
			return e.verdict(cmd, contracts.Validate(st), 1)
		},
	}
}

// verdict prints VALID, or INVALID and every problem, and fails with exit
// 1 when there are problems.
func (e *Env) verdict(cmd *cli.Command, problems []contracts.Problem, states int) error {
	if cmd.Bool("json") {
		list := make([]string, len(problems))
		for i, p := range problems {
			list[i] = p.String()
		}
		s := &session{Env: e}
		if err := s.printJSON(map[string]any{"valid": len(problems) == 0, "states": states, "problems": list}); err != nil {
			return err
		}
	} else if len(problems) == 0 {
		if states > 1 {
			fmt.Fprintf(e.Stdout, "VALID (%d states)\n", states)
		} else {
			fmt.Fprintln(e.Stdout, "VALID")
		}
	} else {
		for _, p := range problems {
			fmt.Fprintf(e.Stdout, "INVALID: %s\n", p)
		}
	}
	if len(problems) > 0 {
		return contracts.Invalidf("%d problem(s): %s", len(problems), problems[0])
	}
	return nil
}

// validateHistory checks every state from the first commit to tip, and
// every transition between consecutive states. It returns the problems and
// the number of states checked.
func validateHistory(repo *refstore.Repo, tip refstore.Hash) ([]contracts.Problem, int, error) {
	var chain []*refstore.Commit
	for id := tip; !id.IsZero(); {
		c, err := repo.ReadCommit(id)
		if err != nil {
			return nil, 0, err
		}
		chain = append(chain, c)
		if len(c.Parents) == 0 {
			break
		}
		id = c.Parents[0]
	}
	var problems []contracts.Problem
	var prev *contracts.State
	for i := len(chain) - 1; i >= 0; i-- {
		c := chain[i]
		where := c.ID.String()[:12]
		add := func(ps []contracts.Problem) {
			for _, p := range ps {
				p.Where = joinWhere(where, p.Where)
				problems = append(problems, p)
			}
		}
		if len(c.Parents) > 1 {
			add([]contracts.Problem{{Msg: "state commits have one parent; this one is a merge"}})
		}
		tr := cas.Trailers(c.Message)
		if tr["Liza-Op"] == "" || tr["Liza-Agent"] == "" {
			add([]contracts.Problem{{Msg: "commit lacks the Liza-Op and Liza-Agent trailers"}})
		}
		snap, err := cas.ReadSnapshot(repo, c.ID)
		if err != nil {
			return nil, 0, err
		}
		st, err := snap.Load()
		if err != nil {
			add([]contracts.Problem{{Msg: err.Error()}})
			prev = nil
			continue
		}
		add(contracts.Validate(st))
		// An import replaces the whole state; transitions are checked
		// between the other consecutive states.
		if prev != nil && tr["Liza-Op"] != string(contracts.OpImport) {
			add(contracts.CheckStateTransition(prev, st))
		}
		prev = st
	}
	return problems, len(chain), nil
}

func joinWhere(commit, where string) string {
	if where == "" {
		return commit
	}
	return commit + " " + where
}
