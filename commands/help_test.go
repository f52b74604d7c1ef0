package commands

import (
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// Every command a person can see has a usage line, a group on the root's
// list and examples; every text belongs to a command.
func TestHelpTexts(t *testing.T) {
	root := (&Env{}).app()
	seen := map[string]bool{"": true}
	var walk func(c *cli.Command, prefix string)
	walk = func(c *cli.Command, prefix string) {
		for _, sub := range c.Commands {
			name := strings.TrimSpace(prefix + sub.Name)
			seen[name] = true
			h, ok := helpFor(name)
			switch {
			case sub.Hidden || c.Hidden:
				sub.Hidden = true
			case !ok:
				t.Errorf("%s: no entry in helpTexts", name)
			case h.usage == "":
				t.Errorf("%s: no usage line", name)
			case len(h.examples) == 0:
				t.Errorf("%s: no examples", name)
			case prefix == "" && h.category == "":
				t.Errorf("%s: no group", name)
			}
			for _, ex := range h.examples {
				if !strings.HasPrefix(ex, "git ") {
					t.Errorf("%s: example %q does not start with git", name, ex)
				}
			}
			walk(sub, name+" ")
		}
	}
	walk(root, "")
	named := map[string]bool{}
	for _, h := range helpTexts {
		if !seen[h.name] {
			t.Errorf("helpTexts has %q, which is no command", h.name)
		}
		if named[h.name] {
			t.Errorf("helpTexts has %q twice", h.name)
		}
		named[h.name] = true
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"claim", "checkpoint", "heartbeat", "help", "status", "show", "submit", "sync"}
	for _, tc := range []struct {
		word string
		want []string
	}{
		{"claimm", []string{"claim"}},
		{"cliam", []string{"claim"}},
		{"hepl", []string{"help"}},
		{"stauts", []string{"status"}},
		{"s", nil},
		{"sh", []string{"show"}},
		{"zzzzzz", nil},
	} {
		if got := suggest(tc.word, names); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("suggest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

// Without git-liza-board beside git-liza or on PATH, git liza board says
// how to install it (exit 5).
func TestBoardProgramMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := program(BoardProgram, "git liza board")
	if err == nil || !strings.Contains(err.Error(), "go install github.com/liza-dev/git-liza/git-liza-board@latest") {
		t.Fatalf("err = %v", err)
	}
}

func TestVersionString(t *testing.T) {
	for _, tc := range []struct {
		v    Version
		want string
	}{
		{Version{Version: "v1.2.0"}, "git-liza version v1.2.0"},
		{Version{Version: "(devel)", Commit: "0123456789abcdef0123", CommitTime: "2026-01-17T10:00:00Z", Modified: true},
			"git-liza version (devel) (commit 0123456789ab, 2026-01-17T10:00:00Z, modified)"},
	} {
		if got := tc.v.String(); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}
