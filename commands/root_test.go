package commands

import "testing"

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
}
