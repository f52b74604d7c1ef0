package proc

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
)

// GroupKeeper ends the process groups it keeps when this process ends,
// however it ends: killed outright (SIGKILL, an out-of-memory kill) too,
// when nothing of this process runs to end them. A supervisor keeps each
// session's group from its start to its end; the kernel's parent-death
// signal reaches only the process a supervisor started (the group's
// leader), not what that process started in its group (a tool's command,
// a test run, a server started with &).
//
// The keeper is a small shell, started at the first Keep, in a process
// group of its own and deaf to the signals a terminal or a group kill
// sends: it reads the groups to keep from a pipe whose only writer is this
// process. When the pipe's write end closes (Close, or this process gone
// and the kernel closing its files), it sends each group still kept
// SIGTERM, then SIGKILL a second later, and exits. A group dropped (its
// session over and its members killed) is not signalled: its number may
// be given to another group once it is empty.
//
// What leaves the group (a daemon that starts a session of its own) is
// out of its reach, as it is of the supervisor's own stop. A process
// killed between a session's start and its Keep leaves that session to
// the parent-death signal alone. Without a shell, or where the keeper
// cannot start, Keep does nothing more. A keeper killed on its own is
// reaped and started again at the next Keep or Drop, and told every group
// still kept.
type GroupKeeper struct {
	mu     sync.Mutex
	w      *os.File
	cmd    *exec.Cmd
	failed bool
	kept   []int // the groups kept now
}

// keeperScript is the keeper: one line "+PGID" or "-PGID" per group kept
// or dropped, then, at the end of its input, the groups still kept ended
// (never group 0 or 1: kill -1 signals every process it may).
const keeperScript = `trap '' HUP INT QUIT TERM PIPE
kept=
while read -r line; do
	case $line in
	+[0-9]*) kept="$kept ${line#+}" ;;
	-[0-9]*)
		left=
		for g in $kept; do [ "$g" = "${line#-}" ] || left="$left $g"; done
		kept=$left ;;
	esac
done
[ -n "$kept" ] || exit 0
for g in $kept; do [ "$g" -gt 1 ] && kill -s TERM -- "-$g" 2>/dev/null; done
sleep 1
for g in $kept; do [ "$g" -gt 1 ] && kill -s KILL -- "-$g" 2>/dev/null; done
exit 0
`

// Keep adds the process group pgid (its leader's pid) to those ended with
// this process.
func (k *GroupKeeper) Keep(pgid int) { k.send('+', pgid) }

// Drop takes pgid out of them, once its session is over.
func (k *GroupKeeper) Drop(pgid int) { k.send('-', pgid) }

func (k *GroupKeeper) send(op byte, pgid int) {
	if pgid <= 1 {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kept = slices.DeleteFunc(k.kept, func(g int) bool { return g == pgid })
	if op == '+' {
		k.kept = append(k.kept, pgid)
	}
	for range 2 {
		var err error
		switch {
		case k.w != nil:
			_, err = fmt.Fprintf(k.w, "%c%d\n", op, pgid)
		case k.failed || len(k.kept) == 0 || !k.start():
			return
		default:
			// A keeper started now learns every group still kept.
			var b []byte
			for _, g := range k.kept {
				b = fmt.Appendf(b, "+%d\n", g)
			}
			_, err = k.w.Write(b)
		}
		if err == nil {
			return
		}
		// The keeper is gone (killed on its own): it is reaped, and the
		// next try starts another, which learns every group still kept.
		k.w.Close()
		cmd := k.cmd
		go func() { _ = cmd.Wait() }()
		k.w, k.cmd = nil, nil
	}
}

// start starts the keeper (under k.mu), and says whether it did.
func (k *GroupKeeper) start() bool {
	if !groups {
		k.failed = true
		return false
	}
	r, w, err := os.Pipe()
	if err != nil {
		k.failed = true
		return false
	}
	cmd := exec.Command("/bin/sh", "-c", keeperScript)
	cmd.Stdin = r // its only input; the write end stays here (close-on-exec)
	ownGroup(cmd)
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		k.failed = true
		return false
	}
	k.w, k.cmd = w, cmd
	return true
}

// Close ends the keeper: the groups still kept are ended as if this
// process had. Call it once every session is over.
func (k *GroupKeeper) Close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.w == nil {
		return
	}
	k.w.Close()
	k.w, k.failed = nil, true
	_ = k.cmd.Wait()
}
