package commands

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

func (e *Env) importCmd() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "make a seed-format state.yaml (- for stdin) the state, in one commit",
		ArgsUsage: "PATH",
		Action: e.action(1, 1, "import PATH", func(ctx context.Context, s *session, a []string) error {
			path := a[0]
			data, err := e.readInput(path)
			if err != nil {
				return err
			}
			out, err := s.ops.Import(ctx, ops.ImportRequest{Call: s.call(), Data: data, Name: path})
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(map[string]any{"tasks": out.Tasks, "archived": out.Archived, "commit": out.Commit.String()})
			}
			fmt.Fprintf(s.Stdout, "Imported %d tasks from %s into %s\n", out.Tasks+out.Archived, path, refstore.StateRef)
			return nil
		}),
	}
}

// readInput reads the file at path, or standard input for "-".
func (e *Env) readInput(path string) ([]byte, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(e.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, contracts.Invalidf("cannot read %s: %v", path, err)
	}
	return data, nil
}
