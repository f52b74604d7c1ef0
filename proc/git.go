package proc

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// GitIn lists the running git processes that may be working in one of
// dirs (absolute paths: a repository's git directories and checkouts):
// every process named git or git-something (git-liza's own processes,
// this process's children and ancestors excepted: they hold none of git's
// locks that this process could be asking about), unless it can be
// seen to work elsewhere, that is its working directory, the directories
// its command line and environment name (-C, --git-dir, --work-tree,
// GIT_DIR, GIT_WORK_TREE, GIT_COMMON_DIR) and the absolute paths among its
// arguments all lie outside dirs. A process whose working directory cannot be read (another user's)
// counts. known is false when the process table cannot be read at all
// (no /proc): then nothing can be said to be free.
func GitIn(dirs []string) (pids []int, known bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	self := os.Getpid()
	// The git that runs this process (git liza ...), and what runs that,
	// hold nothing while they wait for it.
	ancestors := map[int]bool{}
	for p := os.Getppid(); p > 1 && !ancestors[p]; {
		ancestors[p] = true
		f, ok := stat(p)
		if !ok || len(f) < 2 {
			break
		}
		p, _ = strconv.Atoi(f[1])
	}
	seen := false
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		seen = true
		if pid == self || ancestors[pid] || !isGit(pid) {
			continue
		}
		// This process's own git children (a cat-file it reads objects
		// through, an update-ref waiting for its updates) hold none of the
		// locks it asks about: those it took, it let go of.
		if f, ok := stat(pid); ok && (len(f) > 0 && f[0] == "Z" || len(f) > 1 && f[1] == strconv.Itoa(self)) {
			continue
		}
		if mayWorkIn(pid, dirs) {
			pids = append(pids, pid)
		}
	}
	return pids, seen
}

// isGit reports whether a process is git or one of its helpers.
func isGit(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	if err != nil {
		return false
	}
	name := strings.TrimSpace(string(b))
	if strings.HasPrefix(name, "git-liza") {
		return false
	}
	return name == "git" || strings.HasPrefix(name, "git-")
}

// mayWorkIn reports whether process pid may be working in one of dirs.
func mayWorkIn(pid int, dirs []string) bool {
	base := filepath.Join("/proc", strconv.Itoa(pid))
	cwd, err := os.Readlink(filepath.Join(base, "cwd"))
	if err != nil {
		return !os.IsNotExist(err)
	}
	paths := []string{cwd}
	if b, err := os.ReadFile(filepath.Join(base, "cmdline")); err == nil {
		args := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
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
	}
	if b, err := os.ReadFile(filepath.Join(base, "environ")); err == nil {
		for _, kv := range strings.Split(string(b), "\x00") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR":
				paths = append(paths, v)
			}
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
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		known = true
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err == nil && Within(dir, strings.TrimSuffix(cwd, " (deleted)")) {
			pids = append(pids, pid)
		}
	}
	return pids, known
}
