package cas

import (
	"fmt"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

// withBudget sets *v to n for the test.
func withBudget(t *testing.T, v *int64, n int64) {
	old := *v
	*v = n
	t.Cleanup(func() { *v = old })
}

// A whole read of a state takes at most loadBudget bytes of its files, and
// its trees hold at most treeBudget bytes: beyond, it is refused as
// inconsistent, before the file or tree that would go over is read.
func TestLoadAndTreeBudgets(t *testing.T) {
	s := initStore(t)
	var ts []*contracts.Task
	for i := range 20 {
		ts = append(ts, task(fmt.Sprintf("task-%d", i)))
	}
	mustUpdate(t, s, putTasks(ts...))
	load := func() error {
		snap, err := ReadSnapshot(s.Repo, tip(t, s))
		if err != nil {
			return err
		}
		_, err = snap.Load()
		return err
	}
	if err := load(); err != nil {
		t.Fatal(err)
	}
	t.Run("files", func(t *testing.T) {
		withBudget(t, &loadBudget, 4<<10)
		e := wantCode(t, load(), contracts.CodeInconsistent)
		if !strings.Contains(e.Msg, "hold more than the 4 KiB a whole read takes") {
			t.Fatalf("error %q", e.Msg)
		}
	})
	t.Run("an import's files", func(t *testing.T) {
		snap, err := ReadSnapshot(s.Repo, tip(t, s))
		if err != nil {
			t.Fatal(err)
		}
		_, err = snap.LoadWithin(4 << 10)
		e := wantCode(t, err, contracts.CodeInconsistent)
		if !strings.Contains(e.Msg, "hold more than the 4 KiB a whole read takes") {
			t.Fatalf("error %q", e.Msg)
		}
		if _, err := snap.Load(); err != nil {
			t.Fatalf("Load after a refused LoadWithin: %v", err)
		}
	})
	t.Run("trees", func(t *testing.T) {
		withBudget(t, &treeBudget, 1<<10)
		e := wantCode(t, load(), contracts.CodeInconsistent)
		if !strings.Contains(e.Msg, "hold more than the 1 KiB cap of a state's trees") {
			t.Fatalf("error %q", e.Msg)
		}
	})
}

// git-liza writes no state file over its cap, and refuses to read one that
// a hand (or an attacker) wrote, naming the size and the cap.
func TestFileCap(t *testing.T) {
	s := initStore(t)
	big := task("big")
	big.Description = strings.Repeat("the same words again ", (MaxFile/21)+1)
	refused(t, s, putTasks(big), "over the 1 MiB cap of a state file")

	meta := tipFile(t, s, MetaFile)
	files := map[string]string{LayoutFile: tipFile(t, s, LayoutFile), MetaFile: meta + "# " + strings.Repeat("x", MaxFile) + "\n"}
	gitCommitState(t, s, files)
	snap, err := ReadSnapshot(s.Repo, tip(t, s))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = snap.ReadFile(MetaFile)
	e := wantCode(t, err, contracts.CodeInconsistent)
	want := fmt.Sprintf("liza.yaml at %s is %d bytes, over the 1 MiB cap of a state file", short(snap.Commit), len(files[MetaFile]))
	if !strings.Contains(e.Msg, want) {
		t.Fatalf("error %q does not say %q", e.Msg, want)
	}
}
