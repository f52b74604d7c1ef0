package proc

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// What the process table of each system gives (table_linux.go reads
// /proc, table_darwin.go sysctl and lsof; elsewhere nothing is known):
//
//	pids()        every process's pid; false when the table cannot be read
//	info(pid)     its parent, command name and whether it is a zombie
//	cwds(pids)    the working directories of pids (of every process for
//	              nil): "" for a process whose directory may not be read
//	              (another user's), none for one that has ended
//	argsEnv(pid)  its command line and environment, when readable
//	StartTime(pid)
//
// procInfo is what info gives.
type procInfo struct {
	ppid   int
	comm   string // the command name, as the system shortens it
	zombie bool
}

// GitIn lists the running git processes that may be working in one of
// dirs (absolute paths: a repository's git directories and checkouts):
// every process named git or git-something (git-liza's own processes,
// this process's children and ancestors excepted: they hold none of git's
// locks that this process could be asking about), unless it can be
// seen to work elsewhere, that is its working directory, the directories
// its command line and environment name (-C, --git-dir, --work-tree,
// GIT_DIR, GIT_WORK_TREE, GIT_COMMON_DIR) and the absolute paths among its
// arguments all lie outside dirs. A process whose working directory
// cannot be read (another user's) counts. known is false when the process
// table cannot be read at all: then nothing can be said to be free.
func GitIn(dirs []string) (pids []int, known bool) {
	all, known := processes()
	if !known {
		return nil, false
	}
	self := os.Getpid()
	// The git that runs this process (git liza ...), and what runs that,
	// hold nothing while they wait for it.
	ancestors := map[int]bool{}
	for p := os.Getppid(); p > 1 && !ancestors[p]; {
		ancestors[p] = true
		in, ok := info(p)
		if !ok {
			break
		}
		p = in.ppid
	}
	var gits []int
	for _, pid := range all {
		if pid == self || ancestors[pid] {
			continue
		}
		in, ok := info(pid)
		// This process's own git children (a cat-file it reads objects
		// through, an update-ref waiting for its updates) hold none of the
		// locks it asks about: those it took, it let go of.
		if !ok || !isGit(in.comm) || in.zombie || in.ppid == self {
			continue
		}
		gits = append(gits, pid)
	}
	if len(gits) == 0 {
		return nil, true
	}
	wd := cwds(gits)
	for _, pid := range gits {
		cwd, ok := wd[pid]
		switch {
		case !ok: // ended meanwhile
			continue
		case cwd == "": // another user's: it may hold the lock
			pids = append(pids, pid)
			continue
		}
		args, env := argsEnv(pid)
		if mayWorkIn(cwd, args, env, dirs) {
			pids = append(pids, pid)
		}
	}
	return pids, true
}

// isGit reports whether a command name is git's or one of its helpers'.
func isGit(name string) bool {
	if strings.HasPrefix(name, "git-liza") {
		return false
	}
	return name == "git" || strings.HasPrefix(name, "git-")
}

// mayWorkIn reports whether a process working in cwd, with args and env
// (either may be unknown: nil), may be working in one of dirs.
func mayWorkIn(cwd string, args, env []string, dirs []string) bool {
	paths := []string{cwd}
	for i, a := range args {
		switch {
		case a == "-C" && i+1 < len(args):
			paths = append(paths, args[i+1])
		case strings.HasPrefix(a, "--git-dir="), strings.HasPrefix(a, "--work-tree="):
			_, v, _ := strings.Cut(a, "=")
			paths = append(paths, v)
		case (a == "--git-dir" || a == "--work-tree") && i+1 < len(args):
			paths = append(paths, args[i+1])
		case filepath.IsAbs(a):
			// git worktree add PATH, and the like.
			paths = append(paths, a)
		}
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR":
			paths = append(paths, v)
		}
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		for _, d := range dirs {
			if Within(d, p) {
				return true
			}
		}
	}
	return false
}

// Within reports whether p is dir or lies under it.
func Within(dir, p string) bool {
	dir, p = filepath.Clean(dir), filepath.Clean(p)
	if p == dir {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// Using lists the processes whose working directory lies in dir (none
// known when the process table cannot be read: known is false).
func Using(dir string) (pids []int, known bool) {
	if _, known = processes(); !known {
		return nil, false
	}
	for pid, cwd := range cwds(nil) {
		if cwd != "" && Within(dir, strings.TrimSuffix(cwd, " (deleted)")) {
			pids = append(pids, pid)
		}
	}
	return pids, true
}

// parseProcArgs2 reads the bytes of macOS's kern.procargs2 sysctl: argc
// (32 bits, in the machine's order), the executable's path and NUL
// padding, argc arguments, then the environment up to an empty string
// (what follows is the system's own). Each string ends with a NUL. ok is
// false for bytes that do not hold argc arguments.
func parseProcArgs2(b []byte, order binary.ByteOrder) (args, env []string, ok bool) {
	if len(b) < 4 {
		return nil, nil, false
	}
	argc := int32(order.Uint32(b))
	b = b[4:]
	end := bytes.IndexByte(b, 0)
	if argc < 0 || end < 0 {
		return nil, nil, false
	}
	b = b[end:]
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	next := func() (string, bool) {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return "", false
		}
		s := string(b[:i])
		b = b[i+1:]
		return s, true
	}
	for range argc {
		s, ok := next()
		if !ok {
			return nil, nil, false
		}
		args = append(args, s)
	}
	for {
		s, ok := next()
		if !ok || s == "" {
			return args, env, true
		}
		env = append(env, s)
	}
}

// parseLsofCwd reads `lsof -d cwd -F pn`: a line "p" PID starts each
// process, "n" PATH names its working directory (an "f" line, the file
// descriptor, may come between).
func parseLsofCwd(out string) map[int]string {
	dirs := map[int]string{}
	pid := 0
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		switch line[0] {
		case 'p':
			n, err := strconv.Atoi(line[1:])
			if err != nil || n <= 0 {
				pid = 0
				continue
			}
			pid = n
		case 'n':
			if pid > 0 {
				dirs[pid] = line[1:]
			}
		}
	}
	return dirs
}
