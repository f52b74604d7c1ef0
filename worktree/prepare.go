package worktree

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// Kinds of worktree that Prepare readies.
const (
	KindTask   = "task"   // a claim's task worktree
	KindReview = "review" // a reviewer's checkout of the commit under review
	KindMerge  = "merge"  // a merge's integration test worktree
)

// Prep says which new worktree Prepare readies and from what.
type Prep struct {
	// Dir is the new worktree, checked out.
	Dir string
	// Kind is KindTask, KindReview or KindMerge.
	Kind string
	// Task is the task the worktree is for.
	Task string
	// Role is the role of the agent that works in it (empty for a merge).
	Role contracts.Role
	// Source is the commit whose .worktreeinclude (and setup script)
	// count: the integration branch's tip, reviewed and merged work, never
	// the task's own branch, which its coder writes.
	Source refstore.Hash
	// Log, when set, is told each line worth a person's reading: what was
	// copied, what was refused and why.
	Log func(string)
	// SetupTimeout bounds the setup step (the config's
	// worktree_setup_timeout); 0 is contracts.DefaultSetupTimeout.
	SetupTimeout time.Duration
}

// Prepared is what Prepare did to a new worktree.
type Prepared struct {
	// Copied are the paths (relative, slash-separated) copied from the
	// main checkout because .worktreeinclude names them.
	Copied []string
	// Skipped says, a line each, what .worktreeinclude named and was not
	// copied, and why.
	Skipped []string
	// Bytes is the size of what was copied.
	Bytes int64
	// Setup is what the setup step did; nil: no setup ran.
	Setup *SetupResult
}

// Prepare readies a worktree that was just made (a claim's, a review's, a
// merge test's) before anyone works in it: the ignored files that
// .worktreeinclude names are copied from the main checkout, then the setup
// step runs. It is called once per new worktree: not when a claim takes on
// a worktree kept from an earlier claim, and not every time the merge
// lane's kept test worktree moves to the next merge.
//
// What it logs goes to p.Log and is kept with the worktree's registration
// (PreparedLines), for the session logs of the agents that work there.
func Prepare(ctx context.Context, repo *refstore.Repo, p Prep) (*Prepared, error) {
	out := &Prepared{}
	var lines []string
	log := p.Log
	p.Log = func(line string) {
		lines = append(lines, line)
		if log != nil {
			log(line)
		}
	}
	if err := copyIncluded(ctx, repo, p, out); err != nil {
		return out, fmt.Errorf("copy what %s names into %s: %w", IncludeFile, p.Dir, err)
	}
	// Then the setup step, with the copies in place. A failure is a
	// *SetupFailed: the caller undoes the worktree and charges no task.
	res, err := RunSetup(ctx, repo, Setup{Dir: p.Dir, Kind: p.Kind, Task: p.Task, Role: p.Role.IDPrefix(), Source: p.Source, Timeout: p.SetupTimeout})
	out.Setup = res
	if err != nil {
		return out, err
	}
	if res != nil {
		p.Log(fmt.Sprintf("%s set up the %s worktree of %s in %.3fs (log: %s)", SetupScript, p.Kind, p.Task, res.Seconds(), res.Log))
	}
	if len(lines) > 0 {
		if err := keepRecord(p.Dir, lines); err != nil {
			return out, fmt.Errorf("keep the record of what readied %s: %w", p.Dir, err)
		}
	}
	return out, nil
}

// preparedRecord is the file, in a worktree's registration, that keeps
// the lines Prepare logged, for the session logs of the agents that work
// there.
const preparedRecord = "liza-prepared.json"

// maxRecord bounds the record read back: it lies where an agent may
// write.
const maxRecord = 256 << 10

// PreparedLines is what Prepare logged when it readied the worktree at
// dir: nil when it logged nothing, or the record is unreadable or too big.
func PreparedLines(dir string) []string {
	gd, err := refstore.CheckoutGitDir(dir)
	if err != nil {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(gd, preparedRecord), os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRecord+1))
	var lines []string
	if err != nil || len(b) > maxRecord || json.Unmarshal(b, &lines) != nil {
		return nil
	}
	// Prepare's own lines are printable; one written by someone else may
	// not be.
	for i, l := range lines {
		if strings.ContainsFunc(l, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }) {
			lines[i] = strconv.Quote(l)
		}
	}
	return lines
}

// keepRecord writes lines into the registration of the worktree at dir.
func keepRecord(dir string, lines []string) error {
	gd, err := refstore.CheckoutGitDir(dir)
	if err != nil {
		return err
	}
	b, err := json.Marshal(lines)
	if err != nil {
		return err
	}
	// Through a new file and a rename: whatever lies at the name (a link
	// planted there) is replaced, not written through.
	f, err := os.CreateTemp(gd, preparedRecord+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(gd, preparedRecord))
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
