package commands

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

func (e *Env) importCmd() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "make a seed-format state.yaml (- for stdin) the state, in one commit",
		ArgsUsage: "PATH",
		Action: e.action(1, 1, "import PATH", func(ctx context.Context, s *session, a []string) error {
			return s.importState(ctx, a[0])
		}),
	}
}

func (s *session) importState(ctx context.Context, path string) error {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(s.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return contracts.Invalidf("cannot read %s: %v", path, err)
	}
	st, err := contracts.ParseState(data)
	if err != nil {
		return contracts.Invalidf("%s: %v", path, err)
	}
	st.Config.FillDefaults()
	if st.Agents == nil {
		st.Agents = map[string]*contracts.Agent{}
	}
	if p := contracts.Validate(st); len(p) > 0 {
		msg := p[0].String()
		if len(p) > 1 {
			msg += fmt.Sprintf(" (and %d more problems)", len(p)-1)
		}
		return contracts.Invalidf("%s does not validate: %s", path, msg)
	}
	integ := "refs/heads/" + st.Config.IntegrationBranch
	_, head, err := s.repo.Head()
	if err != nil {
		return err
	}
	res, err := s.update(ctx, cas.Op{
		Name:         contracts.OpImport,
		AllowMissing: true,
		Replace: func(tx *cas.Tx) (*contracts.State, error) {
			if _, ok, err := s.repo.ReadRef(integ); err != nil {
				return nil, err
			} else if !ok && !head.IsZero() {
				tx.MoveRef(refstore.RefUpdate{Name: integ, Old: refstore.ZeroID, New: head})
			}
			tx.Describe(fmt.Sprintf("import %d tasks from %s", len(st.Tasks)+len(st.Archive), path), "")
			return st, nil
		},
	})
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(map[string]any{"tasks": len(st.Tasks), "archived": len(st.Archive), "commit": res.Commit.String()})
	}
	fmt.Fprintf(s.Stdout, "Imported %d tasks from %s into %s\n", len(st.Tasks)+len(st.Archive), path, refstore.StateRef)
	return nil
}
