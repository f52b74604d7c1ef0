package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func TestOwnerRoundTrip(t *testing.T) {
	me := Me()
	got, ok := ParseOwner("git-liza claim of t1 by coder-1: " + me.String())
	if !ok || got.PID != me.PID || got.Host != me.Host || !got.Start.Equal(me.Start) {
		t.Fatalf("ParseOwner(%q) = %+v %v", me.String(), got, ok)
	}
	if me.Gone() {
		t.Fatal("this process is gone")
	}
	old, ok := ParseOwner("pid 1 on elsewhere")
	if !ok || old.PID != 1 || old.Host != "elsewhere" || !old.Start.IsZero() || old.Gone() {
		t.Fatalf("an owner on another host: %+v %v", old, ok)
	}
	for _, bad := range []string{"", "pid", "pid x on h", "pid 1 on h since yesterday", "pid -3 on h"} {
		if _, ok := ParseOwner(bad); ok {
			t.Errorf("ParseOwner(%q) ok", bad)
		}
	}
}

func TestGone(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	o := Me()
	o.PID = cmd.Process.Pid
	if !o.Gone() {
		t.Fatalf("ended process %d not gone", o.PID)
	}
	if _, ok := StartTime(os.Getpid()); !ok {
		t.Skip("no /proc here")
	}
	// The pid runs, but the process started at another time: reused.
	me := Me()
	me.Start = me.Start.Add(-time.Hour)
	if !me.Gone() {
		t.Fatal("a reused pid taken for its owner")
	}
}

// A git process whose working directory is in the repository may hold its
// locks; one working elsewhere may not.
func TestGitIn(t *testing.T) {
	if _, known := GitIn(nil); !known {
		t.Skip("no process table here")
	}
	repo, other := t.TempDir(), t.TempDir()
	for _, d := range []string{repo, other} {
		if out, err := exec.Command("git", "init", "-q", d).CombinedOutput(); err != nil {
			t.Fatalf("%v %s", err, out)
		}
	}
	// git cat-file --batch waits on its input for as long as it is open:
	// a fifo, for a git that is not this process's child, whose own
	// children GitIn leaves out.
	fifo := filepath.Join(t.TempDir(), "in")
	if err := exec.Command("mkfifo", fifo).Run(); err != nil {
		t.Skip("no mkfifo here")
	}
	cmd := exec.Command("sh", "-c", "git cat-file --batch < "+fifo+" & echo $!; wait")
	cmd.Dir = other
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Fscan(out, &pid); err != nil {
		t.Fatal(err)
	}
	in, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	waitFor := func(want bool, dirs ...string) {
		t.Helper()
		for i := 0; i < 200; i++ {
			pids, _ := GitIn(dirs)
			found := false
			for _, p := range pids {
				found = found || p == pid
			}
			if found == want {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("GitIn(%v): found %d = %v", dirs, pid, !want)
	}
	waitFor(true, other)
	waitFor(false, repo)
	waitFor(true, filepath.Join(other, ".git"), other)

	// A git child of this process is left out.
	own := exec.Command("git", "cat-file", "--batch")
	own.Dir = other
	ownIn, _ := own.StdinPipe()
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { ownIn.Close(); own.Wait() }()
	time.Sleep(50 * time.Millisecond)
	pids, _ := GitIn([]string{other})
	for _, p := range pids {
		if p == own.Process.Pid {
			t.Fatal("this process's own git child counted")
		}
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		dir, p string
		in     bool
	}{
		{"/a/b", "/a/b", true}, {"/a/b", "/a/b/c", true}, {"/a/b", "/a/bc", false}, {"/a/b/", "/a/b/c", true}, {"/a/b", "/a", false},
	} {
		if Within(c.dir, c.p) != c.in {
			t.Errorf("Within(%q, %q) != %v", c.dir, c.p, c.in)
		}
	}
}
