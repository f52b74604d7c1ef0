package proc

import (
	"context"
	"encoding/binary"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// macOS's process table: sysctl gives the processes (kern.proc.all,
// kern.proc.pid), their start time and command name, and their command
// line and environment (kern.procargs2: the same user's processes only).
// No sysctl gives a working directory: lsof does (it reads them through
// libproc), bounded in time.

// szomb is a zombie's p_stat (SZOMB in sys/proc.h).
const szomb = 5

func processes() ([]int, bool) {
	all, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil || len(all) == 0 {
		return nil, false
	}
	pids := make([]int, 0, len(all))
	for _, p := range all {
		if p.Proc.P_pid > 0 {
			pids = append(pids, int(p.Proc.P_pid))
		}
	}
	return pids, true
}

func kinfo(pid int) (*unix.KinfoProc, bool) {
	if pid <= 0 {
		return nil, false
	}
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	// A pid nobody has gives a zeroed record, not an error.
	if err != nil || int(k.Proc.P_pid) != pid {
		return nil, false
	}
	return k, true
}

func info(pid int) (procInfo, bool) {
	k, ok := kinfo(pid)
	if !ok {
		return procInfo{}, false
	}
	comm := k.Proc.P_comm[:]
	if i := strings.IndexByte(string(comm), 0); i >= 0 {
		comm = comm[:i]
	}
	return procInfo{ppid: int(k.Eproc.Ppid), comm: string(comm), zombie: k.Proc.P_stat == szomb}, true
}

// StartTime is when process pid started (p_starttime), to the second.
func StartTime(pid int) (time.Time, bool) {
	k, ok := kinfo(pid)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(int64(k.Proc.P_starttime.Sec), 0), true
}

func argsEnv(pid int) (args, env []string) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return nil, nil
	}
	// Every Mac git-liza builds for (arm64, amd64) is little-endian.
	args, env, _ = parseProcArgs2(b, binary.LittleEndian)
	return args, env
}

// lsofWait bounds a look at the working directories: lsof reads every
// process's on a busy Mac within a second or two.
const lsofWait = 10 * time.Second

// cwds asks lsof for the working directories of pids, or of every
// process. A pid of pids that lsof leaves out (another user's, or lsof
// missing, failing or too slow) has "" while it runs.
func cwds(pids []int) map[int]string {
	dirs := lsofCwds(pids)
	for _, pid := range pids {
		if _, ok := dirs[pid]; !ok && Running(pid) {
			dirs[pid] = ""
		}
	}
	return dirs
}

// lsofCwds is what lsof says of the working directories of pids, or of
// every process for nil.
func lsofCwds(pids []int) map[int]string {
	ctx, cancel := context.WithTimeout(context.Background(), lsofWait)
	defer cancel()
	args := []string{"-w", "-n", "-P", "-d", "cwd", "-F", "pn"}
	if pids != nil {
		list := make([]string, len(pids))
		for i, p := range pids {
			list[i] = strconv.Itoa(p)
		}
		args = append(args, "-a", "-p", strings.Join(list, ","))
	}
	lsof := "/usr/sbin/lsof"
	if _, err := exec.LookPath(lsof); err != nil {
		lsof = "lsof"
	}
	// lsof exits 1 when some pid has no such file: its output still holds
	// those it found.
	out, _ := exec.CommandContext(ctx, lsof, args...).Output()
	if ctx.Err() != nil {
		return map[int]string{}
	}
	return parseLsofCwd(string(out))
}
