//go:build canoncheck

package contracts

// A build with the canoncheck tag (the crash harness's, the tutorial
// test's) checks every canonical encode and decode against the library,
// as the tests' own processes do.
func init() { CrossCheckCanon() }
