package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// queuePoints are where batches kills the merge queue, in turn.
var queuePoints = []string{"merge:test", "queue:landed", "queue:isolated", "cas:commit", "worktree:discard"}

// batches runs rounds of the merge queue on a batch of its own: four new
// tasks taken to APPROVED without kills, one of which breaks the test,
// then merge --queue killed at the round's crash point and asked again.
// The three that do not break the test must be MERGED after it, the one
// that does INTEGRATION_FAILED; the board and the repository are checked
// after each round, and the broken task is fixed by its coder and merged.
func (h *crashHarness) batches(rounds int) {
	for r := 0; r < rounds; r++ {
		var ids []string
		for i := 0; i < 4; i++ {
			ids = append(ids, h.addTask(h.proj))
		}
		broken := ids[h.rng.IntN(len(ids))]
		for _, id := range ids {
			h.breaks[id] = id == broken
		}
		for _, id := range ids {
			coder := h.freeCoder(h.tasks(h.proj))
			reviewer := "code-reviewer-" + strings.TrimPrefix(id, "t") + "0"
			h.must(h.proj, "git-liza", "--agent", coder, "claim", id)
			h.work(id, coder)
			h.must(h.proj, "git-liza", "--agent", coder, "submit", id)
			h.must(h.proj, "git-liza", "--agent", reviewer, "review", id)
			h.must(h.proj, "git-liza", "--agent", reviewer, "verdict", id, "approve")
		}
		for _, id := range ids {
			delete(h.breaks, id)
		}
		h.next++
		args := []string{"--agent", "code-reviewer-1", "--request-id", fmt.Sprintf("batch-%d", h.next), "merge", "--queue"}
		point := queuePoints[r%len(queuePoints)]
		group := h.rng.IntN(2) == 0
		crash := point
		if group {
			crash += ":group"
		}
		h.ops["queue"]++
		if k := h.exec(h.proj, 0, group, crash, "git-liza", args...); k.killed {
			h.landed++
			h.points[point]++
		} else if k.code != 0 && !regexp.MustCompile(queueMissed).MatchString(k.stderr) {
			h.fail("batch round %d: merge --queue (not killed at %s) failed: %s", r, point, k)
		}
		if again := h.exec(h.proj, 0, false, "", "git-liza", args...); again.code != 0 && !(again.code == 1 && regexp.MustCompile(queueMissed).MatchString(again.stderr)) {
			h.fail("batch round %d: merge --queue killed at %s; the same request again: %s", r, point, again)
		}
		for _, t := range h.tasks(h.proj) {
			want := ""
			switch {
			case t.ID == broken:
				want = "INTEGRATION_FAILED"
			case slices.Contains(ids, t.ID):
				want = "MERGED"
			}
			if want != "" && t.Status != want {
				h.fail("batch round %d (killed at %s): task %s is %s, want %s", r, point, t.ID, t.Status, want)
			}
		}
		h.check(fmt.Sprintf("after batch round %d (killed at %s)", r, point))
		// Its coder fixes the task that broke the test, and it lands.
		coder := ""
		for _, t := range h.tasks(h.proj) {
			if t.ID == broken {
				coder = t.AssignedTo
			}
		}
		reviewer := "code-reviewer-" + strings.TrimPrefix(broken, "t") + "0"
		h.must(h.proj, "git-liza", "--agent", coder, "claim", broken)
		h.fix[broken] = true
		h.work(broken, coder)
		h.must(h.proj, "git-liza", "--agent", coder, "submit", broken)
		h.must(h.proj, "git-liza", "--agent", reviewer, "review", broken)
		h.must(h.proj, "git-liza", "--agent", reviewer, "verdict", broken, "approve")
		h.must(h.proj, "git-liza", "--agent", "code-reviewer-1", "merge", broken)
	}
}

// herePoints are where hereClaims kills a claim without a worktree, in
// turn; "" is a moment at random.
var herePoints = []string{"cas:commit", "refs:locked", "refs:logged", "pack:renamed", ""}

// hereClaims runs claims of the best task without a worktree, which choose
// their task inside the compare-and-swap (ops.claimHere): each is killed at
// the round's crash point, then asked again with the same request id. The
// second must report one task, claimed by that coder and by no one else,
// and be the only task the coder holds; the board and the repository are
// checked, and the task is released for the runs that follow.
func (h *crashHarness) hereClaims(rounds int) {
	for r := 0; r < rounds; r++ {
		coder := h.freeCoder(h.tasks(h.proj))
		h.next++
		args := []string{"--agent", coder, "--request-id", fmt.Sprintf("here-%d", h.next), "claim", "--no-worktree"}
		point := herePoints[r%len(herePoints)]
		var kill time.Duration
		if point == "" {
			kill = time.Duration(1 + h.rng.Int64N(int64(h.estimate("claim"))))
		}
		h.ops["claim"]++
		if k := h.exec(h.proj, kill, false, point, "git-liza", args...); k.killed {
			h.landed++
			if point != "" {
				h.points[point]++
			}
		} else if k.code != 0 {
			h.fail("here round %d: claim --no-worktree (not killed at %q) failed: %s", r, point, k)
		}
		again := h.exec(h.proj, 0, false, "", "git-liza", args...)
		id, _, _ := strings.Cut(again.stdout, " ")
		if again.code != 0 || !strings.HasPrefix(again.stdout, id+" claimed by "+coder) {
			h.fail("here round %d: claim --no-worktree killed at %q; the same request again: %s", r, point, again)
			continue
		}
		var held []string
		for _, t := range h.tasks(h.proj) {
			if t.AssignedTo == coder && t.Status == "CLAIMED" {
				held = append(held, t.ID)
			}
		}
		if !slices.Equal(held, []string{id}) {
			h.fail("here round %d (killed at %q): %s holds %v, want just %s", r, point, coder, held, id)
		}
		h.check(fmt.Sprintf("after here round %d (killed at %q)", r, point))
		h.must(h.proj, "git-liza", "task", "release", id, "--force")
	}
}
