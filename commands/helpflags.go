package commands

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/urfave/cli/v3"
)

// flagDoc is one option as help shows it.
type flagDoc struct {
	term  string // "--task ID"
	usage string // with its default and environment variable
}

// placeholder is a backquoted word in a flag's usage that names its
// argument, as in "read the state at `REV`".
var placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`([A-Z][A-Z0-9_=,.|-]*)`") })

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
			if m := placeholder().FindStringSubmatch(usage); m != nil {
				arg = m[1]
			}
			usage = strings.ReplaceAll(placeholder().ReplaceAllString(usage, "$1"), "`", "")
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
