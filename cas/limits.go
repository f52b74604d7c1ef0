package cas

import (
	"errors"
	"path"
	"strings"

	"github.com/liza-dev/git-liza/refstore"
)

// Caps on the objects of a state commit. Whoever reads a state commit
// (a server's pre-receive hook checking a push, a clone verifying what
// it fetched, any command) reads it within these: an object over its cap
// is refused on the size its header states, before it is inflated, so a
// commit whose liza.yaml is a 300 MB blob (a few hundred KB on the wire
// when it is one line repeated) costs the reader nothing near 300 MB.
//
// They are far above what a board needs. On a board of 10,000 tasks a
// task file is a few KB (its history grows by a few hundred bytes an
// operation), liza.yaml a few KB (layout 2 keeps the planned ids in
// planned/; layout 1 kept them in liza.yaml, some 20 bytes an id), a
// layout 2 index shard a few KB (a summary is about 150 bytes and a shard
// holds the tasks of one of 256 buckets), and all the trees together
// about a MB. The writers hold to the same caps (applyFiles), so no
// operation makes a state that its readers refuse.
const (
	// MaxFile bounds liza.yaml, the layout file, each task, agent, handoff
	// and list entry file, a request record and a file of planned ids:
	// 1 MiB, a hundred times the largest task file a board in use holds.
	MaxFile = 1 << 20
	// MaxIndex bounds an index file: a layout 1 index holds the summary
	// of every task of its directory; 64 MiB, as git liza import reads at
	// most (commands.MaxInput).
	MaxIndex = 64 << 20
	// MaxTrees bounds the tree objects of one state together (and so each
	// one): 32 MiB is about a million entries, a hundred times what the
	// trees of a 10,000-task board hold. Each entry read costs some 80
	// bytes of memory, so the trees of a state cost at most about 100 MB.
	MaxTrees = 32 << 20
	// MaxLoad bounds the files one whole read of a state (Load, which
	// holds them all decoded at once) takes together: four times what
	// git liza import reads, where a state of 100,000 tasks takes a few
	// tens of MB. Without it, a tree of a million entries naming one
	// small task file would be a million tasks in memory.
	MaxLoad = 256 << 20
	// MaxImport bounds the files of a state an import commit makes, which
	// come from one file of at most as many bytes (commands.MaxInput); its
	// split files are no larger. The guard reads a pushed import within
	// it (Snapshot.LoadWithin): the worst push within the caps costs what
	// decoding 64 MiB of YAML does.
	MaxImport = 64 << 20
	// MaxCommit bounds a state commit object. Its message records the
	// operation's input (Liza-Input), which holds at most a task's text:
	// 8 MiB leaves room for a MaxFile of text escaped as JSON.
	MaxCommit = 8 << 20
)

// The budgets a Snapshot starts with: MaxTrees and MaxLoad, lowered by
// tests.
var (
	treeBudget int64 = MaxTrees
	loadBudget int64 = MaxLoad
)

// fileCap is the cap of the state file at path (as stored).
func fileCap(p string) int64 {
	if path.Base(p) == IndexFile || strings.HasPrefix(p, ClaimsDir+"/") {
		return MaxIndex
	}
	return MaxFile
}

// ReadStateCommit reads a state commit within MaxCommit.
func ReadStateCommit(repo *refstore.Repo, id refstore.Hash) (*refstore.Commit, error) {
	c, err := repo.ReadCommitMax(id, MaxCommit)
	if big := tooLarge(err); big != nil {
		return nil, inconsistent("state commit %s is %d bytes, over the %s cap of a state commit", short(id), big.Size, refstore.ByteSize(big.Max))
	}
	return c, err
}

// readFile reads the blob of the state file at p (the path where the
// tree keeps it) within its cap, and within what is left of MaxLoad
// during a Load. Any error is a state inconsistency naming the file.
func (s *Snapshot) readFile(p string, id refstore.Hash) ([]byte, error) {
	max := fileCap(p)
	loading := s.loading
	if loading && s.loadLeft < max {
		max = s.loadLeft
	}
	b, err := s.Repo.ReadBlobMax(id, max)
	if big := tooLarge(err); big != nil {
		if big.Size <= fileCap(p) {
			return nil, inconsistent("the files of the state at %s hold more than the %s a whole read takes (at %s)", short(s.Commit), refstore.ByteSize(s.loadMax), p)
		}
		return nil, inconsistent("%s at %s is %d bytes, over the %s cap of a state file", p, short(s.Commit), big.Size, refstore.ByteSize(fileCap(p)))
	}
	if err != nil {
		return nil, inconsistent("reading %s: %v", p, err)
	}
	if loading {
		s.loadLeft -= int64(len(b))
	}
	return b, nil
}

func tooLarge(err error) *refstore.TooLargeError {
	var big *refstore.TooLargeError
	if errors.As(err, &big) {
		return big
	}
	return nil
}
