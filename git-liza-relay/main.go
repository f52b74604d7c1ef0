// Command git-liza-relay is the proxy command git runs for the git://
// connections of git-liza's fetches and pushes (see package relay).
package main

import (
	"os"

	"github.com/liza-dev/git-liza/relay"
)

func main() {
	os.Exit(relay.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
