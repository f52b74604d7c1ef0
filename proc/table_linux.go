package proc

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Linux's process table is /proc.

// processes lists the pids under /proc.
func processes() ([]int, bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	var pids []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, len(pids) > 0
}

// info reads /proc/PID/stat and /proc/PID/comm.
func info(pid int) (procInfo, bool) {
	f, ok := stat(pid)
	if !ok || len(f) < 2 || f[0] == "" {
		return procInfo{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	in := procInfo{ppid: ppid, zombie: f[0] == "Z"}
	if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm")); err == nil {
		in.comm = strings.TrimSpace(string(b))
	}
	return in, true
}

// cwds reads the /proc/PID/cwd links of pids, or of every process. A
// process that is gone, or on its way out (its link is gone before it is a
// zombie), has none; one this user may not look into has "".
func cwds(pids []int) map[int]string {
	if pids == nil {
		pids, _ = processes()
	}
	dirs := map[int]string{}
	for _, pid := range pids {
		cwd, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "cwd"))
		switch {
		case err == nil:
			dirs[pid] = cwd
		case !os.IsNotExist(err):
			dirs[pid] = ""
		}
	}
	return dirs
}

// argsEnv reads /proc/PID/cmdline and /proc/PID/environ (the latter is
// the owner's alone to read).
func argsEnv(pid int) (args, env []string) {
	base := filepath.Join("/proc", strconv.Itoa(pid))
	if b, err := os.ReadFile(filepath.Join(base, "cmdline")); err == nil {
		args = strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
	}
	if b, err := os.ReadFile(filepath.Join(base, "environ")); err == nil {
		env = strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
	}
	return args, env
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

// StartTime is when process pid started, to the second; false where the
// system does not tell (see the other table_*.go).
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
