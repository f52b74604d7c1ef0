// Package proc answers what recovery from a crash needs to know about
// processes: whether the process that owns something is still running
// (owners are recorded as a pid, the host and the process's start time, so
// that a reused pid is not mistaken for the owner), and which git processes
// may be working in a repository. It also has the named crash points that
// a test build of git-liza can kill itself at.
package proc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Owner is a process as a lock or a lease records it.
type Owner struct {
	PID  int
	Host string
	// Start is when the process started, to the second; zero when it is
	// not known (an owner recorded before start times were, or a system
	// without /proc).
	Start time.Time
}

// Me is this process.
func Me() Owner {
	host, _ := os.Hostname()
	o := Owner{PID: os.Getpid(), Host: host}
	o.Start, _ = StartTime(o.PID)
	return o
}

// String is "pid N on HOST", with " since TIME" when the start is known.
func (o Owner) String() string {
	s := fmt.Sprintf("pid %d on %s", o.PID, o.Host)
	if !o.Start.IsZero() {
		s += " since " + o.Start.UTC().Format(time.RFC3339)
	}
	return s
}

// ParseOwner reads what String writes, at the end of s (a lock reason
// says who locked and why first).
func ParseOwner(s string) (Owner, bool) {
	i := strings.LastIndex(s, "pid ")
	if i < 0 {
		return Owner{}, false
	}
	f := strings.Fields(s[i:])
	if len(f) != 4 && len(f) != 6 || f[2] != "on" {
		return Owner{}, false
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil || pid <= 0 {
		return Owner{}, false
	}
	o := Owner{PID: pid, Host: f[3]}
	if len(f) == 6 {
		if f[4] != "since" {
			return Owner{}, false
		}
		if o.Start, err = time.Parse(time.RFC3339, f[5]); err != nil {
			return Owner{}, false
		}
	}
	return o, true
}

// Here reports whether the owner ran on this host.
func (o Owner) Here() bool {
	host, _ := os.Hostname()
	return o.Host == host
}

// Gone reports whether the owner has certainly ended: it ran on this host
// and no process has its pid, or the process with its pid started at
// another time (the pid was reused). An owner on another host is never
// gone as far as this host can tell.
func (o Owner) Gone() bool {
	if !o.Here() {
		return false
	}
	if !Running(o.PID) {
		return true
	}
	if o.Start.IsZero() {
		return false
	}
	start, ok := StartTime(o.PID)
	if !ok {
		return false
	}
	d := start.Sub(o.Start)
	// The boot time /proc/stat gives moves by a second as the clock is
	// adjusted; two seconds apart is another process.
	return d > 2*time.Second || d < -2*time.Second
}

// Running reports whether a process (not a zombie) has pid.
func Running(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return false
	}
	if st, ok := state(pid); ok && st == 'Z' {
		return false
	}
	return true
}

// stat reads /proc/PID/stat past the command name, which may hold spaces
// and parentheses.
func stat(pid int) ([]string, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(string(b[i+1:])), true
}

// state is a process's state letter (R, S, Z, ...).
func state(pid int) (byte, bool) {
	f, ok := stat(pid)
	if !ok || len(f) < 1 || f[0] == "" {
		return 0, false
	}
	return f[0][0], true
}

var (
	bootOnce sync.Once
	boot     time.Time
)

// bootTime is when this machine started (btime in /proc/stat).
func bootTime() time.Time {
	bootOnce.Do(func() {
		b, err := os.ReadFile("/proc/stat")
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "btime "); ok {
				if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
					boot = time.Unix(n, 0)
				}
			}
		}
	})
	return boot
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's start time: 100 on
// every Linux architecture (it is part of the kernel's user interface).
const clockTicks = 100

// StartTime is when process pid started, to the second (Linux only).
func StartTime(pid int) (time.Time, bool) {
	f, ok := stat(pid)
	// starttime is field 22 of stat; f starts at field 3.
	if !ok || len(f) < 20 || bootTime().IsZero() {
		return time.Time{}, false
	}
	ticks, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return bootTime().Add(time.Duration(ticks) * time.Second / clockTicks).Truncate(time.Second), true
}
