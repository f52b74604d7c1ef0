package refstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Bounds on what a merge check reads of git merge-tree's output. The
// commits merged may be an agent's, and an agent can make a branch that
// conflicts in any number of files with names of any length and content.
const (
	// MaxConflictNames is how many conflicting files a merge check names;
	// the others are counted.
	MaxConflictNames = 20
	// maxConflictName is the longest name kept whole, in bytes.
	maxConflictName = 512
	// maxMergeTreeOutput is how much of merge-tree's output is kept.
	maxMergeTreeOutput = 64 << 10
)

// MergeOutcome is what git merge-tree made of two commits: the merged
// tree, or the files in conflict. The names are as git wrote them, not
// fit for a terminal: escape them before printing (contracts.Printable).
type MergeOutcome struct {
	Tree      Hash     // the merged tree, zero on a conflict
	Conflicts []string // at most MaxConflictNames files in conflict
	More      int      // how many more files conflict (at least), not named
}

// Conflicted reports whether the merge has conflicts.
func (m *MergeOutcome) Conflicted() bool { return len(m.Conflicts) > 0 || m.More > 0 }

// MergeCheck merges theirs into ours with `git merge-tree --write-tree`,
// without touching any checkout, reading at most 64 KB of its output.
func (r *Repo) MergeCheck(ctx context.Context, ours, theirs Hash) (*MergeOutcome, error) {
	if err := CheckGit(); err != nil {
		return nil, err
	}
	args := []string{"merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", ours.String(), theirs.String()}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir, cmd.Env = r.Dir(), ContainEnv(nil)
	out := &limitedBuffer{max: maxMergeTreeOutput}
	var stderr limitedBuffer
	stderr.max = 4 << 10
	cmd.Stdout, cmd.Stderr = out, &stderr
	err := cmd.Run()
	conflicted := false
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, &GitError{Args: args, ExitCode: -1, Stderr: err.Error()}
		}
		// Exit 1 is a merge with conflicts; anything else a failure.
		if ee.ExitCode() != 1 {
			return nil, &GitError{Args: args, ExitCode: ee.ExitCode(), Stderr: string(stderr.buf)}
		}
		conflicted = true
	}
	return parseMergeTree(out.buf, conflicted, out.dropped)
}

// parseMergeTree reads the output of merge-tree --write-tree --name-only
// -z: the tree id, then on a conflict the name of each conflicting file,
// each ended by a NUL. dropped is how many bytes of output were not kept:
// the last name kept may then be cut, and is counted rather than named.
func parseMergeTree(out []byte, conflicted bool, dropped int64) (*MergeOutcome, error) {
	first, rest, _ := bytes.Cut(out, []byte{0})
	tree, ok := ParseHash(strings.TrimSpace(string(first)))
	if !ok {
		return nil, &GitError{Args: []string{"merge-tree"}, Stderr: fmt.Sprintf("unexpected output (%d bytes) without a tree id", len(out))}
	}
	m := &MergeOutcome{}
	if !conflicted {
		m.Tree = tree
		return m, nil
	}
	fields := bytes.Split(rest, []byte{0})
	// The last field is what follows the last NUL: empty when the output
	// was whole, part of a name when it was cut.
	if last := fields[len(fields)-1]; len(last) > 0 || dropped > 0 {
		m.More++
	}
	fields = fields[:len(fields)-1]
	seen := map[string]bool{}
	for _, f := range fields {
		if len(f) == 0 {
			continue
		}
		name := string(f)
		if len(name) > maxConflictName {
			name = name[:maxConflictName] + "..."
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		if len(m.Conflicts) >= MaxConflictNames {
			m.More++
			continue
		}
		m.Conflicts = append(m.Conflicts, name)
	}
	if !m.Conflicted() {
		m.More = 1 // git said so without a name
	}
	return m, nil
}

// limitedBuffer keeps the first max bytes written to it and counts the
// others.
type limitedBuffer struct {
	buf     []byte
	max     int
	dropped int64
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	room := b.max - len(b.buf)
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		b.buf = append(b.buf, p[:room]...)
	}
	b.dropped += int64(len(p) - room)
	return len(p), nil
}
