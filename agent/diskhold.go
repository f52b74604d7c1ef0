package agent

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// diskFailed reports whether err is the repository's disk full, and notes
// the hold (hold.go). An error of this process's own writes (ENOSPC,
// EDQUOT) says so by itself; any other failure (git's, whose words vary:
// "No space left on device", "couldn't write '...lock'", "unable to write
// file") counts when the disk has less than refstore.MinRoom left as it
// is looked at, never by its words: text quoted into an error cannot hold
// the team.
func (s *sup) diskFailed(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		s.begin(&s.waits.disk, diskWords, s.Root, contracts.FirstLine(err.Error()))
		return true
	}
	return s.lookDisk(true)
}

// lookDisk looks at the room on the repository's disk: under minRoom the
// disk hold begins (or goes on), else it ends unless keep. It reports
// whether the disk is full.
func (s *sup) lookDisk(keep bool) bool {
	if s.Repo == nil {
		return false
	}
	room, files, ok := refstore.DiskRoom(s.Repo.CommonDir)
	if !ok {
		return false
	}
	if refstore.Full(room, files) {
		s.begin(&s.waits.disk, diskWords, s.Root, fmt.Sprintf("%d KiB and %d files left", room>>10, files))
		return true
	}
	if !keep {
		s.end(&s.waits.disk, diskWords)
	}
	return false
}

// unlessDiskFull is err, a failure to write a file of the supervisor's
// own (a prompt, a session's log), unless the disk is full: then nil, and
// the loop waits for room, where the supervisor stopped.
func (s *sup) unlessDiskFull(err error) error {
	if s.diskFailed(err) {
		return nil
	}
	return err
}

// diskHeld reports whether the disk hold holds.
func (s *sup) diskHeld() bool {
	s.waits.mu.Lock()
	defer s.waits.mu.Unlock()
	return !s.waits.disk.since.IsZero()
}
