package contracts

import (
	"regexp"
	"strings"
	"testing"
)

// The id checks are written by hand so that no regular expression is
// compiled before main runs; these are the expressions they replaced, and
// the test holds the checks to them on every short string over an alphabet
// that reaches each branch, plus the long and odd cases.
var (
	kebabRE   = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	agentIDRE = regexp.MustCompile(`^(planner|coder|code-reviewer)-[1-9][0-9]{0,8}$`)
)

func TestIDChecksMatchTheirExpressions(t *testing.T) {
	var cases []string
	alphabet := []string{"", "a", "z", "0", "9", "1", "-", "A", "_", "\n", "é", " "}
	for _, a := range alphabet {
		for _, b := range alphabet {
			for _, c := range alphabet {
				cases = append(cases, a+b+c)
			}
		}
	}
	for _, p := range []string{"planner", "coder", "code-reviewer", "Coder", "code-review", "planners", "reviewer", ""} {
		for _, n := range []string{"", "-", "-0", "-1", "-01", "-10", "-123456789", "-1234567890", "-999999999", "-1a", "-1\n", "-١", "1", "--1", "-1-"} {
			cases = append(cases, p+n, " "+p+n, p+n+" ")
		}
	}
	cases = append(cases, strings.Repeat("a", 64), strings.Repeat("a", 65), "a\x00", "\x00a", "a-", "-a", "a--b", "ab\n")
	for _, s := range cases {
		if got, want := kebab(s), len(s) <= MaxIDLen && kebabRE.MatchString(s); got != want {
			t.Errorf("kebab(%q) = %v, the expression says %v", s, got, want)
		}
		if got, want := agentIDShape(s), agentIDRE.MatchString(s); got != want {
			t.Errorf("agentIDShape(%q) = %v, the expression says %v", s, got, want)
		}
	}
}
