package commands

import (
	"slices"
	"testing"

	"github.com/urfave/cli/v3"
)

func TestCommandName(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"git-liza", "--agent", "planner-1", "task", "add", "--id", "x"}, "task"},
		{[]string{"git-liza", "--agent=planner-1", "claim"}, "claim"},
		{[]string{"git-liza", "--json", "status"}, "status"},
		{[]string{"git-liza", "-json", "--retry-budget", "5s", "show", "t-1"}, "show"},
		{[]string{"git-liza", "--request-id", "status", "show"}, "show"}, // "status" is the id
		{[]string{"git-liza", "--generation", "3", "heartbeat"}, "heartbeat"},
		{[]string{"git-liza", "--help"}, ""},
		{[]string{"git-liza"}, ""},
		{[]string{"git-liza", "--", "task"}, ""},
	} {
		if got := commandName(tc.args); got != tc.want {
			t.Errorf("commandName(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// Narrowing to the named command keeps what every command line means:
// the same command runs, help and unknown names still see them all.
func TestOnlyKeepsMeaning(t *testing.T) {
	app := (&Env{}).app()
	all := len(app.Commands)
	for _, tc := range []struct {
		args []string
		want string // "" when every command must stay
	}{
		{[]string{"git-liza", "task", "add"}, "task"},
		{[]string{"git-liza", "--agent", "coder-1", "claim", "t-1"}, "claim"},
		{[]string{"git-liza", "--help"}, ""},
		{[]string{"git-liza", "no-such-command"}, ""},
		{[]string{"git-liza", "help", "task"}, ""},
	} {
		got := only(app, tc.args)
		if tc.want == "" {
			if len(got) != all {
				t.Errorf("only(%q) kept %d of %d commands", tc.args, len(got), all)
			}
			continue
		}
		if len(got) != 1 || got[0].Name != tc.want {
			t.Errorf("only(%q) = %d commands, want just %s", tc.args, len(got), tc.want)
		}
	}
	if !stateOnly([]string{"git-liza", "task", "add"}) || stateOnly([]string{"git-liza", "claim"}) || stateOnly([]string{"git-liza"}) {
		t.Error("stateOnly: task add is state-only, claim and no command are not")
	}
	// A claim without a worktree makes nothing outside the state; any
	// spelling that might still ask for one keeps the signal handler.
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"git-liza", "--agent", "coder-1", "claim", "--no-worktree"}, true},
		{[]string{"git-liza", "claim", "t1", "-no-worktree"}, true},
		{[]string{"git-liza", "claim", "t1"}, false},
		{[]string{"git-liza", "claim", "--no-worktree=false"}, false},
		{[]string{"git-liza", "claim", "--no-worktree", "--no-worktree=false"}, false},
		{[]string{"git-liza", "claim", "--no-worktree=true"}, false},
		{[]string{"git-liza", "claim", "--", "--no-worktree"}, false},
		{[]string{"git-liza", "submit", "--no-worktree"}, false},
	} {
		if got := stateOnly(c.args); got != c.want {
			t.Errorf("stateOnly(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

// commandsFor builds only the command a line runs: it must pick the same
// one only picks from the whole tree, for every name and alias, and build
// them all whenever help or a mistyped name may list them. A line that
// only asks for the version needs none.
func TestCommandsForBuildsWhatRuns(t *testing.T) {
	e := &Env{}
	app := e.app()
	names := func(cs []*cli.Command) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	lines := [][]string{
		{"git-liza"}, {"git-liza", "--help"}, {"git-liza", "help", "claim"}, {"git-liza", "no-such-command"},
		{"git-liza", "--", "claim"}, {"git-liza", "--version", "claim"}, {"git-liza", "--version", "-h"},
		{"git-liza", "--json", "--agent", "coder-1", "claim", "t-1"},
	}
	for _, c := range app.Commands {
		for _, n := range c.Names() {
			lines = append(lines, []string{"git-liza", n}, []string{"git-liza", "--agent", "coder-1", n, "--help"})
		}
	}
	for _, args := range lines {
		if got, want := names(e.commandsFor(args)), names(only(app, args)); !slices.Equal(got, want) {
			t.Errorf("commandsFor(%q) = %q, only keeps %q", args, got, want)
		}
	}
	for _, args := range [][]string{{"git-liza", "--version"}, {"git-liza", "--version", "--json"}, {"git-liza", "--json", "--version"}} {
		if got := e.commandsFor(args); len(got) != 0 {
			t.Errorf("commandsFor(%q) built %d commands, want none", args, len(got))
		}
	}
}

// groupOf names, for every top-level command but help (which lists them
// all), the group that builds it, so that commandsFor builds that group
// alone.
func TestGroupOfEveryCommand(t *testing.T) {
	e := &Env{}
	groups := e.commandGroups()
	for i, g := range groups {
		for _, c := range g() {
			want := i
			if c.Name == "help" {
				want = -1
			}
			if got := groupOf(c.Name); got != want {
				t.Errorf("groupOf(%q) = %d, want %d", c.Name, got, want)
			}
		}
	}
}

// only narrows the commands of app to the one args name, when they name
// one: what Run did before commandsFor built just that one. Help, a
// mistyped name and anything unusual keep them all. It stays here as the
// meaning commandsFor must keep.
func only(app *cli.Command, args []string) []*cli.Command {
	name := commandName(args)
	if name == "help" {
		return app.Commands
	}
	for _, c := range app.Commands {
		if name != "" && named(c, name) {
			return []*cli.Command{c}
		}
	}
	return app.Commands
}
