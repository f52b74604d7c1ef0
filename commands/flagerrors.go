package commands

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
)

// Mistakes in a flag's value, and required flags left out, for every
// command in one place: prepare installs both. Each is one line in the
// user's words, naming the flag as it is typed (-n, --priority), and is
// found before the command reads or writes anything.

// mustBe says what a flag's value must be, for the flags whose type does
// not say it all; the others are described by their type (valueKind).
var mustBe = map[string]string{
	"priority":     "a number from 1 to 5",
	"retry-budget": "a positive duration such as 30s or 2m",
}

// priorityFlag is the --priority of task add and task edit: a value out
// of range is refused while the flags are parsed, as one that is not a
// number is.
func priorityFlag(value int) *cli.IntFlag {
	return &cli.IntFlag{Name: "priority", Value: value, Usage: "1 (highest) to 5 (lowest)",
		Validator: func(n int) error {
			if n < 1 || n > 5 {
				return contracts.Invalidf("out of range")
			}
			return nil
		}}
}

// invalidValue is the command line library's message for a value a flag
// could not take: the value quoted as Go quotes it, the flag's name after
// one dash, and the parser's or the validator's error.
var invalidValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^invalid value ("(?:[^"\\]|\\.)*") for flag -([^ :]+): `)
})

// needsArgument is its message for a flag given no value at the end of
// the line.
var needsArgument = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^flag needs an argument: -+(.+)$`) })

// valueMessage rewrites the library's message for a bad flag value as
// "--priority must be a number from 1 to 5, not "high"", or returns ""
// when msg is not about a value.
func valueMessage(cmd *cli.Command, msg string) string {
	if m := needsArgument().FindStringSubmatch(msg); m != nil {
		name := m[1]
		return fmt.Sprintf("%s needs a value: %s", typed(name), kindOf(cmd, name))
	}
	m := invalidValue().FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	val, err := strconv.Unquote(m[1])
	if err != nil {
		val = m[1]
	}
	name := m[2]
	what := kindOf(cmd, name)
	if what == "" {
		// A flag with a validator of its own and no words here: its
		// validator's message says what is wrong.
		return fmt.Sprintf("%s %q: %s", typed(name), val, msg[len(m[0]):])
	}
	return fmt.Sprintf("%s must be %s, not %q", typed(name), what, val)
}

// kindOf says what flag name of cmd (or of a command above it) takes.
func kindOf(cmd *cli.Command, name string) string {
	if w, ok := mustBe[name]; ok {
		return w
	}
	for _, c := range cmd.Lineage() {
		for _, f := range c.Flags {
			if !slices.Contains(f.Names(), name) {
				continue
			}
			switch f.(type) {
			case *cli.IntFlag, *cli.Int64Flag, *cli.IntSliceFlag:
				return "a whole number"
			case *cli.UintFlag, *cli.Uint64Flag:
				return "a whole number from 0"
			case *cli.FloatFlag:
				return "a number"
			case *cli.DurationFlag:
				return "a duration such as 30s or 2m"
			case *cli.BoolFlag:
				return "true or false"
			}
			return ""
		}
	}
	return ""
}

// typed is flag name as it is typed on the command line: one dash for a
// one-letter name (-n, -p), two for the others (--priority).
func typed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// requirement is flags a command needs; unless names a boolean flag that
// waives them (task add --draft leaves the spec for later).
type requirement struct {
	flags  []string
	unless string
}

// required lists, by command path, the flags a command cannot run
// without. The operations check them too (the MCP server calls them
// directly); here they are all named at once, before anything runs.
var required = map[string][]requirement{
	"task add":       {{flags: []string{"id", "desc"}}, {flags: []string{"spec", "done", "scope"}, unless: "draft"}},
	"task block":     {{flags: []string{"reason", "question"}}},
	"task supersede": {{flags: []string{"by", "reason"}}},
	"task abandon":   {{flags: []string{"reason"}}},
	"checkpoint":     {{flags: []string{"intent", "validation", "files"}}},
	"handoff":        {{flags: []string{"summary", "next"}}},
	"anomaly":        {{flags: []string{"task"}}},
}

// requireFlags makes cmd's action refuse to run while one of the flags
// its path requires is missing or blank, naming every such flag.
func requireFlags(cmd *cli.Command, path string) {
	reqs, ok := required[path]
	if !ok || cmd.Action == nil {
		return
	}
	act := cmd.Action
	cmd.Action = func(ctx context.Context, c *cli.Command) error {
		var missing []string
		for _, r := range reqs {
			if r.unless != "" && c.Bool(r.unless) {
				continue
			}
			for _, f := range r.flags {
				if blank(c, f) {
					missing = append(missing, "--"+f)
				}
			}
		}
		if len(missing) > 0 {
			return contracts.Invalidf("%s: missing %s", path, strings.Join(missing, ", "))
		}
		return act(ctx, c)
	}
}

// blank reports whether flag name of c was left out, or, for a text,
// given only spaces. A list given empty items is left to the operation,
// which says so (--question needs a non-empty value).
func blank(c *cli.Command, name string) bool {
	if !c.IsSet(name) {
		return true
	}
	switch v := c.Value(name).(type) {
	case string:
		return strings.TrimSpace(v) == ""
	}
	return false
}
