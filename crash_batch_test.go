package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
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
