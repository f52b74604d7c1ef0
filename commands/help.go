package commands

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
)

// Help is rendered here, from the command tree and the texts of helpTexts,
// for git liza help, --help and the man page alike; the command line
// library's own templates are not used (they render a flag whose usage
// quotes a command as if the command were the flag's argument, and print a
// default twice when the usage names one).
func init() {
	cli.HelpPrinter = func(w io.Writer, _ string, data any) {
		if c, ok := data.(*cli.Command); ok {
			writeHelp(w, c)
		}
	}
}

// path is the names of cmd below the root: "task add".
func path(cmd *cli.Command) string {
	lineage := cmd.Lineage()
	var names []string
	for i := len(lineage) - 2; i >= 0; i-- {
		names = append(names, lineage[i].Name)
	}
	return strings.Join(names, " ")
}

// synopsis is the usage line of cmd, without "usage: ".
func synopsis(cmd *cli.Command) string {
	if cmd.UsageText != "" {
		return cmd.UsageText
	}
	s := "git liza " + path(cmd)
	if cmd.Root() == cmd {
		s = "git liza [--agent ID] [--json] COMMAND [ARGS]"
	} else if len(visible(cmd)) > 0 {
		s += " COMMAND"
	}
	if cmd.ArgsUsage != "" {
		s += " " + cmd.ArgsUsage
	}
	return s
}

// prepare finishes the command tree: each command gets its usage line and
// examples from helpTexts, usage errors that print its usage, and, when it
// only groups other commands, an action that names a mistyped one.
func prepare(cmd *cli.Command, prefix string) {
	name := strings.TrimSpace(prefix + cmd.Name)
	if prefix == "" {
		name = ""
	}
	if h, ok := helpFor(name); ok {
		if h.usage != "" {
			cmd.UsageText = "git liza " + h.usage
		}
		cmd.Category = h.category
	}
	cmd.HideHelpCommand = true
	cmd.OnUsageError = func(_ context.Context, c *cli.Command, err error, _ bool) error {
		// A bad value is said in one line of the user's words; an
		// unknown option, with the usage that lists the right ones.
		if msg := valueMessage(c, err.Error()); msg != "" {
			return contracts.Invalidf("%s", msg)
		}
		return &usageError{msg: flagMessage(c, err.Error()), usage: synopsis(c)}
	}
	requireFlags(cmd, name)
	if cmd.Action == nil && len(cmd.Commands) > 0 {
		// A command that only groups others leaves the options to them:
		// parsed here, "task ad --id x" would be an unknown --id rather
		// than an unknown command.
		cmd.SkipFlagParsing = true
		cmd.Action = func(_ context.Context, c *cli.Command) error {
			switch first := c.Args().First(); first {
			case "-h", "--help", "-help":
				writeHelp(c.Root().Writer, c)
				return nil
			default:
				return unknownCommand(c, first)
			}
		}
	}
	for _, sub := range cmd.Commands {
		prepare(sub, name+" ")
	}
}

// visible is the commands of cmd that are listed (the command line
// library's VisibleCommands leaves out the one named help).
func visible(cmd *cli.Command) []*cli.Command {
	var out []*cli.Command
	for _, c := range cmd.Commands {
		if !c.Hidden {
			out = append(out, c)
		}
	}
	return out
}

func visibleNames(cmd *cli.Command) []string {
	var out []string
	for _, c := range visible(cmd) {
		out = append(out, c.Name)
	}
	return out
}

// helpCmd is git liza help [COMMAND...].
func (e *Env) helpCmd() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Usage:     "a command's usage, options and examples; with no command, the list of commands",
		ArgsUsage: "[COMMAND [SUBCOMMAND]]",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			target := cmd.Root()
			for _, word := range cmd.Args().Slice() {
				sub := target.Command(word)
				if sub == nil || sub.Hidden && sub.Name != word {
					return unknownCommand(target, word)
				}
				target = sub
			}
			writeHelp(e.Stdout, target)
			return nil
		},
	}
}

// writeHelp writes the help page of cmd.
func writeHelp(w io.Writer, cmd *cli.Command) {
	if cmd.Root() == cmd {
		writeRootHelp(w, cmd)
		return
	}
	fmt.Fprintf(w, "usage: %s\n\n%s\n", synopsis(cmd), capitalize(cmd.Usage))
	if note := platformNote(path(cmd)); note != "" {
		fmt.Fprintf(w, "%s\n", note)
	}
	if subs := visible(cmd); len(subs) > 0 {
		fmt.Fprintln(w, "\ncommands:")
		writeCommandList(w, subs)
	}
	if docs := flagDocs(cmd.VisibleFlags(), false); len(docs) > 0 {
		fmt.Fprintln(w, "\noptions:")
		writeFlagDocs(w, docs)
	}
	if docs := flagDocs(inherited(cmd.Root()), true); len(docs) > 0 {
		var names []string
		for _, d := range docs {
			names = append(names, d.term)
		}
		fmt.Fprintf(w, "\nglobal options: %s (git liza help)\n", strings.Join(names, ", "))
	}
	if h, _ := helpFor(path(cmd)); len(h.examples) > 0 {
		fmt.Fprintln(w, "\nexamples:")
		for _, ex := range h.examples {
			fmt.Fprintf(w, "  %s\n", ex)
		}
	}
}

func writeRootHelp(w io.Writer, root *cli.Command) {
	fmt.Fprintf(w, "usage: %s\n\n%s.\n", synopsis(root), capitalize(root.Usage))
	cats, byCat := groups(root)
	for _, cat := range cats {
		title := cat
		if title == "" {
			title = "other commands"
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		writeCommandList(w, byCat[cat])
	}
	fmt.Fprintln(w, "\nglobal options:")
	writeFlagDocs(w, flagDocs(root.VisibleFlags(), true))
	fmt.Fprintln(w, "\ngit liza help COMMAND (or git liza COMMAND --help) shows a command's options and examples;")
	fmt.Fprintln(w, "git liza install-man installs the manual page that git liza --help opens.")
}

// groups lists the visible commands of root by their group, the groups in
// the order their first command comes.
func groups(root *cli.Command) ([]string, map[string][]*cli.Command) {
	var cats []string
	byCat := map[string][]*cli.Command{}
	for _, c := range visible(root) {
		if _, ok := byCat[c.Category]; !ok {
			cats = append(cats, c.Category)
		}
		byCat[c.Category] = append(byCat[c.Category], c)
	}
	return cats, byCat
}

func writeCommandList(w io.Writer, cmds []*cli.Command) {
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.Name))
	}
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.Name, c.Usage)
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
