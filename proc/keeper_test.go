//go:build unix

package proc

import (
	"bufio"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// group starts a shell leading a process group of its own that leaves a
// command running in the background, and returns the leader and the pid
// of that command.
func group(t *testing.T) (*exec.Cmd, int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "sleep 300 & echo $!; exec sleep 300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	child, cerr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || cerr != nil {
		t.Fatalf("the group's background command: %q %v %v", line, err, cerr)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd, child
}

// alive says whether pid runs (a zombie counts as gone: its parent, this
// test, has not waited for it yet).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	st, err := readStat(pid)
	return err == nil && st != "Z"
}

// readStat is the state letter of pid (Linux's /proc), or "" elsewhere.
func readStat(pid int) (string, error) {
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out))[:1], nil
}

// gone waits up to 10 s for pid to end.
func gone(pid int) bool {
	for range 100 {
		if !alive(pid) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// TestGroupKeeperEndsWhatItKeeps: when the keeper's writer ends, every
// group still kept ends, its leader and what the leader left running
// beside it; a group dropped is left alone.
func TestGroupKeeperEndsWhatItKeeps(t *testing.T) {
	kept, keptChild := group(t)
	dropped, droppedChild := group(t)
	var k GroupKeeper
	k.Keep(kept.Process.Pid)
	k.Keep(dropped.Process.Pid)
	k.Drop(dropped.Process.Pid)
	k.Close()
	for _, pid := range []int{kept.Process.Pid, keptChild} {
		if !gone(pid) {
			t.Errorf("process %d of a kept group still runs after the keeper's writer ended", pid)
		}
	}
	for _, pid := range []int{dropped.Process.Pid, droppedChild} {
		if !alive(pid) {
			t.Errorf("process %d of a dropped group was ended", pid)
		}
	}
}

// TestGroupKeeperWithoutGroups: a keeper given nothing to keep starts no
// process, and Close returns at once.
func TestGroupKeeperWithoutGroups(t *testing.T) {
	var k GroupKeeper
	k.Drop(12345)
	k.Close()
	if k.cmd != nil {
		t.Fatal("a keeper started with nothing to keep")
	}
}

// TestGroupKeeperKilledIsStartedAgain: a keeper killed on its own (a
// stray kill -9) is reaped and started again at the next Keep or Drop,
// and learns every group still kept, the ones kept before it was killed
// too: they still end with this process.
func TestGroupKeeperKilledIsStartedAgain(t *testing.T) {
	first, firstChild := group(t)
	second, secondChild := group(t)
	var k GroupKeeper
	k.Keep(first.Process.Pid)
	old := k.cmd.Process.Pid
	_ = syscall.Kill(old, syscall.SIGKILL)
	for syscall.Kill(old, 0) == nil {
		if st, err := readStat(old); err != nil || st == "Z" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	k.Keep(second.Process.Pid)
	if k.cmd == nil || k.cmd.Process.Pid == old {
		t.Fatal("the killed keeper was not started again")
	}
	for i := 0; syscall.Kill(old, 0) == nil; i++ {
		if i == 500 {
			t.Errorf("the killed keeper (pid %d) was not reaped", old)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	k.Close()
	for _, pid := range []int{first.Process.Pid, firstChild, second.Process.Pid, secondChild} {
		if !gone(pid) {
			t.Errorf("process %d of a kept group still runs after the keeper's writer ended", pid)
		}
	}
}
