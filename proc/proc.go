// Package proc answers what recovery from a crash needs to know about
// processes: whether the process that owns something is still running
// (owners are recorded as a pid, the host and the process's start time, so
// that a reused pid is not mistaken for the owner), and which git processes
// may be working in a repository. It also has the named crash points that
// a test build of git-liza can kill itself at.
package proc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Owner is a process as a lock or a lease records it.
type Owner struct {
	PID  int
	Host string
	// Start is when the process started, to the second; zero when it is
	// not known (an owner recorded before start times were, or a system
	// whose process table cannot be read: see StartTime).
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
	// The boot time Linux's /proc/stat gives moves by a second as the
	// clock is adjusted; two seconds apart is another process.
	return d > 2*time.Second || d < -2*time.Second
}
