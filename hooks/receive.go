package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// preReceive guards refs/liza/state on a shared bare repository: a push
// must fast-forward it along a linear history of commits that each carry
// the Liza-Op and Liza-Agent trailers, name an agent allowed to perform
// that operation, hold a valid state, and move from their parent's state
// by allowed transitions (an import replaces the whole state and is only
// validated). Every problem is printed, one line each; then the push is
// refused. Other refs pass.
//
// The pushed objects are not in the repository yet: git keeps them in a
// quarantine directory that it names to its hooks in GIT_OBJECT_DIRECTORY
// and GIT_ALTERNATE_OBJECT_DIRECTORIES. A push may carry many states, most
// sharing most of their files, so this handler asks git for what changed
// rather than loading each state whole: rev-list for the commits, one
// ls-tree for the state before the push, one diff-tree --stdin for what
// each commit changed, and one cat-file --batch for the commit objects and
// the files. That is at most five processes however long the push; the
// states are rebuilt from those answers, each file decoded once.
func (h *Handler) preReceive(ctx context.Context) error {
	updates, err := readUpdates(h.Stdin)
	if err != nil {
		return err
	}
	var problems []string
	for _, u := range updates {
		if u.ref != stateRef {
			continue
		}
		ps, err := h.checkPush(ctx, u)
		if err != nil {
			return err
		}
		problems = append(problems, ps...)
	}
	if len(problems) == 0 {
		return nil
	}
	for _, p := range problems {
		fmt.Fprintf(h.Stderr, "git-liza: %s\n", p)
	}
	return contracts.Invalidf("refusing the push to %s: %d problem(s)", stateRef, len(problems))
}

// checkPush lists what is wrong with one update of refs/liza/state.
func (h *Handler) checkPush(ctx context.Context, u update) ([]string, error) {
	if u.new == zeroID {
		return []string{fmt.Sprintf("%s may not be deleted", stateRef)}, nil
	}
	git := func(stdin []byte, args ...string) ([]byte, error) {
		return refstore.Run(ctx, h.Dir, stdin, args...)
	}
	creating := u.old == zeroID
	if !creating {
		_, err := git(nil, "merge-base", "--is-ancestor", u.old, u.new)
		var ge *refstore.GitError
		if errors.As(err, &ge) && ge.ExitCode == 1 {
			return []string{fmt.Sprintf("%s: %s is not a fast-forward of %s (the state's history is never rewritten)", stateRef, short(u.new), short(u.old))}, nil
		} else if err != nil {
			return nil, err
		}
	}

	// The new commits, oldest first, with their parents.
	args := []string{"rev-list", "--reverse", "--parents", u.new}
	if !creating {
		args = append(args, "^"+u.old)
	}
	out, err := git(nil, args...)
	if err != nil {
		return nil, err
	}
	var chain []string
	var problems []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch {
		case len(f) > 2:
			problems = append(problems, fmt.Sprintf("commit %s: a merge; state commits have exactly one parent", short(f[0])))
		case len(f) == 1 && !(creating && len(chain) == 0):
			problems = append(problems, fmt.Sprintf("commit %s: a second root commit; state commits have exactly one parent", short(f[0])))
		}
		chain = append(chain, f[0])
	}
	if len(problems) > 0 || len(chain) == 0 {
		// A history that is not one line has no sequence of states to check.
		return problems, nil
	}

	// The files of the state before the push, then each commit's changes.
	files := map[string]string{} // path -> blob id
	if !creating {
		out, err := git(nil, "ls-tree", "-r", "-z", "--full-tree", u.old)
		if err != nil {
			return nil, err
		}
		for _, rec := range strings.Split(string(out), "\x00") {
			meta, path, ok := strings.Cut(rec, "\t")
			if f := strings.Fields(meta); ok && len(f) == 3 && f[1] == "blob" {
				files[path] = f[2]
			}
		}
	}
	out, err = git([]byte(strings.Join(chain, "\n")+"\n"), "diff-tree", "--stdin", "-r", "-z", "--root", "--always", "--no-renames", "--no-abbrev")
	if err != nil {
		return nil, err
	}
	changes, err := parseDiffTree(out)
	if err != nil {
		return nil, err
	}

	// Every object needed, in one cat-file --batch.
	want := slices.Clone(chain)
	for _, id := range files {
		want = append(want, id)
	}
	for _, c := range chain {
		for _, ch := range changes[c] {
			if ch.blob != "" {
				want = append(want, ch.blob)
			}
		}
	}
	objects, err := catFile(ctx, h.Dir, want)
	if err != nil {
		return nil, err
	}

	ld := &loader{blobs: objects, cache: map[string]any{}}
	var prev *contracts.State
	if !creating {
		prev, _ = ld.load(files)
	}
	for _, c := range chain {
		for _, ch := range changes[c] {
			if ch.blob == "" {
				delete(files, ch.path)
			} else {
				files[ch.path] = ch.blob
			}
		}
		say := func(msg string) { problems = append(problems, "commit "+short(c)+": "+msg) }
		_, msg, _ := bytes.Cut(objects[c], []byte("\n\n"))
		tr := cas.Trailers(string(msg))
		op, agent := tr["Liza-Op"], tr["Liza-Agent"]
		if op == "" || agent == "" {
			say("the commit lacks the Liza-Op and Liza-Agent trailers; state commits are made by git liza commands")
		} else if p := checkRole(agent, contracts.Op(op)); p != "" {
			say(p)
		}
		st, err := ld.load(files)
		if err != nil {
			say(err.Error())
			prev = nil
			continue
		}
		for _, p := range contracts.Validate(st) {
			say(p.String())
		}
		if prev != nil && op != string(contracts.OpImport) {
			for _, p := range contracts.CheckStateTransition(prev, st) {
				say(p.String())
			}
		}
		prev = st
	}
	return problems, nil
}

// checkRole says what is wrong with agent performing op, or "".
func checkRole(agent string, op contracts.Op) string {
	id := agent
	if agent == "human" {
		id = ""
	}
	role, err := contracts.ParseAgentID(id)
	if err != nil {
		return fmt.Sprintf("Liza-Agent: %v", err)
	}
	if !slices.Contains(contracts.Ops(), op) {
		return fmt.Sprintf("Liza-Op: unknown operation %q", op)
	}
	if !contracts.Allowed(role, op) {
		return fmt.Sprintf("%s (%s) may not %s", agent, role, op)
	}
	return ""
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// fileChange is one file a commit adds, changes (blob set) or deletes
// (blob empty).
type fileChange struct{ path, blob string }

// parseDiffTree reads `git diff-tree --stdin -r -z --always` output: each
// commit id, then records ":<modes> <old> <new> <status>" each followed by
// a path.
func parseDiffTree(out []byte) (map[string][]fileChange, error) {
	changes := map[string][]fileChange{}
	toks := strings.Split(string(out), "\x00")
	var commit string
	for i := 0; i < len(toks); i++ {
		t := strings.TrimPrefix(toks[i], "\n")
		switch {
		case t == "":
		case strings.HasPrefix(t, ":"):
			f := strings.Fields(t[1:])
			if len(f) != 5 || i+1 >= len(toks) || commit == "" {
				return nil, fmt.Errorf("diff-tree: unexpected record %q", t)
			}
			i++
			path := toks[i]
			if f[1] == "160000" || f[4] == "D" {
				changes[commit] = append(changes[commit], fileChange{path: path})
			} else {
				changes[commit] = append(changes[commit], fileChange{path: path, blob: f[3]})
			}
		case plumbingHash(t):
			commit = t
		default:
			return nil, fmt.Errorf("diff-tree: unexpected output %q", t)
		}
	}
	return changes, nil
}

func plumbingHash(s string) bool {
	_, ok := refstore.ParseHash(s)
	return ok
}

// catFile reads objects with one `git cat-file --batch`, which sees the
// quarantined objects of a push. Missing objects are left out.
func catFile(ctx context.Context, dir string, ids []string) (map[string][]byte, error) {
	seen := map[string]bool{}
	var in strings.Builder
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			in.WriteString(id)
			in.WriteByte('\n')
		}
	}
	out, err := refstore.Run(ctx, dir, []byte(in.String()), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	objects := make(map[string][]byte, len(seen))
	for len(out) > 0 {
		nl := bytes.IndexByte(out, '\n')
		if nl < 0 {
			return nil, fmt.Errorf("cat-file: truncated output")
		}
		f := strings.Fields(string(out[:nl]))
		out = out[nl+1:]
		if len(f) != 3 {
			continue // "<id> missing"
		}
		size, err := strconv.Atoi(f[2])
		if err != nil || size+1 > len(out) {
			return nil, fmt.Errorf("cat-file: bad header %q", strings.Join(f, " "))
		}
		objects[f[0]] = out[:size]
		out = out[size+1:]
	}
	return objects, nil
}

// loader rebuilds a state from its files the way cas.Snapshot.Load reads a
// tree (see cas/layout.go for the layout), from the objects a push
// brought. Decoded files are shared between the states of one push by blob
// id: Validate and CheckStateTransition only read them.
type loader struct {
	blobs map[string][]byte
	cache map[string]any // kind + blob id -> decoded value
}

func decodeAs[T any](ld *loader, files map[string]string, path string) (*T, bool, error) {
	id, ok := files[path]
	if !ok {
		return nil, false, nil
	}
	key := fmt.Sprintf("%T %s", (*T)(nil), id)
	if v, ok := ld.cache[key]; ok {
		return v.(*T), true, nil
	}
	data, ok := ld.blobs[id]
	if !ok {
		return nil, true, contracts.Errorf(contracts.CodeInconsistent, "state is inconsistent: %s: object %s is missing", path, short(id))
	}
	v := new(T)
	if err := contracts.DecodeYAML(data, v); err != nil {
		return nil, true, contracts.Errorf(contracts.CodeInconsistent, "state is inconsistent: %s: %v", path, err)
	}
	ld.cache[key] = v
	return v, true, nil
}

// idsIn lists the entity ids of the files directly in dir.
func idsIn(files map[string]string, dir string) []string {
	var ids []string
	for p := range files {
		rest, ok := strings.CutPrefix(p, dir+"/")
		if !ok || strings.Contains(rest, "/") {
			continue
		}
		if id, ok := strings.CutSuffix(rest, ".yaml"); ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

func (ld *loader) load(files map[string]string) (*contracts.State, error) {
	meta, ok, err := decodeAs[cas.Meta](ld, files, cas.MetaFile)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, contracts.Errorf(contracts.CodeInconsistent, "state is inconsistent: no %s", cas.MetaFile)
	}
	st := &contracts.State{
		Version: meta.Version, Goal: meta.Goal, Config: meta.Config, Sprint: meta.Sprint,
		Control: meta.Control, CircuitBreaker: meta.CircuitBreaker, Extra: meta.Extra,
		Agents: map[string]*contracts.Agent{}, Tasks: []*contracts.Task{},
	}
	// The cached meta is shared: append to a copy.
	st.Goal.AlignmentHistory = slices.Clone(meta.Goal.AlignmentHistory)
	tasks := func(dir string) ([]*contracts.Task, error) {
		out := []*contracts.Task{}
		for _, id := range idsIn(files, dir) {
			t, _, err := decodeAs[contracts.Task](ld, files, dir+"/"+id+".yaml")
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		cas.SortTasks(out)
		return out, nil
	}
	if st.Tasks, err = tasks(cas.TasksDir); err != nil {
		return nil, err
	}
	if st.Archive, err = tasks(cas.ArchiveDir); err != nil {
		return nil, err
	}
	for _, id := range idsIn(files, cas.AgentsDir) {
		a, _, err := decodeAs[contracts.Agent](ld, files, cas.AgentsDir+"/"+id+".yaml")
		if err != nil {
			return nil, err
		}
		st.Agents[id] = a
	}
	for _, id := range idsIn(files, cas.HandoffDir) {
		hd, _, err := decodeAs[contracts.Handoff](ld, files, cas.HandoffDir+"/"+id+".yaml")
		if err != nil {
			return nil, err
		}
		if st.Handoff == nil {
			st.Handoff = map[string]*contracts.Handoff{}
		}
		st.Handoff[id] = hd
	}
	if err := loadList(ld, files, cas.ListAlignment, &st.Goal.AlignmentHistory); err != nil {
		return nil, err
	}
	if err := loadList(ld, files, cas.ListAnomalies, &st.Anomalies); err != nil {
		return nil, err
	}
	if err := loadList(ld, files, cas.ListDiscovered, &st.Discovered); err != nil {
		return nil, err
	}
	if err := loadList(ld, files, cas.ListHumanNotes, &st.HumanNotes); err != nil {
		return nil, err
	}
	if err := loadList(ld, files, cas.ListSpecChanges, &st.SpecChanges); err != nil {
		return nil, err
	}
	return st, nil
}

func loadList[T any](ld *loader, files map[string]string, list string, out *[]*T) error {
	for _, id := range idsIn(files, list) {
		v, _, err := decodeAs[T](ld, files, list+"/"+id+".yaml")
		if err != nil {
			return err
		}
		*out = append(*out, v)
	}
	return nil
}
