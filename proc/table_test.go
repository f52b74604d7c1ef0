package proc

import (
	"encoding/binary"
	"slices"
	"testing"
)

// procargs2 builds what macOS's kern.procargs2 sysctl gives for a
// process: argc (a 32-bit integer in the machine's order), the executable's
// path, NUL padding, the arguments, the environment, then Apple's own
// strings after an empty one.
func procargs2(argc int32, exe string, pad int, rest ...string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(argc))
	b = append(b, exe...)
	b = append(b, make([]byte, 1+pad)...)
	for _, s := range rest {
		b = append(b, s...)
		b = append(b, 0)
	}
	return b
}

func TestParseProcArgs2(t *testing.T) {
	for _, c := range []struct {
		name      string
		raw       []byte
		args, env []string
		ok        bool
	}{
		{"args and environment", procargs2(3, "/usr/bin/git", 5, "git", "-C", "/work/repo", "HOME=/Users/a", "GIT_DIR=/work/repo/.git", "", "ptr_munge=", "executable_path=/usr/bin/git"),
			[]string{"git", "-C", "/work/repo"}, []string{"HOME=/Users/a", "GIT_DIR=/work/repo/.git"}, true},
		{"no padding, no environment", procargs2(1, "/bin/git", 0, "git"), []string{"git"}, nil, true},
		{"an empty argument", procargs2(2, "/bin/git", 2, "git", "", "A=1"), []string{"git", ""}, []string{"A=1"}, true},
		{"truncated arguments", procargs2(4, "/bin/git", 0, "git", "status"), nil, nil, false},
		{"too short for argc", []byte{1, 0}, nil, nil, false},
		{"a negative argc", procargs2(-1, "/bin/git", 0, "git"), nil, nil, false},
		{"no path's end", binary.LittleEndian.AppendUint32(nil, 1), nil, nil, false},
	} {
		args, env, ok := parseProcArgs2(c.raw, binary.LittleEndian)
		if ok != c.ok || !slices.Equal(args, c.args) || !slices.Equal(env, c.env) {
			t.Errorf("%s: parseProcArgs2 = %q %q %v, want %q %q %v", c.name, args, env, ok, c.args, c.env, c.ok)
		}
	}
}

// lsof -F output: a p line per process, then per file an f line (macOS's
// lsof gives one, some others not) and an n line with its name.
func TestParseLsofCwd(t *testing.T) {
	out := "p1\nfcwd\nn/\np42\nfcwd\nn/work/repo dir/.worktrees/t-1\np77\nn/tmp\np9\n"
	got := parseLsofCwd(out)
	want := map[int]string{1: "/", 42: "/work/repo dir/.worktrees/t-1", 77: "/tmp"}
	if len(got) != len(want) {
		t.Fatalf("parseLsofCwd = %v, want %v", got, want)
	}
	for pid, dir := range want {
		if got[pid] != dir {
			t.Errorf("parseLsofCwd: pid %d in %q, want %q", pid, got[pid], dir)
		}
	}
	if got := parseLsofCwd("garbage\npx\nn/a\n"); len(got) != 0 {
		t.Errorf("parseLsofCwd of garbage = %v", got)
	}
}
