//go:build !race

package proc

// raceEnabled: the tests are built with the race detector.
const raceEnabled = false
