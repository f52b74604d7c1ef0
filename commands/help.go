package commands

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"
)

// Help is rendered here, from the command tree and the texts of helpText,
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

// usageError is a mistake on the command line: one line, then the usage
// of the command it was made in.
type usageError struct {
	msg   string
	usage string
}

func (e *usageError) Error() string { return e.msg }

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
// examples from helpText, usage errors that print its usage, and, when it
// only groups other commands, an action that names a mistyped one.
func prepare(cmd *cli.Command, prefix string) {
	name := strings.TrimSpace(prefix + cmd.Name)
	if prefix == "" {
		name = ""
	}
	if h, ok := helpText[name]; ok {
		if h.usage != "" {
			cmd.UsageText = "git liza " + h.usage
		}
		cmd.Category = h.category
	}
	cmd.HideHelpCommand = true
	cmd.OnUsageError = func(_ context.Context, c *cli.Command, err error, _ bool) error {
		return &usageError{msg: flagMessage(c, err.Error()), usage: synopsis(c)}
	}
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

// unknownCommand is the error for a word that names no command of cmd,
// with the nearest names.
func unknownCommand(cmd *cli.Command, word string) error {
	where := "git liza"
	if p := path(cmd); p != "" {
		where += " " + p
	}
	if word == "" {
		return &usageError{msg: where + " needs a command: " + strings.Join(visibleNames(cmd), ", "), usage: synopsis(cmd)}
	}
	msg := fmt.Sprintf("%q is not a %s command", word, where)
	if s := suggest(word, visibleNames(cmd)); len(s) > 0 {
		msg += "; did you mean " + orList(s) + "?"
	} else {
		msg += fmt.Sprintf(" (git liza help%s lists them)", strings.TrimPrefix(where, "git liza"))
	}
	return &usageError{msg: msg, usage: synopsis(cmd)}
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

// flagMessage rewrites the command line library's message for a flag
// mistake in git's terms, with the nearest option names.
var undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -+(.+)$`)

func flagMessage(cmd *cli.Command, msg string) string {
	m := undefinedFlag.FindStringSubmatch(msg)
	if m == nil {
		return strings.NewReplacer("flag: -", "flag: --", "for flag -", "for flag --", "argument: -", "argument: --").Replace(msg)
	}
	var names []string
	for _, c := range cmd.Lineage() {
		for _, f := range c.VisibleFlags() {
			for _, n := range f.Names() {
				if len(n) > 1 {
					names = append(names, n)
				}
			}
		}
	}
	out := "unknown option --" + m[1]
	if s := suggest(m[1], names); len(s) > 0 {
		for i := range s {
			s[i] = "--" + s[i]
		}
		out += "; did you mean " + orList(s) + "?"
	}
	return out
}

// suggest returns the candidates nearest to word, as git's "did you
// mean": within an edit distance that grows with the word, or starting
// with it. At most three, nearest first.
func suggest(word string, candidates []string) []string {
	type scored struct {
		name string
		d    int
	}
	var found []scored
	for _, c := range candidates {
		d := editDistance(word, c)
		if d <= max(1, len(word)/3) || len(word) >= 2 && strings.HasPrefix(c, word) {
			found = append(found, scored{c, d})
		}
	}
	slices.SortStableFunc(found, func(a, b scored) int { return a.d - b.d })
	var out []string
	for i := 0; i < len(found) && i < 3; i++ {
		if !slices.Contains(out, found[i].name) {
			out = append(out, found[i].name)
		}
	}
	return out
}

// editDistance is the Damerau-Levenshtein distance (adjacent swaps cost
// one) between a and b.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

func orList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = "'" + x + "'"
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
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
	if h := helpText[path(cmd)]; len(h.examples) > 0 {
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

// flagDoc is one option as help shows it.
type flagDoc struct {
	term  string // "--task ID"
	usage string // with its default and environment variable
}

// placeholder is a backquoted word in a flag's usage that names its
// argument, as in "read the state at `REV`".
var placeholder = regexp.MustCompile("`([A-Z][A-Z0-9_=,.|-]*)`")

// flagDocs describes flags; global picks the root's own options (and
// leaves out help), else the command's own.
func flagDocs(flags []cli.Flag, global bool) []flagDoc {
	var out []flagDoc
	for _, f := range flags {
		names := f.Names()
		if names[0] == "help" {
			continue
		}
		var terms []string
		for _, n := range names {
			if len(n) == 1 {
				terms = append(terms, "-"+n)
			} else {
				terms = append(terms, "--"+n)
			}
		}
		term := strings.Join(terms, ", ")
		usage := ""
		if d, ok := f.(cli.DocGenerationFlag); ok {
			usage = d.GetUsage()
			arg := ""
			if m := placeholder.FindStringSubmatch(usage); m != nil {
				arg = m[1]
			}
			usage = strings.ReplaceAll(placeholder.ReplaceAllString(usage, "$1"), "`", "")
			if d.TakesValue() {
				if arg == "" {
					arg = argName(d.TypeName())
				}
				term += " " + arg
			}
			if def := defaultText(d); def != "" && !strings.Contains(usage, "(default") {
				usage += " (default: " + def + ")"
			}
			if env := d.GetEnvVars(); len(env) > 0 {
				usage += " (env " + strings.Join(env, ", ") + ")"
			}
		}
		out = append(out, flagDoc{term: term, usage: usage})
	}
	return out
}

// inherited is the root's flags that every command takes (not those
// local to the root, such as --version).
func inherited(root *cli.Command) []cli.Flag {
	var out []cli.Flag
	for _, f := range root.VisibleFlags() {
		if l, ok := f.(cli.LocalFlag); !ok || !l.IsLocal() {
			out = append(out, f)
		}
	}
	return out
}

// argName is the placeholder of a flag's argument by its type.
func argName(typ string) string {
	switch strings.TrimPrefix(typ, "[]") {
	case "int", "int64", "uint", "uint64":
		return "N"
	case "time.Duration", "duration":
		return "DURATION"
	}
	return "TEXT"
}

// defaultText is a flag's default worth showing: not a zero value.
func defaultText(d cli.DocGenerationFlag) string {
	if t := d.GetDefaultText(); t != "" {
		return t
	}
	if !d.TakesValue() || !d.IsDefaultVisible() {
		return ""
	}
	switch v := d.GetValue(); v {
	case "", "0", "0s", "false", "[]", `""`:
		return ""
	default:
		return strings.Trim(v, `"`)
	}
}

func writeFlagDocs(w io.Writer, docs []flagDoc) {
	width := 0
	for _, d := range docs {
		width = max(width, len(d.term))
	}
	for _, d := range docs {
		fmt.Fprintf(w, "  %-*s  %s\n", width, d.term, d.usage)
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
