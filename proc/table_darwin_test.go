package proc

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// On a Mac, this process is read back through sysctl and lsof: its parent,
// its start, its arguments and environment, its working directory.
func TestTableDarwin(t *testing.T) {
	self := os.Getpid()
	in, ok := info(self)
	if !ok || in.ppid != os.Getppid() || in.zombie || in.comm == "" {
		t.Fatalf("info(self) = %+v %v", in, ok)
	}
	start, ok := StartTime(self)
	if !ok || time.Since(start) < 0 || time.Since(start) > time.Hour {
		t.Fatalf("StartTime(self) = %v %v", start, ok)
	}
	args, env := argsEnv(self)
	if !slices.Equal(args, os.Args) || len(env) == 0 {
		t.Fatalf("argsEnv(self) = %q, %d variables; want %q", args, len(env), os.Args)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	got := cwds([]int{self})[self]
	if a, b := evalDir(t, got), evalDir(t, wd); a != b {
		t.Fatalf("cwds(self) = %q, want %q", got, wd)
	}
	if pids, known := processes(); !known || !slices.Contains(pids, self) {
		t.Fatalf("processes() has not this process: %v", known)
	}
	if info, ok := info(1 << 30); ok || Running(1<<30) {
		t.Fatalf("a pid nobody has: %+v", info)
	}
}

// evalDir resolves /var and /private/var, one directory on a Mac.
func evalDir(t *testing.T, d string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(d)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
