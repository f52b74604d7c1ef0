package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// The crash harness's checks: after each run, the board and the
// repositories valid; at the end, every task worked to MERGED with no kills
// and nothing of git-liza's left behind.

// check: the state validates with its history, the integration branch
// moved only with merges the state records, git fsck is clean, and git can
// read every worktree.
func (h *crashHarness) check(when string) {
	for _, dir := range []string{h.proj, h.clone} {
		if r := h.exec(dir, 0, false, "", "git-liza", "validate", "--history"); r.code != 0 || !strings.HasPrefix(r.stdout, "VALID") {
			h.fail("%s: validate --history in %s: %s", when, filepath.Base(dir), r)
		}
		if r := h.exec(dir, 0, false, "", "git", "fsck", "--no-progress", "--strict", "--no-dangling"); r.code != 0 || r.stderr != "" {
			h.fail("%s: git fsck in %s: %s", when, filepath.Base(dir), r)
		}
		if r := h.exec(dir, 0, false, "", "git", "worktree", "list", "--porcelain"); r.code != 0 {
			h.fail("%s: git worktree list in %s: %s", when, filepath.Base(dir), r)
		}
	}
	if r := h.exec(h.hub, 0, false, "", "git", "fsck", "--no-progress", "--strict", "--no-dangling"); r.code != 0 || r.stderr != "" {
		h.fail("%s: git fsck in the remote: %s", when, r)
	}
	merged := map[string]string{}
	for _, t := range h.tasks(h.proj) {
		if t.Status == "MERGED" {
			merged[t.MergeCommit] = t.ID
			if r := h.exec(h.proj, 0, false, "", "git", "merge-base", "--is-ancestor", t.MergeCommit, "integration"); r.code != 0 {
				h.fail("%s: the merge of %s, %s, is not on integration", when, t.ID, t.MergeCommit)
			}
		}
	}
	moves := strings.Fields(h.must(h.proj, "git", "reflog", "show", "--format=%H", "refs/heads/integration"))
	for _, c := range moves[:len(moves)-1] {
		if _, ok := merged[c]; !ok {
			h.fail("%s: integration moved to %s, which no MERGED task records", when, c)
		}
	}
}

// drain takes every task to MERGED with no kills, one task at a time
// through all its steps: none may be stuck.
func (h *crashHarness) drain() {
	ts := h.tasks(h.proj)
	// Claimed tasks first (their coders may have rejected tasks to take
	// back), then the rest in flight, then the unclaimed (the board's
	// work-in-progress limit refuses claims while it is full).
	rank := func(t crashTask) int {
		switch t.Status {
		case "CLAIMED":
			return 0
		case "INTEGRATION_FAILED":
			// Its coder may have claimed another since: that one first.
			return 2
		case "UNCLAIMED":
			return 3
		}
		return 1
	}
	slices.SortStableFunc(ts, func(a, b crashTask) int { return rank(a) - rank(b) })
	deferred := map[string]int{}
tasks:
	for i := 0; i < len(ts); i++ {
		t := ts[i]
		for step := 0; t.Status != "MERGED"; step++ {
			if step == 12 {
				h.fail("drain: task %s is still %s", t.ID, t.Status)
				break
			}
			var args []string
			switch t.Status {
			case "UNCLAIMED":
				args = []string{"--agent", h.freeCoder(h.tasks(h.proj)), "claim", t.ID}
			case "REJECTED":
				args = []string{"--agent", t.AssignedTo, "claim", t.ID}
			case "INTEGRATION_FAILED":
				if activeCoders(h.tasks(h.proj), t.ID)[t.AssignedTo] && deferred[t.ID] < 3 {
					// Its coder holds another task in flight (both were
					// in flight when the drain began, this one first):
					// that one first.
					deferred[t.ID]++
					ts = append(ts, t)
					continue tasks
				}
				args = []string{"--agent", t.AssignedTo, "claim", t.ID}
				h.fix[t.ID] = true
			case "CLAIMED":
				h.work(t.ID, t.AssignedTo)
				args = []string{"--agent", t.AssignedTo, "submit", t.ID}
			case "READY_FOR_REVIEW":
				if t.ReviewingBy == "" {
					// A reviewer of its own: the harness's may all hold
					// reviews of tasks further on.
					args = []string{"--agent", "code-reviewer-" + strings.TrimPrefix(t.ID, "t") + "0", "review", t.ID}
				} else {
					args = []string{"--agent", t.ReviewingBy, "verdict", t.ID, "approve"}
				}
			case "APPROVED":
				args = []string{"--agent", "code-reviewer-1", "merge", t.ID}
			case "BLOCKED":
				args = []string{"task", "unblock", t.ID}
			default:
				h.fail("drain: task %s is %s", t.ID, t.Status)
			}
			if r := h.exec(h.proj, 0, false, "", "git-liza", args...); r.code != 0 && !(t.Status == "APPROVED" && r.code == 1 && strings.Contains(r.stderr, "it is INTEGRATION_FAILED")) {
				h.fail("drain: %s: %s", strings.Join(args, " "), r)
				break
			}
			for _, n := range h.tasks(h.proj) {
				if n.ID == t.ID {
					t = n
				}
			}
		}
	}
}

// prune runs worktree prune and checks that nothing of git-liza's is left
// behind: no worktree registration, no throwaway or trash directory, no
// branch of a merged task, no lock of git's.
func (h *crashHarness) prune() {
	r := h.exec(h.proj, 0, false, "", "git-liza", "worktree", "prune")
	if r.code != 0 {
		h.fail("worktree prune: %s", r)
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "kept ") {
			h.fail("worktree prune kept something: %s", line)
		}
	}
	h.countRepairs(regexp.MustCompile(`(?m)^`).ReplaceAllString(r.stdout, "git-liza: "))
	git := filepath.Join(h.proj, ".git")
	for _, pattern := range []string{"worktrees/*", "liza/merge/*", "liza/review/*", "liza/trash/*", "refs/*/*.lock", "refs/*/*/*.lock", "*.lock"} {
		got, _ := filepath.Glob(filepath.Join(git, pattern))
		for _, p := range got {
			what := ""
			if strings.HasPrefix(pattern, "worktrees/") {
				for _, f := range []string{"gitdir", "locked", "commondir", "HEAD"} {
					b, err := os.ReadFile(filepath.Join(p, f))
					what += fmt.Sprintf(" %s=%q (%v)", f, b, err)
				}
			}
			h.fail("left after prune: %s%s", p, what)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(h.proj, ".worktrees")); len(ents) > 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		h.fail("left after prune in .worktrees: %s", strings.Join(names, " "))
	}
	if b := h.must(h.proj, "git", "branch", "--list", "task/*"); b != "" {
		h.fail("task branches left after prune:\n%s", b)
	}
	if tmp, _ := filepath.Glob(filepath.Join(filepath.Dir(h.proj), "tmp", "*")); len(tmp) > 0 {
		h.fail("left in TMPDIR: %v", tmp)
	}
}
