package refstore

import (
	"slices"
	"strings"
	"sync"

	"github.com/liza-dev/git-liza/companion"
)

// RelayProgram is the companion program that git-liza's fetches and pushes
// over git:// connect through (package relay says why).
const RelayProgram = "git-liza-relay"

// transportCommands are the git commands whose git:// connections go
// through the relay. A ref listing (git ls-remote: a clone far back in a
// queue looking whether its turn is near, a question asked once) connects
// itself: its wait matters less than the relay's start, about 4 ms of
// processor time a connection, which clones waiting on one machine's
// cores pay many times a turn.
var transportCommands = []string{"fetch", "push", "clone"}

var relayPath = sync.OnceValues(func() (string, bool) { return companion.Find(RelayProgram) })

// Relay says where git-liza-relay is, and whether it is installed.
func Relay() (string, bool) { return relayPath() }

// withRelay has a transport command's git connect to git:// servers
// through git-liza-relay, when it is installed and the person running
// git-liza chose no proxy of their own: neither GIT_PROXY_COMMAND nor a
// core.gitProxy in their config or on the command line. (A core.gitProxy
// in the repository's own config is not theirs to choose: contain.go
// neutralises it, and the relay replaces it.) Other URLs never use a
// proxy command, so this changes nothing for them.
func withRelay(env, args []string) []string {
	if a := stripConfig(args); len(a) == 0 || !slices.Contains(transportCommands, a[0]) {
		return env
	}
	if envValue(env, "GIT_PROXY_COMMAND") != "" || hasOption(args, "core.gitproxy") {
		return env
	}
	if _, ok := commandConfig(func(k string) string { return envValue(env, k) })["core.gitproxy"]; ok {
		return env
	}
	for _, e := range loadUserConfigs() {
		if e.Key == "core.gitproxy" {
			return env
		}
	}
	path, ok := relayPath()
	if !ok {
		return env
	}
	return withConfigPairs(env, nil, []string{"GIT_PROXY_COMMAND=" + path})
}

// hasOption reports whether args set key with a leading -c.
func hasOption(args []string, key string) bool {
	for len(args) >= 2 && args[0] == "-c" {
		if k, _, _ := strings.Cut(args[1], "="); normalKey(k) == key {
			return true
		}
		args = args[2:]
	}
	return false
}
