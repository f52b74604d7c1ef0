package commands

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// integrationCmd is the operator's way to move the integration branch on
// the record: every clone refuses a branch that is not where the board
// records it, so a branch moved by hand is adopted explicitly.
func (e *Env) integrationCmd() *cli.Command {
	const usage = "integration adopt [COMMIT]"
	return &cli.Command{
		Name:  "integration",
		Usage: "the integration branch on the record: adopt records where the operator moved it",
		Commands: []*cli.Command{{
			Name:      "adopt",
			Usage:     "record the integration branch's tip (the remote's, in remote mode) as the one every clone expects; COMMIT confirms where it is",
			ArgsUsage: "[COMMIT]",
			Action: e.action(0, 1, usage, func(ctx context.Context, s *session, a []string) error {
				req := ops.AdoptRequest{Call: s.call()}
				if len(a) == 1 {
					req.Commit = a[0]
				}
				out, err := s.ops.AdoptIntegration(ctx, req)
				if err != nil {
					return err
				}
				if s.json {
					return s.printJSON(map[string]any{"integration_branch": out.Branch, "remote": out.Remote, "commit": out.Commit,
						"was": out.Was, "already": out.Already, "state": out.Written.Commit.String(), "replayed": out.Replayed})
				}
				where := out.Branch
				if out.Remote != "" {
					where += " on " + out.Remote
				}
				switch {
				case out.Already:
					fmt.Fprintf(s.Stdout, "%s is at %s, where the board records it already\n", where, short(out.Commit))
				case out.Was != "":
					fmt.Fprintf(s.Stdout, "%s adopted at %s (the board recorded %s)%s\n", where, short(out.Commit), short(out.Was), replayNote(out.Replayed))
				default:
					fmt.Fprintf(s.Stdout, "%s adopted at %s%s\n", where, short(out.Commit), replayNote(out.Replayed))
				}
				return nil
			}),
		}},
		Action: func(context.Context, *cli.Command) error { return contracts.Invalidf("usage: git liza %s", usage) },
	}
}
