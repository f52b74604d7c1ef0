// Command linked is a floor of the bench's claims section: a program that
// links every package git-liza's commands link, runs their initialisers,
// and exits. What it takes over the empty program (git-liza-floor) is the
// price of starting a program made of those packages, before any command
// runs; the bench builds it as git-liza-linked.
package main

import _ "github.com/liza-dev/git-liza/commands"

func main() {}
