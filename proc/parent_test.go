//go:build unix

package proc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestOnClosed: the reader of a pipe closing it is noticed with nothing
// written; a watch stopped before says nothing.
func TestOnClosed(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	closed := make(chan struct{})
	stop := OnClosed(w, func() { close(closed) })
	defer stop()
	if runtime.GOOS != "linux" {
		t.Skip("only Linux watches an output")
	}
	select {
	case <-closed:
		t.Fatal("closed called while the reader is open")
	default:
	}
	r.Close()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("the reader closed the pipe, and OnClosed did not say so")
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("a write to a pipe nobody reads succeeded")
	}
}

// TestOnClosedStopped: a stopped watch never calls closed, and a file
// that cannot be watched is no error.
func TestOnClosedStopped(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var called atomic.Bool
	stop := OnClosed(w, func() { called.Store(true) })
	stop()
	stop()
	r.Close()
	w.Close()
	f, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	OnClosed(f, func() { called.Store(true) })()
	if called.Load() {
		t.Fatal("closed called after stop")
	}
}

// TestWatchParent: a parent that is not this process's parent is gone at
// the first look; the real one is not.
func TestWatchParent(t *testing.T) {
	gone := make(chan struct{})
	WatchParent(context.Background(), os.Getppid()+100000, time.Hour, func() { close(gone) })
	<-gone
	ctx, cancel := context.WithCancel(context.Background())
	var called atomic.Bool
	WatchParent(ctx, os.Getppid(), time.Millisecond, func() { called.Store(true) })
	time.Sleep(20 * time.Millisecond)
	cancel()
	if called.Load() {
		t.Fatal("the real parent was taken for gone")
	}
}

// TestDieWithParent: a child started from a Spawner with DieWithParent
// lives while its parent does, however many locked threads the parent
// lets go of, and ends when the parent is killed (SIGKILL, no cleanup).
// A child started from a goroutine locked to a thread that then ends is
// signalled at once (unless that thread was the main one): why the
// Spawner exists.
func TestDieWithParent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	if os.Getenv("PROC_TEST_PARENT") != "" {
		return
	}
	parent := exec.Command(os.Args[0], "-test.run=^TestDieWithParentHelper$")
	parent.Env = append(os.Environ(), "PROC_TEST_PARENT=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill()
	sc := bufio.NewScanner(out)
	pids := map[string]int{}
	for len(pids) < 1+lockedChildren && sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			pids[k], _ = strconv.Atoi(v)
		}
	}
	for _, pid := range pids {
		defer syscall.Kill(pid, syscall.SIGKILL)
	}
	if len(pids) != 1+lockedChildren || pids["spawner"] == 0 {
		t.Fatalf("the helper said %v", pids)
	}
	if !Running(pids["spawner"]) {
		t.Fatal("the Spawner's child was signalled while its parent lives")
	}
	// The premise: a child started from a locked goroutine is signalled
	// when the goroutine ends and its thread with it. Not every time: a
	// goroutine that happens to run on the process's main thread wedges
	// that thread rather than ending it (the runtime's mexit), and its
	// child lives on. That can happen to one goroutine only (a wedged
	// thread runs nothing more), so of lockedChildren children at least
	// lockedChildren-1 are signalled.
	signalled := 0
	eventually(func() bool {
		signalled = 0
		for i := range lockedChildren {
			if !Running(pids[fmt.Sprintf("locked%d", i)]) {
				signalled++
			}
		}
		return signalled >= lockedChildren-1
	})
	if signalled < lockedChildren-1 {
		t.Errorf("%d of %d children of threads that ended were signalled: the premise of the Spawner is wrong", signalled, lockedChildren)
	}
	_ = parent.Process.Kill()
	_ = parent.Wait()
	if !eventually(func() bool { return !Running(pids["spawner"]) }) {
		t.Fatal("the Spawner's child outlived its parent's SIGKILL")
	}
}

// TestDieWithParentHelper is the parent of TestDieWithParent: it starts
// one child from a Spawner and one from a locked goroutine that ends,
// lets other locked goroutines end (their threads with them), says the
// children's pids and waits to be killed.
func TestDieWithParentHelper(t *testing.T) {
	if os.Getenv("PROC_TEST_PARENT") == "" {
		t.Skip("helper of TestDieWithParent")
	}
	sleep := func() *exec.Cmd {
		c := exec.Command("sleep", "300")
		c.SysProcAttr = &syscall.SysProcAttr{}
		DieWithParent(c.SysProcAttr)
		return c
	}
	s := NewSpawner()
	a := sleep()
	if err := s.Start(a); err != nil {
		t.Fatal(err)
	}
	var locked []*exec.Cmd
	for range lockedChildren {
		b := sleep()
		started := make(chan error)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			started <- b.Start()
		}()
		if err := <-started; err != nil {
			t.Fatal(err)
		}
		locked = append(locked, b)
	}
	for range 8 {
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(done)
		}()
		<-done
	}
	fmt.Printf("spawner=%d\n", a.Process.Pid)
	for i, b := range locked {
		fmt.Printf("locked%d=%d\n", i, b.Process.Pid)
	}
	// Not select {}: with every goroutine blocked the runtime would end
	// the process as deadlocked.
	time.Sleep(time.Hour)
}

// lockedChildren is how many children TestDieWithParentHelper starts from
// locked goroutines that end.
const lockedChildren = 3

// eventually polls cond for up to 20 seconds.
func eventually(cond func() bool) bool {
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}
