package commands

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/hooks"
	"github.com/liza-dev/git-liza/refstore"
)

func (e *Env) hooksCmd() *cli.Command {
	return &cli.Command{
		Name:  "hooks",
		Usage: "install, remove or list git-liza's git hooks",
		Commands: []*cli.Command{
			{
				Name:  "install",
				Usage: "install the hooks (pre-commit, commit-msg, post-commit, reference-transaction; --server: pre-receive)",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "force", Usage: "keep a hook that is not git-liza's as NAME.liza-chained and run it first"},
					&cli.BoolFlag{Name: "server", Usage: "in a bare repository: install the pre-receive hook that guards refs/liza/state"},
				},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if _, err := args(cmd, 0, 0, "hooks install [--force] [--server]"); err != nil {
						return err
					}
					repo, loc, err := e.hooksLocation()
					if err != nil {
						return err
					}
					names := hooks.ClientHooks
					switch server := cmd.Bool("server"); {
					case server && !repo.Bare():
						return contracts.Invalidf("--server installs the pre-receive hook of a bare repository that clones push to; this repository has a work tree: run git liza hooks install here without --server")
					case !server && repo.Bare():
						return contracts.Invalidf("this repository is bare: git liza hooks install --server installs its pre-receive hook")
					case server:
						names = hooks.ServerHooks
					}
					changes, err := loc.Install(names, cmd.Bool("force"))
					if err != nil {
						return err
					}
					if cmd.Bool("server") {
						c, err := hooks.LimitInput(ctx, repo)
						if err != nil {
							return err
						}
						changes = append(changes, c)
					}
					return e.printChanges(cmd, loc, changes)
				},
			},
			{
				Name:  "uninstall",
				Usage: "remove git-liza's hooks and put back the hooks they chained; other hooks are left alone",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if _, err := args(cmd, 0, 0, "hooks uninstall"); err != nil {
						return err
					}
					_, loc, err := e.hooksLocation()
					if err != nil {
						return err
					}
					changes, err := loc.Uninstall(hooks.AllHooks())
					if err != nil {
						return err
					}
					if len(changes) == 0 && !cmd.Bool("json") {
						fmt.Fprintf(e.Stdout, "no git-liza hooks in %s\n", loc.Display)
						return nil
					}
					return e.printChanges(cmd, loc, changes)
				},
			},
			{
				Name:  "status",
				Usage: "list each hook: ours, ours chaining another, foreign or absent",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if _, err := args(cmd, 0, 0, "hooks status"); err != nil {
						return err
					}
					repo, loc, err := e.hooksLocation()
					if err != nil {
						return err
					}
					names := hooks.ClientHooks
					if repo.Bare() {
						names = hooks.ServerHooks
					}
					list, err := loc.Status(names)
					if err != nil {
						return err
					}
					if cmd.Bool("json") {
						s := &session{Env: e}
						return s.printJSON(map[string]any{"dir": loc.Display, "relative_hooks_path": loc.Relative, "hooks": list})
					}
					fmt.Fprintf(e.Stdout, "hooks directory: %s\n", loc.Display)
					if w := loc.RelativeWarning(); w != "" {
						fmt.Fprintf(e.Stdout, "warning: %s\n", w)
					}
					for _, h := range list {
						fmt.Fprintf(e.Stdout, "%s: %s\n", h.Name, h)
					}
					return nil
				},
			},
		},
	}
}

// hooksLocation opens the repository and finds its hooks directory.
func (e *Env) hooksLocation() (*refstore.Repo, hooks.Location, error) {
	repo, err := refstore.Open(e.Dir)
	if gerr := refstore.CheckGit(); gerr != nil {
		return nil, hooks.Location{}, gerr
	}
	if err != nil {
		return nil, hooks.Location{}, err
	}
	loc, err := hooks.Locate(repo)
	return repo, loc, err
}

func (e *Env) printChanges(cmd *cli.Command, loc hooks.Location, changes []hooks.Change) error {
	if cmd.Bool("json") {
		s := &session{Env: e}
		if changes == nil {
			changes = []hooks.Change{}
		}
		return s.printJSON(map[string]any{"dir": loc.Display, "hooks": changes})
	}
	fmt.Fprintf(e.Stdout, "hooks directory: %s\n", loc.Display)
	for _, c := range changes {
		fmt.Fprintln(e.Stdout, c)
	}
	return nil
}

func (e *Env) hookCmd() *cli.Command {
	return &cli.Command{
		Name:            "hook",
		Usage:           "the handler behind an installed hook script (git runs it; you need not)",
		ArgsUsage:       "NAME [ARGS]",
		SkipFlagParsing: true,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			a := cmd.Args().Slice()
			if len(a) == 0 {
				return contracts.Invalidf("usage: git liza hook NAME [ARGS]")
			}
			h := &hooks.Handler{Dir: e.Dir, Stdin: e.Stdin, Stderr: e.Stderr, Getenv: e.Getenv, Clock: e.Clock}
			return h.Run(ctx, a[0], a[1:])
		},
	}
}
