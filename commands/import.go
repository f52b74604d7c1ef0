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

// MaxInput bounds what import and validate --file read: a state of
// 100,000 tasks is a few tens of megabytes.
const MaxInput = 64 << 20

// readInput reads the file at path, or standard input for "-", refusing
// more than MaxInput bytes (a device such as /dev/zero never ends).
func (e *Env) readInput(path string) ([]byte, error) {
	var r io.Reader = e.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, contracts.Invalidf("cannot read %s: %v", path, err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return nil, contracts.Invalidf("cannot read %s: %v", path, err)
	}
	if len(data) > MaxInput {
		return nil, contracts.Invalidf("%s is larger than %d MiB: not a state file", path, MaxInput>>20)
	}
	return data, nil
}
