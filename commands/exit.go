package commands

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// exitCode maps an error to the exit code of the Liza taxonomy (its class,
// ops.Class) and the one line to print. This is the only place that turns
// errors into exit codes. The line is the error's first, as written: the
// text printer makes it printable (an error may quote input, an agent's
// too), JSON keeps it exact.
func exitCode(err error) (contracts.Code, string) {
	return ops.Class(err), contracts.FirstLine(err.Error())
}

// fail prints err on stderr and returns the exit code: one line starting
// "git-liza: ", and for a mistake on the command line a second with the
// command's usage; an error with details (a failed integration test's last
// lines of output) prints them after the line. With --json, one JSON
// object {"error", "code"[, "usage", "details"]}.
func (e *Env) fail(err error, asJSON bool) contracts.Code {
	var said *saidError
	if errors.As(err, &said) {
		return said.code
	}
	code, msg := exitCode(err)
	var ue *usageError
	usage := ""
	if errors.As(err, &ue) {
		usage = ue.usage
	}
	var d interface{ Details() []string }
	var details []string
	if errors.As(err, &d) {
		details = d.Details()
	}
	if asJSON {
		out := struct {
			Error   string   `json:"error"`
			Code    int      `json:"code"`
			Usage   string   `json:"usage,omitempty"`
			Details []string `json:"details,omitempty"`
		}{msg, int(code), usage, details}
		b, _ := json.Marshal(out)
		fmt.Fprintf(e.Stderr, "%s\n", b)
		return code
	}
	p := contracts.Printable
	fmt.Fprintf(e.Stderr, "git-liza: %s\n", p(msg))
	if len(details) > 0 {
		fmt.Fprintf(e.Stderr, "the last lines of its output:\n")
		for _, l := range details {
			fmt.Fprintf(e.Stderr, "  | %s\n", p(l))
		}
	}
	if usage != "" {
		fmt.Fprintf(e.Stderr, "usage: %s\n", p(usage))
	}
	return code
}

// jsonRequested reports whether args ask for --json (before any "--"):
// errors are then JSON too, even those found before the flags are parsed.
func jsonRequested(args []string) bool {
	for _, a := range args[min(1, len(args)):] {
		switch a {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-json=true":
			return true
		}
	}
	return false
}
