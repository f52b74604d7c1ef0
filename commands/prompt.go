package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

const promptUsage = "prompt ROLE [--task ID] [--trigger T] [--tools] | prompt --list | prompt --text NAME"

func (e *Env) promptCmd() *cli.Command {
	return &cli.Command{
		Name:      "prompt",
		Usage:     "print the prompt a supervisor gives ROLE (planner, coder, code-reviewer) now, or the contract texts it is made of",
		ArgsUsage: "ROLE",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Usage: "the task `ID` of the coder's assignment or of the review"},
			&cli.StringFlag{Name: "trigger", Usage: "the planner's wake `TRIGGER` (default: the most urgent one present)"},
			&cli.BoolFlag{Name: "tools", Usage: "the prompt of a session that has git liza's MCP tools (git-liza-mcp installed)"},
			&cli.BoolFlag{Name: "list", Usage: "list the embedded contract texts"},
			&cli.StringFlag{Name: "text", Usage: "print the embedded contract text `NAME` (see --list)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			list, text := cmd.Bool("list"), cmd.String("text")
			if list || text != "" {
				if cmd.Args().Len() > 0 || list && text != "" || cmd.String("task") != "" || cmd.String("trigger") != "" || cmd.Bool("tools") {
					return contracts.Invalidf("usage: git liza %s", promptUsage)
				}
				if list {
					return e.printTextNames(cmd.Bool("json"))
				}
				return e.printText(text, cmd.Bool("json"))
			}
			a, err := args(cmd, 1, 1, promptUsage)
			if err != nil {
				return err
			}
			role, err := contracts.ParseRole(a[0])
			if err != nil {
				return err
			}
			s, err := e.open(cmd)
			if err != nil {
				return err
			}
			p, err := s.ops.Prompt(ctx, ops.PromptRequest{Role: role, Task: cmd.String("task"), Trigger: cmd.String("trigger"), Tools: cmd.Bool("tools")})
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(map[string]any{"role": string(role), "bytes": len(p), "prompt": p})
			}
			// The prompt quotes the board: descriptions, feedback, notes,
			// an agent's handoff. Printed for a person to read, it is made
			// printable (lines kept); --json gives the exact text, as the
			// supervisor hands it to the agent.
			_, err = io.WriteString(s.Stdout, contracts.PrintableText(p))
			return err
		},
	}
}

// printTextNames lists the embedded contract texts.
func (e *Env) printTextNames(asJSON bool) error {
	names := contracts.TextNames()
	if asJSON {
		type entry struct {
			Name  string `json:"name"`
			Bytes int    `json:"bytes"`
		}
		out := struct {
			Texts []entry `json:"texts"`
		}{Texts: []entry{}}
		for _, n := range names {
			t, _ := contracts.Text(n)
			out.Texts = append(out.Texts, entry{n, len(t)})
		}
		return e.promptJSON(out)
	}
	for _, n := range names {
		fmt.Fprintln(e.Stdout, n)
	}
	return nil
}

// printText prints one embedded contract text.
func (e *Env) printText(name string, asJSON bool) error {
	t, ok := contracts.Text(name)
	if !ok {
		return contracts.Invalidf("no contract text %q (texts: %s)", name, strings.Join(contracts.TextNames(), ", "))
	}
	if asJSON {
		return e.promptJSON(map[string]any{"name": strings.TrimSuffix(name, ".md"), "bytes": len(t), "text": t})
	}
	_, err := io.WriteString(e.Stdout, t)
	return err
}

// promptJSON writes v as indented JSON, for commands that need no blackboard.
func (e *Env) promptJSON(v any) error {
	enc := json.NewEncoder(e.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
