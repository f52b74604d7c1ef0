package commands

import (
	"runtime"

	"github.com/liza-dev/git-liza/contracts"
)

// supervisorsRefused refuses, on Windows, a command that runs supervisors
// (run, agent, demo): a supervisor puts its agent in a process group of
// its own and stops the whole group by signal, and a team's supervisors
// stop when run ends through a parent-death signal or by watching their
// parent; Windows has neither groups nor those signals, and a team there
// would leave agents running. goos is runtime.GOOS, a parameter for tests.
func supervisorsRefused(goos, name string) error {
	if goos != "windows" {
		return nil
	}
	return contracts.Errorf(contracts.CodeMissingDep, "%s: not supported on Windows (needs POSIX process groups); use WSL", name)
}

// refuseSupervisors is supervisorsRefused on this system.
func refuseSupervisors(name string) error { return supervisorsRefused(runtime.GOOS, name) }

// runsSupervisors are the commands supervisorsRefused is called for: their
// help page and manual entry say so (platformNote).
var runsSupervisors = map[string]bool{"run": true, "agent": true, "demo": true}

// platformNote is what the help of command name (its path below the root)
// says of the systems it does not run on, or "".
func platformNote(name string) string {
	if !runsSupervisors[name] {
		return ""
	}
	return "Not on Windows (exit 5): supervisors need POSIX process groups and signals; use WSL."
}
