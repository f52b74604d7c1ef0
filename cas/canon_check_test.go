package cas

import "github.com/liza-dev/git-liza/contracts"

// Every state file this package's tests write or read is written or read
// by the library too, and a difference panics (contracts.CrossCheckCanon).
func init() { contracts.CrossCheckCanon() }
