package refstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

func TestIsGitTemp(t *testing.T) {
	objects := "/r/.git/objects"
	for name, want := range map[string]bool{
		"/r/.git/objects/pack/tmp_pack_AbC123": true,
		"/r/.git/objects/pack/tmp_idx_AbC123":  true,
		"/r/.git/objects/ab/tmp_obj_AbC123":    true,
		"/r/.git/objects/tmp_objdir":           true,
		"/r/.git/objects/pack/pack-1234.pack":  false,
		"/r/.git/objects/info/tmp_alternates":  false,
		"/r/.git/objects/AB/tmp_obj_AbC123":    false,
		"/r/.git/objects/abc/tmp_obj_AbC123":   false,
		"/r/.git/tmp_pack_AbC123":              false,
		"/elsewhere/objects/pack/tmp_pack_x":   false,
		"/r/.git/objects/pack/x/tmp_pack_x":    false,
	} {
		if got := isGitTemp(name, objects); got != want {
			t.Errorf("isGitTemp(%s) = %v, want %v", name, got, want)
		}
	}
}

func TestGroupOf(t *testing.T) {
	if got, want := groupOf(os.Getpid()), syscall.Getpgrp(); got != want {
		t.Fatalf("groupOf(self) = %d, want %d", got, want)
	}
	if got := groupOf(-5); got != -1 {
		t.Fatalf("groupOf(-5) = %d, want -1", got)
	}
}

// A stopped group's open temporary files go with it; a file the group
// does not hold stays, though it is named as git names its own. The
// object directory may be reached through a symbolic link (the kernel
// names open files by their real path).
func TestStopGroupRemovesItsOpenTemps(t *testing.T) {
	for _, linked := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "linked"}[linked], func(t *testing.T) {
			testStopGroup(t, linked)
		})
	}
}

func testStopGroup(t *testing.T, linked bool) {
	objects := filepath.Join(t.TempDir(), "objects")
	pack := filepath.Join(objects, "pack")
	if err := os.MkdirAll(pack, 0o755); err != nil {
		t.Fatal(err)
	}
	if linked {
		link := filepath.Join(t.TempDir(), "objects")
		if err := os.Symlink(objects, link); err != nil {
			t.Fatal(err)
		}
		objects, pack = link, filepath.Join(link, "pack")
	}
	other := filepath.Join(pack, "tmp_pack_other")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(pack, "tmp_pack_mine")
	cmd := exec.Command("sh", "-c", `exec 3>"$1"; echo ready; exec sleep 60`, "sh", mine)
	ownGroup(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := out.Read(make([]byte, 6)); err != nil {
		t.Fatal(err)
	}
	if got := openTemps(cmd.Process.Pid, objects); len(got) != 1 || filepath.Base(got[0]) != "tmp_pack_mine" {
		t.Fatalf("openTemps = %q, want %s", got, mine)
	}
	if err := stopGroup(cmd, objects); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if _, err := os.Stat(mine); !os.IsNotExist(err) {
		t.Errorf("the stopped group's temporary file is still there (%v)", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another temporary file went too: %v", err)
	}
}

// What a failed command left is removed, unless it was there before or a
// process holds a temporary file of the object directory open.
func TestRemoveLeftTemps(t *testing.T) {
	objects := filepath.Join(t.TempDir(), "objects")
	pack := filepath.Join(objects, "pack")
	if err := os.MkdirAll(pack, 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(pack, "tmp_pack_old")
	os.WriteFile(old, nil, 0o644)
	before := packTemps(objects)
	left := filepath.Join(pack, "tmp_pack_left")
	os.WriteFile(left, nil, 0o644)

	// Another git writes a pack's index: nothing goes.
	busy, err := os.Create(filepath.Join(pack, "tmp_idx_busy"))
	if err != nil {
		t.Fatal(err)
	}
	removeLeftTemps(objects, before)
	if _, err := os.Stat(left); err != nil {
		t.Fatalf("removed while another git wrote: %v", err)
	}
	busy.Close()
	os.Remove(busy.Name())

	removeLeftTemps(objects, before)
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("what the failed command left is still there (%v)", err)
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("what was there before went: %v", err)
	}
}
