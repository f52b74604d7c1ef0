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
	out, err := r.gitBounded(ctx, maxMergeTreeOutput, args...)
	var ge *GitError
	// Exit 1 is a merge with conflicts; anything else a failure.
	conflicted := errors.As(err, &ge) && ge.ExitCode == 1
	if err != nil && !conflicted {
		return nil, err
	}
	return parseMergeTree(out.buf, conflicted, out.dropped)
}

// gitBounded runs git in this repository keeping at most max bytes of its
// output (and 4 KB of its errors): for commands whose output an agent's
// commits decide.
func (r *Repo) gitBounded(ctx context.Context, max int, args ...string) (*limitedBuffer, error) {
	if err := CheckGit(); err != nil {
		return nil, err
	}
	if err := flushAllHeld(); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir, cmd.Env = r.Dir(), inEnglish(ContainEnv(nil))
	out, stderr := &limitedBuffer{max: max}, &limitedBuffer{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = out, stderr
	if err := cmd.Run(); err != nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else {
			stderr.Write([]byte(err.Error()))
		}
		return out, &GitError{Args: args, ExitCode: code, Stderr: string(stderr.buf)}
	}
	return out, nil
}

// ChangedFiles lists the files that differ between two commits (renames
// as a deletion and an addition), at most max of them; complete is false
// when there are more.
func (r *Repo) ChangedFiles(ctx context.Context, from, to Hash, max int) (files []string, complete bool, err error) {
	out, err := r.gitBounded(ctx, max*(maxConflictName+1), "diff", "--name-only", "--no-renames", "-z", from.String(), to.String(), "--")
	if err != nil {
		return nil, false, err
	}
	fields := bytes.Split(out.buf, []byte{0})
	complete = out.dropped == 0 && len(fields[len(fields)-1]) == 0
	for _, f := range fields[:len(fields)-1] {
		if len(f) == 0 || len(f) > maxConflictName {
			complete = false
			continue
		}
		if len(files) == max {
			return files, false, nil
		}
		files = append(files, string(f))
	}
	return files, complete, nil
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
