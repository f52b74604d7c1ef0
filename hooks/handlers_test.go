package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

const stamp = "2026-01-17T10:00:00Z"

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestReferenceTransactionHandler(t *testing.T) {
	gitEnv(t)
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	z := strings.Repeat("0", 40)
	a := strings.Repeat("a", 40)
	for _, tc := range []struct {
		name, state, input string
		env                map[string]string
		refused            string
	}{
		{"moved by hand", "prepared", z + " " + a + " refs/heads/x\n" + z + " " + a + " refs/liza/state\n", nil,
			"refusing to move refs/liza/state to aaaaaaaaaaaa by hand: it moves only through git liza commands (git liza hooks uninstall removes this guard)"},
		{"deleted by hand", "prepared", a + " " + z + " refs/liza/state\n", nil, "refusing to delete refs/liza/state by hand"},
		{"git-liza's own", "prepared", z + " " + a + " refs/liza/state\n", map[string]string{refstore.RefUpdateEnv: "1"}, ""},
		{"committed", "committed", z + " " + a + " refs/liza/state\n", nil, ""},
		{"other refs", "prepared", z + " " + a + " refs/liza/remotes/origin/state\n", nil, ""},
	} {
		h := &Handler{Dir: dir, Stdin: strings.NewReader(tc.input), Getenv: env(tc.env)}
		err := h.Run(context.Background(), ReferenceTransaction, []string{tc.state})
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.refused != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.refused)):
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.refused)
		}
	}
}

func TestCheckRole(t *testing.T) {
	for _, tc := range []struct{ agent, op, want string }{
		{"human", "add", ""},
		{"planner-1", "add", ""},
		{"coder-1", "claim", ""},
		{"coder-1", "add", "coder-1 (coder) may not add"},
		{"human", "claim", "human (human) may not claim"},
		{"code-reviewer-2", "merge", ""},
		{"robot-1", "add", "Liza-Agent: invalid agent id"},
		{"planner-1", "teleport", `Liza-Op: unknown operation "teleport"`},
	} {
		got := checkRole(tc.agent, contracts.Op(tc.op))
		if tc.want == "" && got != "" || tc.want != "" && !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s %s: %q, want %q", tc.agent, tc.op, got, tc.want)
		}
	}
}

func TestEmptyMessage(t *testing.T) {
	for msg, want := range map[string]bool{
		"":                        true,
		"\n\n# Please enter\n#\n": true,
		"fix it\n# comment\n":     false,
		"# only\n# ------------------------ >8 ------------------------\ndiff --git a b\n": true,
		"  \n  body\n": false,
	} {
		if got := emptyMessage(msg, ""); got != want {
			t.Errorf("emptyMessage(%q) = %v", msg, got)
		}
	}
	if emptyMessage("; a comment\n", ";") != true || emptyMessage("# not one\n", ";") != false {
		t.Error("core.commentChar not honoured")
	}
}

func TestParseDiffTree(t *testing.T) {
	c1, c2, c3 := strings.Repeat("1", 40), strings.Repeat("2", 40), strings.Repeat("3", 40)
	b1, b2 := strings.Repeat("b", 40), strings.Repeat("c", 40)
	z := strings.Repeat("0", 40)
	out := c1 + "\x00" +
		":000000 100644 " + z + " " + b1 + " A\x00tasks/t.yaml\x00" +
		":000000 100644 " + z + " " + b2 + " A\x00liza.yaml\x00" +
		c2 + "\x00" +
		c3 + "\x00" +
		":100644 100644 " + b1 + " " + b2 + " M\x00tasks/t.yaml\x00" +
		":100644 000000 " + b2 + " " + z + " D\x00liza.yaml\x00"
	got, err := parseDiffTree([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]fileChange{
		c1: {{"tasks/t.yaml", b1}, {"liza.yaml", b2}},
		c3: {{"tasks/t.yaml", b2}, {"liza.yaml", ""}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v", got)
	}
	if _, err := parseDiffTree([]byte("junk\x00")); err == nil {
		t.Error("junk accepted")
	}
}

// richState is a valid state with something in every part of the layout.
func richState() *contracts.State {
	task := func(id string, status contracts.Status) *contracts.Task {
		return &contracts.Task{
			ID: id, Description: "do " + id, Status: status, Priority: 2, Created: stamp,
			SpecRef: "specs/x.md", DoneWhen: "it works", Paths: contracts.StringList{"src/" + id},
			History: []*contracts.HistoryEvent{{Time: stamp, Event: "created"}},
		}
	}
	merged := task("task-0", contracts.Merged)
	merged.MergeCommit = "abc"
	notes := make([]*contracts.HumanNote, 11)
	for i := range notes {
		notes[i] = &contracts.HumanNote{Timestamp: stamp, Message: fmt.Sprintf("note %d", i+1)}
	}
	cfg := contracts.DefaultConfig()
	return &contracts.State{
		Version: 1,
		Goal: contracts.Goal{ID: "goal-1", Description: "build it", Status: "IN_PROGRESS", Created: stamp,
			AlignmentHistory: []*contracts.AlignmentEntry{{Time: stamp, Event: "added", Task: "task-1"}}},
		Config: cfg,
		Sprint: contracts.Sprint{ID: "sprint-1", GoalRef: "goal-1", Status: "IN_PROGRESS",
			Scope:    contracts.SprintScope{Planned: contracts.StringList{}, Stretch: contracts.StringList{}},
			Timeline: contracts.SprintTimeline{Started: stamp}},
		Agents:  map[string]*contracts.Agent{"coder-1": {Role: "coder", Status: "IDLE"}},
		Tasks:   []*contracts.Task{task("task-10", contracts.Unclaimed), task("task-2", contracts.Draft), task("task-1", contracts.Unclaimed)},
		Archive: []*contracts.Task{merged},
		Anomalies: []*contracts.Anomaly{{ID: "anomaly-1", Type: "spec_ambiguity", TaskID: "task-1", LoggedBy: "coder-1", Timestamp: stamp,
			Details: contracts.Extra{"ambiguity": "which retries", "interpretation_chosen": "all"}}},
		Discovered:  []*contracts.Discovery{{ID: "disc-1", By: "coder-1", Description: "slow", Severity: "low"}},
		Handoff:     map[string]*contracts.Handoff{"task-1": {Agent: "coder-1", Time: stamp, Summary: "half", NextAction: "finish"}},
		HumanNotes:  notes,
		SpecChanges: []*contracts.SpecChange{{Timestamp: stamp, Spec: "specs/x.md", Change: "more"}},
		Extra:       contracts.Extra{"custom_section": "kept"},
	}
}

// newStore is a repository with the rich state imported.
func newStore(t *testing.T) (string, *cas.Store) {
	t.Helper()
	dir := newRepo(t)
	repo, err := refstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	clock := func() time.Time { return time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC) }
	s := &cas.Store{Repo: repo, Clock: clock}
	_, err = s.Update(context.Background(), cas.Op{Name: contracts.OpImport, AllowMissing: true,
		Replace: func(*cas.Tx) (*contracts.State, error) { return richState(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	return dir, s
}

func TestLoaderMatchesSnapshotLoad(t *testing.T) {
	dir, s := newStore(t)
	tip, _, _ := s.Repo.ReadRef(stateRef)
	snap, err := cas.ReadSnapshot(s.Repo, tip)
	if err != nil {
		t.Fatal(err)
	}
	want, err := snap.Load()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	var ids []string
	for _, line := range strings.Split(git(t, dir, "ls-tree", "-r", "--full-tree", tip.String()), "\n") {
		meta, path, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		files[path] = f[2]
		ids = append(ids, f[2])
	}
	blobs, err := catFile(context.Background(), dir, ids)
	if err != nil {
		t.Fatal(err)
	}
	ld := &loader{blobs: blobs, cache: map[string]any{}}
	got, err := ld.load(files)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := contracts.MarshalState(got)
		w, _ := contracts.MarshalState(want)
		t.Fatalf("loader and cas differ.\nloader:\n%s\ncas:\n%s", g, w)
	}
	if len(want.HumanNotes) != 11 || want.Extra["custom_section"] != "kept" || len(want.Goal.AlignmentHistory) != 1 {
		t.Fatal("fixture lost parts of the state")
	}
	// A second load shares the decoded files and gives the same state.
	again, err := ld.load(files)
	if err != nil || !reflect.DeepEqual(again, want) {
		t.Fatalf("second load: %v", err)
	}
}

// receive runs the pre-receive handler on one update of refs/liza/state.
func receive(t *testing.T, dir, old, new string) (string, error) {
	t.Helper()
	var stderr bytes.Buffer
	h := &Handler{Dir: dir, Stdin: strings.NewReader(old + " " + new + " " + stateRef + "\n"), Stderr: &stderr, Getenv: env(nil)}
	err := h.Run(context.Background(), PreReceive, nil)
	return stderr.String(), err
}

func TestPreReceive(t *testing.T) {
	dir, s := newStore(t)
	ctx := context.Background()
	z := refstore.ZeroID.String()
	first, _, _ := s.Repo.ReadRef(stateRef)
	_, err := s.Update(ctx, cas.Op{Name: contracts.OpFinalize, Agent: "planner-1", Apply: func(tx *cas.Tx) (any, error) {
		tk, err := tx.MustTask("task-2")
		if err != nil {
			return nil, err
		}
		tk.Status = contracts.Unclaimed
		tx.PutTask(tk)
		tx.Describe("finalize task-2", "task-2")
		return nil, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	second, _, _ := s.Repo.ReadRef(stateRef)

	// Creation and a fast-forward pass; other refs are not looked at.
	for _, u := range [][2]string{{z, first.String()}, {first.String(), second.String()}, {z, second.String()}} {
		if out, err := receive(t, dir, u[0], u[1]); err != nil {
			t.Errorf("%s..%s refused: %v\n%s", u[0][:7], u[1][:7], err, out)
		}
	}
	h := &Handler{Dir: dir, Stdin: strings.NewReader(second.String() + " " + z + " refs/heads/x\n"), Stderr: &bytes.Buffer{}, Getenv: env(nil)}
	if err := h.Run(ctx, PreReceive, nil); err != nil {
		t.Errorf("other ref: %v", err)
	}

	// A rewind.
	out, err := receive(t, dir, second.String(), first.String())
	var ce *contracts.Error
	if !errors.As(err, &ce) || ce.Code != contracts.CodeInvalid || !strings.Contains(out, "is not a fast-forward of") {
		t.Errorf("rewind: %v\n%s", err, out)
	}

	// A merge of two lines of states.
	tree := git(t, dir, "rev-parse", second.String()+"^{tree}")
	side := git(t, dir, "commit-tree", "-p", first.String(), "-m", "side\n\nLiza-Op: note\nLiza-Agent: human", tree)
	merge := git(t, dir, "commit-tree", "-p", second.String(), "-p", side, "-m", "merge\n\nLiza-Op: note\nLiza-Agent: human", tree)
	out, err = receive(t, dir, second.String(), merge)
	if err == nil || !strings.Contains(out, "commit "+merge[:12]+": a merge; state commits have exactly one parent") {
		t.Errorf("merge: %v\n%s", err, out)
	}

	// Forged commits: no trailers, a role violation, both reported per commit.
	bare := git(t, dir, "commit-tree", "-p", second.String(), "-m", "by hand", tree)
	role := git(t, dir, "commit-tree", "-p", bare, "-m", "add\n\nLiza-Op: add\nLiza-Agent: coder-1", tree)
	out, err = receive(t, dir, second.String(), role)
	if err == nil || err.Error() != "refusing the push to refs/liza/state: 2 problem(s)" {
		t.Errorf("forged: %v", err)
	}
	want := "git-liza: commit " + bare[:12] + ": the commit lacks the Liza-Op and Liza-Agent trailers; state commits are made by git liza commands\n" +
		"git-liza: commit " + role[:12] + ": coder-1 (coder) may not add\n"
	if out != want {
		t.Errorf("forged: got\n%s\nwant\n%s", out, want)
	}

	// An import replaces the state and is exempt from transition checks,
	// not from validation.
	firstTree := git(t, dir, "rev-parse", first.String()+"^{tree}")
	back := git(t, dir, "commit-tree", "-p", second.String(), "-m", "import\n\nLiza-Op: import\nLiza-Agent: human", firstTree)
	if out, err := receive(t, dir, second.String(), back); err != nil {
		t.Errorf("import: %v\n%s", err, out)
	}
	undo := git(t, dir, "commit-tree", "-p", second.String(), "-m", "edit\n\nLiza-Op: edit\nLiza-Agent: human", firstTree)
	if out, err := receive(t, dir, second.String(), undo); err == nil || !strings.Contains(out, "illegal transition UNCLAIMED -> DRAFT") {
		t.Errorf("edit back to DRAFT: %v\n%s", err, out)
	}
	empty := git(t, dir, "mktree")
	broken := git(t, dir, "commit-tree", "-p", second.String(), "-m", "import\n\nLiza-Op: import\nLiza-Agent: human", empty)
	if out, err := receive(t, dir, second.String(), broken); err == nil || !strings.Contains(out, "no liza.yaml") {
		t.Errorf("import of an empty tree: %v\n%s", err, out)
	}

	// Deletion.
	if out, err := receive(t, dir, second.String(), z); err == nil || !strings.Contains(out, "may not be deleted") {
		t.Errorf("deletion: %v\n%s", err, out)
	}
}
