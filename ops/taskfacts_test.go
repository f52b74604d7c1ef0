package ops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// What a clone verifying a claim or a submission without its commits took
// on trust is checked where they are here: a task whose base is not on the
// integration branch, whose commit under review does not descend from its
// base, or whose change leaves its paths or its scope limit, is refused
// (exit 4); an honest one passes.
func TestCheckTaskFacts(t *testing.T) {
	svc, root := newRepo(t)
	ctx := context.Background()
	hash := func(rev string) refstore.Hash {
		h, ok := refstore.ParseHash(git(t, root, "rev-parse", rev))
		if !ok {
			t.Fatalf("rev-parse %s", rev)
		}
		return h
	}
	integ := hash("HEAD")
	git(t, root, "checkout", "-q", "-b", "task/a")
	write(t, root+"/a.txt", "a\n")
	git(t, root, "add", "a.txt")
	git(t, root, "commit", "-q", "-m", "a")
	review := hash("HEAD")
	write(t, root+"/b.txt", strings.Repeat("b\n", 200))
	write(t, root+"/c.txt", "c\n")
	write(t, root+"/d.txt", "d\n")
	git(t, root, "add", "b.txt", "c.txt", "d.txt")
	git(t, root, "commit", "-q", "-m", "three files, 200 lines")
	big := hash("HEAD")
	git(t, root, "checkout", "-q", "--orphan", "elsewhere")
	write(t, root+"/x.txt", "x\n")
	git(t, root, "add", "x.txt")
	git(t, root, "commit", "-q", "-m", "a base of the coder's own")
	forged := hash("HEAD")

	honest := &contracts.Task{ID: "a", BaseCommit: integ.String(), Paths: contracts.StringList{"a.txt"}}
	if err := svc.CheckTaskFacts(ctx, honest, integ, review); err != nil {
		t.Errorf("an honest task refused: %v", err)
	}
	for _, c := range []struct {
		name   string
		base   refstore.Hash
		review refstore.Hash
		paths  []string
		want   string
	}{
		{"a base off the integration branch", forged, review, nil, "is not on the integration branch"},
		{"a commit under review off its base", integ, forged, nil, "does not descend from its base"},
		{"a change outside the task's paths", integ, review, []string{"b.txt"}, "is out of its scope: the change touches a.txt, outside task a's paths (b.txt)"},
		{"a change over seed 002's scope limit", integ, big, nil, "is out of its scope: the change touches 4 files and adds and removes 203 lines; task a allows at most 2 files or at most 150 lines"},
	} {
		task := &contracts.Task{ID: "a", BaseCommit: c.base.String(), Paths: c.paths}
		err := svc.CheckTaskFacts(ctx, task, integ, c.review)
		if err == nil || !strings.Contains(err.Error(), c.want) || ops.Class(err) != contracts.CodeInconsistent {
			t.Errorf("%s: %v (code %d), want %q, exit 4", c.name, err, ops.Class(err), c.want)
		}
	}
}
