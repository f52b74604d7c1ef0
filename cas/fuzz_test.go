package cas

import (
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// FuzzHostileTree reads state trees with entries of any name, mode and
// place (the fuzz input lists them, one "dir/name mode" per line), as a
// commit pushed by hand or an import would bring them. Reading never
// panics, and a state that loads holds only entities whose ids are valid:
// an id becomes a branch name and a directory.
//
//	go test -run='^$' -fuzz=FuzzHostileTree ./cas
func FuzzHostileTree(f *testing.F) {
	for _, seed := range []string{
		"tasks/a.yaml 100644",
		"tasks/..yaml 100644",
		"tasks/../x.yaml 100644",
		"tasks/a b.yaml 100644\nagents/coder-1.yaml 100644",
		"anomalies/000001.yaml 100644\nanomalies/1.yaml 100644",
		"requests/ab/0123 100644",
		"tasks/sub 40000",
		"evil.sh 100755",
		"tasks/A.yaml 100644",
		"handoff/x.yaml 120000",
	} {
		f.Add(seed)
	}
	s := initStore(f)
	base, err := ReadSnapshot(s.Repo, tip(f, s))
	if err != nil {
		f.Fatal(err)
	}
	root, err := base.Entries("")
	if err != nil {
		f.Fatal(err)
	}
	blob, err := s.Repo.WriteBlob([]byte("id: x\ndescription: d\nstatus: UNCLAIMED\npriority: 3\n"))
	if err != nil {
		f.Fatal(err)
	}
	empty, err := s.Repo.WriteTree(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, list string) {
		dirs := map[string][]refstore.TreeEntry{}
		var top []refstore.TreeEntry
		for _, line := range strings.Split(list, "\n") {
			path, mode, _ := strings.Cut(line, " ")
			if mode == "" {
				mode = refstore.ModeFile
			}
			id := blob
			if mode == refstore.ModeTree {
				id = empty
			}
			dir, name, nested := strings.Cut(path, "/")
			if !nested {
				dir, name = "", path
			}
			if name == "" || strings.ContainsAny(name, "\x00/") || strings.ContainsRune(mode, 0) {
				continue
			}
			e := refstore.TreeEntry{Mode: mode, Name: name, ID: id}
			if dir == "" {
				top = append(top, e)
			} else {
				dirs[dir] = append(dirs[dir], e)
			}
		}
		entries := append([]refstore.TreeEntry{}, root...)
		for dir, list := range dirs {
			if dir == "" || strings.ContainsRune(dir, 0) {
				continue
			}
			sub, err := s.Repo.WriteTree(dedupe(list))
			if err != nil {
				return
			}
			entries = refstore.EditTree(entries, []refstore.TreeEntry{{Mode: refstore.ModeTree, Name: dir, ID: sub}})
		}
		entries = refstore.EditTree(entries, dedupe(top))
		tree, err := s.Repo.WriteTree(entries)
		if err != nil {
			return
		}
		commit, err := s.Repo.WriteCommit(tree, nil, refstore.Signature{Name: "x", Email: "x", When: now}, "fuzz\n")
		if err != nil {
			t.Fatal(err)
		}
		snap, err := ReadSnapshot(s.Repo, commit)
		if err != nil {
			return
		}
		st, err := snap.Load()
		if err != nil {
			return
		}
		for _, task := range append(st.Tasks, st.Archive...) {
			if contracts.ValidTaskID(task.ID) != nil {
				t.Fatalf("a state with task id %q loaded from %q", task.ID, list)
			}
		}
		for id := range st.Agents {
			if contracts.ValidID(id) != nil {
				t.Fatalf("a state with agent entry %q loaded from %q", id, list)
			}
		}
		_ = contracts.Validate(st)
	})
}

// dedupe keeps the last entry of each name: a tree has one.
func dedupe(list []refstore.TreeEntry) []refstore.TreeEntry {
	seen := map[string]int{}
	var out []refstore.TreeEntry
	for _, e := range list {
		if i, ok := seen[e.Name]; ok {
			out[i] = e
			continue
		}
		seen[e.Name] = len(out)
		out = append(out, e)
	}
	return out
}
