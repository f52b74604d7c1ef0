package refstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// stopGroup kills the process group ownGroup gave cmd (killGroup), and
// removes the temporary files its processes had open in the object
// directory objects ("" for none). A fetch stopped in the middle of a
// pack leaves git's index-pack's tmp_pack_* (and the tmp_idx_*, tmp_obj_*
// beside it) where git gc removes them only weeks later; on a link that
// fails every time, each retry left another. The group is stopped first,
// so that what its processes hold open can be read before they die; only
// those files go, never another git's at work in the same repository.
func stopGroup(cmd *exec.Cmd, objects string) error {
	if objects == "" {
		return killGroup(cmd)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGSTOP)
	temps := openTemps(cmd.Process.Pid, objects)
	err := killGroup(cmd)
	for _, name := range temps {
		_ = os.Remove(name)
	}
	return err
}

// openTemps lists the files the processes of group pgid (every process
// this one may look at, when pgid is 0) hold open that are git's
// temporary files in the object directory objects: named tmp_*, in
// objects itself, objects/pack or a loose object's directory.
func openTemps(pgid int, objects string) []string {
	objects = realDir(objects)
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var temps []string
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pgid != 0 && groupOf(pid) != pgid {
			continue
		}
		fds, err := os.ReadDir("/proc/" + p.Name() + "/fd")
		if err != nil {
			continue
		}
		for _, fd := range fds {
			name, err := os.Readlink("/proc/" + p.Name() + "/fd/" + fd.Name())
			if err == nil && isGitTemp(name, objects) {
				temps = append(temps, name)
			}
		}
	}
	return temps
}

// packTemps names git's temporary files in objects/pack, as a git
// command starts: what removeLeftTemps must leave.
func packTemps(objects string) map[string]bool {
	ents, err := os.ReadDir(filepath.Join(objects, "pack"))
	if err != nil {
		return nil
	}
	names := map[string]bool{}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "tmp_") {
			names[e.Name()] = true
		}
	}
	return names
}

// removeLeftTemps removes the temporary files in objects/pack that a git
// command which failed on its own left (a fetch whose link dropped in the
// middle of a pack: git's index-pack leaves what it wrote of it): those
// that were not there as it started (before) and that no process has open.
// While any process holds one of git's temporary files in this object
// directory open (another git writing a pack, its index next), nothing is
// removed: that git's pack may be closed, waiting for its rename.
func removeLeftTemps(objects string, before map[string]bool) {
	var left []string
	for name := range packTemps(objects) {
		if !before[name] {
			left = append(left, filepath.Join(objects, "pack", name))
		}
	}
	if len(left) == 0 || len(openTemps(0, objects)) > 0 {
		return
	}
	for _, name := range left {
		_ = os.Remove(name)
	}
}

// realDir is dir with its symbolic links resolved, as the kernel names
// open files; dir itself when that fails.
func realDir(dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}

// groupOf is the process group of process pid, -1 when it cannot be read.
func groupOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 {
		return -1
	}
	g, err := strconv.Atoi(f[2])
	if err != nil {
		return -1
	}
	return g
}

// isGitTemp says whether name is one of git's temporary files in the
// object directory objects: tmp_* directly in objects, objects/pack or a
// loose object's directory (two hexadecimal digits).
func isGitTemp(name, objects string) bool {
	dir, base := filepath.Split(name)
	if !strings.HasPrefix(base, "tmp_") {
		return false
	}
	dir = filepath.Clean(dir)
	if dir == objects {
		return true
	}
	parent, sub := filepath.Split(dir)
	if filepath.Clean(parent) != objects {
		return false
	}
	return sub == "pack" || len(sub) == 2 && strings.Trim(sub, "0123456789abcdef") == ""
}
