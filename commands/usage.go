package commands

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v3"
)

// Mistakes on the command line: an unknown command or option is one line
// naming the nearest names, as git's "did you mean", and the usage of the
// command it was made in (see Env.fail).

// usageError is a mistake on the command line: one line, then the usage
// of the command it was made in.
type usageError struct {
	msg   string
	usage string
}

func (e *usageError) Error() string { return e.msg }

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

// flagMessage rewrites the command line library's message for a flag
// mistake in git's terms, with the nearest option names.
var undefinedFlag = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^flag provided but not defined: -+(.+)$`) })

func flagMessage(cmd *cli.Command, msg string) string {
	m := undefinedFlag().FindStringSubmatch(msg)
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
