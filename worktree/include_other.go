//go:build !unix

package worktree

const openNonblock = 0
