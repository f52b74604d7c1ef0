package refstore

import (
	"os"
	"testing"
)

// Only transport commands get the relay, and only when the person chose
// no proxy: not in the environment, their config or on the command line.
func TestWithRelay(t *testing.T) {
	gitEnv(t)
	saved := relayPath
	t.Cleanup(func() { relayPath = saved })
	relayPath = func() (string, bool) { return "/opt/liza/git-liza-relay", true }
	base := []string{"PATH=/usr/bin"}
	proxy := func(env []string) string { return envValue(env, "GIT_PROXY_COMMAND") }

	for _, args := range [][]string{{"fetch", "origin"}, {"push", "origin"}, {"-c", "a.b=c", "fetch"}} {
		if got := proxy(containGit(base, args)); got != "/opt/liza/git-liza-relay" {
			t.Errorf("%q: proxy %q, want the relay", args, got)
		}
	}
	for _, args := range [][]string{{"update-ref", "--stdin"}, {"cat-file", "--batch"}, {"merge-tree"}, {"ls-remote", "origin"}, nil} {
		if got := proxy(containGit(base, args)); got != "" {
			t.Errorf("%q: proxy %q, want none", args, got)
		}
	}
	mine := append(base, "GIT_PROXY_COMMAND=/home/me/proxy")
	if got := proxy(containGit(mine, []string{"fetch"})); got != "/home/me/proxy" {
		t.Errorf("the person's GIT_PROXY_COMMAND became %q", got)
	}
	if got := proxy(containGit(base, []string{"-c", "core.gitProxy=/home/me/proxy", "fetch"})); got != "" {
		t.Errorf("git -c core.gitProxy: proxy %q, want git's own choice", got)
	}
	counted := append(base, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.gitproxy", "GIT_CONFIG_VALUE_0=/home/me/proxy")
	if got := proxy(containGit(counted, []string{"fetch"})); got != "" {
		t.Errorf("GIT_CONFIG_COUNT core.gitproxy: proxy %q, want git's own choice", got)
	}
	global := os.Getenv("GIT_CONFIG_GLOBAL")
	if err := os.WriteFile(global, []byte("[core]\n\tgitProxy = /home/me/proxy for example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := proxy(containGit(base, []string{"fetch"})); got != "" {
		t.Errorf("core.gitProxy in the person's config: proxy %q, want git's own choice", got)
	}
}
