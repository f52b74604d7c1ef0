package cas

import (
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// FuzzHostileTree reads state trees with entries of any name, mode and
// place (the fuzz input lists them, one "path mode" per line, at any
// depth), as a commit pushed by hand or an import would bring them.
// Reading never panics, and a state that loads holds only entities whose
// ids are valid (an id becomes a branch name and a directory), each task
// once.
//
//	go test -run='^$' -fuzz=FuzzHostileTree ./cas
func FuzzHostileTree(f *testing.F) {
	for _, seed := range []string{
		"tasks/0/4/task-1.yaml 100644",
		"tasks/0/5/task-1.yaml 100644",
		"tasks/0/4/task-1.yaml 100644\narchive/0/4/task-1.yaml 100644",
		"tasks/0/4/index 100644",
		"tasks/a.yaml 100644",
		"tasks/0/4/..yaml 100644",
		"tasks/../x.yaml 100644",
		"tasks/0/4/a b.yaml 100644\nagents/coder-1.yaml 100644",
		"anomalies/000/00/000001.yaml 100644\nanomalies/000/01/000001.yaml 100644",
		"anomalies/000001.yaml 100644",
		"planned/000/00 100644\nplanned/000/02 100644",
		"requests/a/b/0123 100644",
		"requests/ab/0123456789012345678901234567890123456 100644",
		"tasks/sub 40000",
		"evil.sh 100755",
		"layout 100644",
		"tasks/0/4/A.yaml 100644",
		"handoff/x.yaml 120000",
		"claims/inflight 100644\nclaims/queued/0/8000000000000002.0.a+!a 100644",
		"claims/queued/0/sub/x 100644",
		"claims/queued/A/x 100644",
		"claims/queue/8000000000000002.0.a+!a 100644\nclaims/queued/8000000000000002.0.a+!a/x 100644",
	} {
		f.Add(seed)
	}
	s := initStore(f)
	base, err := ReadSnapshot(s.Repo, tip(f, s))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, list string) {
		root := &fuzzDir{sub: map[string]*fuzzDir{}}
		for _, line := range strings.Split(list, "\n") {
			path, mode, _ := strings.Cut(line, " ")
			if mode == "" {
				mode = refstore.ModeFile
			}
			parts := strings.Split(path, "/")
			if len(parts) > 6 || strings.ContainsRune(path+mode, 0) {
				continue
			}
			root.add(parts, mode)
		}
		tree, err := root.write(s.Repo, base)
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
		seen := map[string]bool{}
		for _, task := range append(st.Tasks, st.Archive...) {
			if contracts.ValidTaskID(task.ID) != nil {
				t.Fatalf("a state with task id %q loaded from %q", task.ID, list)
			}
		}
		for _, dir := range []string{TasksDir, ArchiveDir} {
			ids, _ := snap.IDs(dir)
			for _, id := range ids {
				if seen[dir+id] {
					t.Fatalf("task file %s twice in %s/ of a state loaded from %q", id, dir, list)
				}
				seen[dir+id] = true
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

// fuzzDir is a directory of a tree the fuzzer builds over the base state.
type fuzzDir struct {
	files map[string]string // name -> mode
	sub   map[string]*fuzzDir
}

func (d *fuzzDir) add(parts []string, mode string) {
	if parts[0] == "" {
		return
	}
	if len(parts) == 1 {
		if mode == refstore.ModeTree {
			if d.sub[parts[0]] == nil {
				d.sub[parts[0]] = &fuzzDir{sub: map[string]*fuzzDir{}}
			}
			return
		}
		if d.files == nil {
			d.files = map[string]string{}
		}
		d.files[parts[0]] = mode
		return
	}
	if d.sub[parts[0]] == nil {
		d.sub[parts[0]] = &fuzzDir{sub: map[string]*fuzzDir{}}
	}
	d.sub[parts[0]].add(parts[1:], mode)
}

// write writes the directory over the base state's root (the root only:
// its subdirectories replace the base's).
func (d *fuzzDir) write(repo *refstore.Repo, base *Snapshot) (refstore.Hash, error) {
	blob, err := repo.WriteBlob([]byte("id: x\ndescription: d\nstatus: UNCLAIMED\npriority: 3\n"))
	if err != nil {
		return refstore.Hash{}, err
	}
	var rec func(d *fuzzDir) ([]refstore.TreeEntry, error)
	rec = func(d *fuzzDir) ([]refstore.TreeEntry, error) {
		var out []refstore.TreeEntry
		for name, mode := range d.files {
			out = append(out, refstore.TreeEntry{Mode: mode, Name: name, ID: blob})
		}
		for name, sub := range d.sub {
			list, err := rec(sub)
			if err != nil {
				return nil, err
			}
			id, err := repo.WriteTree(dedupe(list))
			if err != nil {
				return nil, err
			}
			out = append(out, refstore.TreeEntry{Mode: refstore.ModeTree, Name: name, ID: id})
		}
		return out, nil
	}
	top, err := rec(d)
	if err != nil {
		return refstore.Hash{}, err
	}
	root, err := base.Entries("")
	if err != nil {
		return refstore.Hash{}, err
	}
	return repo.WriteTree(refstore.EditTree(append([]refstore.TreeEntry{}, root...), dedupe(top)))
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
