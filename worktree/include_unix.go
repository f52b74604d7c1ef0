//go:build unix

package worktree

import "syscall"

// openNonblock keeps a FIFO put in place of a file to copy from blocking
// the open.
const openNonblock = syscall.O_NONBLOCK
