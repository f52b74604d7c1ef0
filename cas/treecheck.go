package cas

import (
	"slices"
	"strconv"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// checkTree refuses a state tree with entries its layout does not have: an
// unknown file or directory, a file in an entity directory whose name is
// not a valid id (an id becomes a branch name and a directory, so "..",
// "x/y" or a name with a newline would be dangerous there) or that sits in
// another id's directory (it would hide from lookups, and a second task of
// the same id could be added), a list entry out of its place, or a
// directory where a file belongs. Such a tree is not one git-liza wrote,
// and would be carried on by every later commit.
func checkTree(s *Snapshot) error {
	root, err := s.Entries("")
	if err != nil {
		return err
	}
	c := treeChecker{s: s}
	for _, e := range root {
		switch {
		case e.Name == MetaFile || e.Name == LayoutFile && !s.v1 || e.Name == IndexFile && s.v1:
			if err := c.file(e, e.Name); err != nil {
				return err
			}
			if e.Name == LayoutFile {
				if b, err := s.readFile(e.Name, e.ID); err != nil {
					return err
				} else if string(b) != layoutV2 {
					return inconsistent("state at %s: its layout is %q, which this git-liza does not know (a newer one wrote it?)", short(s.Commit), strings.TrimSpace(string(b)))
				}
			}
		case e.Name == RequestDir:
			err = c.requests(e)
		case e.Name == TasksDir || e.Name == ArchiveDir:
			err = c.tasks(e)
		case e.Name == AgentsDir || e.Name == HandoffDir:
			err = c.entityDir(e.Name, func(id string) bool { return contracts.ValidID(id) == nil })
		case slices.Contains(lists, e.Name):
			err = c.list(e)
		case e.Name == PlannedDir && !s.v1:
			err = c.planned(e)
		case e.Name == ClaimsDir && !s.v1:
			err = c.claims(e)
		default:
			return inconsistent("state at %s: unknown entry %q in the state tree", short(s.Commit), e.Name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

type treeChecker struct{ s *Snapshot }

func (c treeChecker) file(e refstore.TreeEntry, path string) error {
	if e.IsTree() || e.Mode != refstore.ModeFile {
		return inconsistent("state at %s: %s is not a file", short(c.s.Commit), path)
	}
	return nil
}

func (c treeChecker) dir(e refstore.TreeEntry, path string) error {
	if !e.IsTree() {
		return inconsistent("state at %s: %s is not a directory", short(c.s.Commit), path)
	}
	return nil
}

func (c treeChecker) stray(name, dir string) error {
	return inconsistent("state at %s: %q in %s/ is not an entity file", short(c.s.Commit), name, dir)
}

// subdirs checks that dir holds only directories whose names pass ok, and
// lists them.
func (c treeChecker) subdirs(dir string, ok func(name string) bool) ([]string, error) {
	list, err := c.s.Entries(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range list {
		if !e.IsTree() || !ok(e.Name) {
			return nil, c.stray(e.Name, dir)
		}
		out = append(out, dir+"/"+e.Name)
	}
	return out, nil
}

// entityDir checks that dir holds only <id>.yaml files whose ids pass ok
// (and, with index, an index file).
func (c treeChecker) entityDir(dir string, ok func(id string) bool, index ...bool) error {
	list, err := c.s.Entries(dir)
	if err != nil {
		return err
	}
	for _, f := range list {
		if len(index) > 0 && f.Name == IndexFile {
			if err := c.file(f, dir+"/"+f.Name); err != nil {
				return err
			}
			continue
		}
		id, isYAML := idOf(f.Name)
		if !isYAML || f.Mode != refstore.ModeFile || !ok(id) {
			return c.stray(f.Name, dir)
		}
	}
	return nil
}

func (c treeChecker) tasks(e refstore.TreeEntry) error {
	if err := c.dir(e, e.Name); err != nil {
		return err
	}
	if c.s.v1 {
		return c.entityDir(e.Name, func(id string) bool { return contracts.ValidID(id) == nil })
	}
	hexDigit := func(n string) bool { return len(n) == 1 && strings.Contains("0123456789abcdef", n) }
	xs, err := c.subdirs(e.Name, hexDigit)
	if err != nil {
		return err
	}
	for _, x := range xs {
		ys, err := c.subdirs(x, hexDigit)
		if err != nil {
			return err
		}
		for _, y := range ys {
			b := strings.TrimPrefix(y, e.Name+"/")
			if err := c.entityDir(y, func(id string) bool { return contracts.ValidID(id) == nil && bucket(id) == b }, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// claims checks the claim index: claims/inflight, and claims/queue
// holding files named by claim keys or claims/queued holding directories
// of them, each named by a claim key or "0".
func (c treeChecker) claims(e refstore.TreeEntry) error {
	if err := c.dir(e, e.Name); err != nil {
		return err
	}
	list, err := c.s.Entries(e.Name)
	if err != nil {
		return err
	}
	for _, f := range list {
		switch f.Name {
		case "inflight":
			err = c.file(f, inflightFile)
		case "queue":
			if err = c.dir(f, queueDir); err == nil {
				err = c.keyFiles(queueDir)
			}
		case "queued":
			err = c.queueGroups(f)
		default:
			return c.stray(f.Name, e.Name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// queueGroups checks claims/queued: directories named by claim keys (or
// "0", which validKey takes too) holding files named by claim keys.
func (c treeChecker) queueGroups(e refstore.TreeEntry) error {
	if err := c.dir(e, groupsDir); err != nil {
		return err
	}
	groups, err := c.s.Entries(groupsDir)
	if err != nil {
		return err
	}
	for _, g := range groups {
		if !validKey(g.Name) {
			return c.stray(g.Name, groupsDir)
		}
		dir := groupsDir + "/" + g.Name
		if err := c.dir(g, dir); err != nil {
			return err
		}
		if err := c.keyFiles(dir); err != nil {
			return err
		}
	}
	return nil
}

// keyFiles checks that dir (a flat claim queue, or one of its groups)
// holds only files named by claim keys.
func (c treeChecker) keyFiles(dir string) error {
	chunks, err := c.s.Entries(dir)
	if err != nil {
		return err
	}
	for _, q := range chunks {
		if q.IsTree() || q.Mode != refstore.ModeFile || !validKey(q.Name) {
			return c.stray(q.Name, dir)
		}
	}
	return nil
}

// list checks an append-only list: layout 1 <n>.yaml, layout 2
// <c>/<cc>/<n>.yaml with each entry in its place.
func (c treeChecker) list(e refstore.TreeEntry) error {
	if err := c.dir(e, e.Name); err != nil {
		return err
	}
	if c.s.v1 {
		return c.entityDir(e.Name, func(id string) bool {
			_, err := strconv.Atoi(id)
			return err == nil && len(id) == 6
		})
	}
	leaves, err := c.s.numberedDirs(e.Name, 2)
	if err != nil {
		return err
	}
	if _, err := c.subdirs(e.Name, isNumber(3)); err != nil {
		return err
	}
	for _, leaf := range leaves {
		parent, _ := splitPath(leaf)
		if _, err := c.subdirs(parent, isNumber(2)); err != nil {
			return err
		}
		list, err := c.s.Entries(leaf)
		if err != nil {
			return err
		}
		for _, f := range list {
			n, ok := seqOf(f.Name)
			if !ok || f.Mode != refstore.ModeFile || listFile(e.Name, n) != leaf+"/"+f.Name {
				return c.stray(f.Name, leaf)
			}
		}
	}
	return nil
}

// planned checks planned/<c>/<cc>: files of task ids, every one but the
// last holding 64.
func (c treeChecker) planned(e refstore.TreeEntry) error {
	if err := c.dir(e, e.Name); err != nil {
		return err
	}
	tops, err := c.subdirs(e.Name, isNumber(3))
	if err != nil {
		return err
	}
	files, err := c.s.numberedDirs(PlannedDir, 1)
	if err != nil || len(tops) == 0 {
		return err
	}
	var all []string
	for _, d := range files {
		list, err := c.s.Entries(d)
		if err != nil {
			return err
		}
		for _, f := range list {
			if f.IsTree() || f.Mode != refstore.ModeFile || !isNumber(2)(f.Name) {
				return c.stray(f.Name, d)
			}
			all = append(all, d+"/"+f.Name)
		}
	}
	numberedPaths(all)
	for i, p := range all {
		b, ok, err := c.s.ReadFile(p)
		if err != nil || !ok {
			return err
		}
		ids := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		last := i == len(all)-1
		if !strings.HasSuffix(string(b), "\n") || len(ids) > 64 || !last && len(ids) != 64 || plannedFile(i*64+1) != p {
			return inconsistent("state at %s: %s is not a file of planned task ids", short(c.s.Commit), p)
		}
		for _, id := range ids {
			if contracts.ValidTaskID(id) != nil {
				return inconsistent("state at %s: %s: %q is not a task id", short(c.s.Commit), p, id)
			}
		}
	}
	return nil
}

// numberedPaths sorts paths of zero-padded numbers by their values.
func numberedPaths(paths []string) {
	slices.SortFunc(paths, func(a, b string) int {
		pa, pb := strings.Split(a, "/"), strings.Split(b, "/")
		for i := range min(len(pa), len(pb)) {
			if pa[i] == pb[i] {
				continue
			}
			if len(pa[i]) != len(pb[i]) {
				return len(pa[i]) - len(pb[i])
			}
			return strings.Compare(pa[i], pb[i])
		}
		return len(pa) - len(pb)
	})
}

// isNumber accepts names of at least width decimal digits.
func isNumber(width int) func(string) bool {
	return func(n string) bool {
		return len(n) >= width && strings.Trim(n, "0123456789") == ""
	}
}

// requests checks requests/<xx>/<hash> (layout 1) or requests/<x>/<y>/<hash>.
func (c treeChecker) requests(e refstore.TreeEntry) error {
	if err := c.dir(e, e.Name); err != nil {
		return err
	}
	hexName := func(n string, size int) bool {
		return len(n) == size && strings.Trim(n, "0123456789abcdef") == ""
	}
	levels, width := 1, 2
	if !c.s.v1 {
		levels, width = 2, 1
	}
	dirs := []string{RequestDir}
	for ; levels > 0; levels-- {
		var next []string
		for _, d := range dirs {
			list, err := c.s.Entries(d)
			if err != nil {
				return err
			}
			for _, x := range list {
				if !x.IsTree() || !hexName(x.Name, width) {
					return inconsistent("state at %s: %q in %s/ is not a request directory", short(c.s.Commit), x.Name, d)
				}
				next = append(next, d+"/"+x.Name)
			}
		}
		dirs = next
	}
	for _, d := range dirs {
		files, err := c.s.Entries(d)
		if err != nil {
			return err
		}
		for _, f := range files {
			if f.Mode != refstore.ModeFile || !hexName(f.Name, 38) {
				return inconsistent("state at %s: %q in %s/ is not a request record", short(c.s.Commit), f.Name, d)
			}
		}
	}
	return nil
}
