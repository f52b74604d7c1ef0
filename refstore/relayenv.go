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

// relayFor says whether git run with args connects to git:// servers
// through git-liza-relay, and where it is: when args are a transport
// command, the relay is installed, and the person running git-liza chose
// no proxy of their own (user and command are their config files' entries
// and their command-line config): neither GIT_PROXY_COMMAND nor a
// core.gitProxy. (A core.gitProxy in the repository's own config is not
// theirs to choose: containEnv neutralises it, and the relay replaces
// it.) Other URLs never use a proxy command, so the relay changes nothing
// for them.
func relayFor(base, args []string, user []configEntry, command map[string]string) (string, bool) {
	if a := stripConfig(args); len(a) == 0 || !slices.Contains(transportCommands, a[0]) {
		return "", false
	}
	if envValue(base, "GIT_PROXY_COMMAND") != "" || hasOption(args, "core.gitproxy") {
		return "", false
	}
	if _, ok := command["core.gitproxy"]; ok {
		return "", false
	}
	for _, e := range user {
		if e.Key == "core.gitproxy" {
			return "", false
		}
	}
	return relayPath()
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
