//go:build !unix

package worktree

import "os"

// readSmall reads a registration's file.
func readSmall(path string) ([]byte, bool) {
	b, err := os.ReadFile(path)
	return b, err == nil
}
