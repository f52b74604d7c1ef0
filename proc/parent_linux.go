package proc

import (
	"os"
	"sync"
	"syscall"
)

// DieWithParent asks the kernel to send the process attr starts SIGTERM
// when the thread that starts it ends (Pdeathsig): start it from a
// Spawner, whose thread lives as long as the process that owns it.
func DieWithParent(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGTERM
}

// OnClosed calls closed, once, when the other end of f (a pipe or a
// socket this process writes, or a terminal) is gone: the reader of a
// pipe closed it, a terminal hung up. It learns of it from the kernel
// (epoll reports an error or a hang-up on f, whatever else was asked),
// without writing, so that a process with nothing to say notices too.
// For a file or a device that cannot be watched it does nothing. stop
// ends the watch.
func OnClosed(f *os.File, closed func()) (stop func()) {
	nothing := func() {}
	raw, err := f.SyscallConn()
	if err != nil {
		return nothing
	}
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nothing
	}
	var wake [2]int
	if err := syscall.Pipe2(wake[:], syscall.O_CLOEXEC); err != nil {
		syscall.Close(ep)
		return nothing
	}
	cleanup := func() {
		syscall.Close(ep)
		syscall.Close(wake[0])
		syscall.Close(wake[1])
	}
	var ctlErr error
	target := int32(-1)
	if err := raw.Control(func(fd uintptr) {
		target = int32(fd)
		// No event asked for: EPOLLERR and EPOLLHUP are always reported.
		ctlErr = syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, int(fd), &syscall.EpollEvent{Fd: int32(fd)})
	}); err != nil || ctlErr != nil {
		cleanup()
		return nothing
	}
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, wake[0], &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(wake[0])}); err != nil {
		cleanup()
		return nothing
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		events := make([]syscall.EpollEvent, 2)
		for {
			n, err := syscall.EpollWait(ep, events, -1)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				return
			}
			for _, ev := range events[:n] {
				if ev.Fd == int32(wake[0]) {
					return
				}
			}
			for _, ev := range events[:n] {
				if ev.Fd == target && ev.Events&(syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
					closed()
					return
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			_, _ = syscall.Write(wake[1], []byte{0})
			<-done
			cleanup()
		})
	}
}
