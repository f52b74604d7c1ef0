package tui

import (
	"fmt"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
)

// queueLines is the merge queue as ops.Status reads it with the board,
// worded as git liza status words it: the batch under test here, what
// merges next, what waits for a dependency, and what the queue failed,
// with why; nothing when the queue is empty.
func (m *model) queueLines() []string {
	q := m.board.Queue
	if q == nil {
		return nil
	}
	ids := func(s []string) string { return p(strings.Join(s, ", ")) }
	out := []string{headStyle.Render(fmt.Sprintf("Merge queue (batches of %d)", q.MergeBatch))}
	if len(q.Batch) > 0 {
		l := "  batch under test: " + ids(q.Batch)
		if len(q.Testing) > 0 {
			l += ", testing " + ids(q.Testing)
		}
		if q.Since != "" {
			l += " (since " + p(q.Since) + ")"
		}
		out = append(out, l)
	}
	if len(q.Waiting) > 0 {
		out = append(out, "  next: "+ids(q.Waiting))
	}
	for _, b := range q.Blocked {
		out = append(out, "  waiting for a dependency: "+p(b.ID)+" (until "+ids(b.Until)+")")
	}
	for _, o := range q.Out {
		out = append(out, alarmStyle.Render("  failed: "+p(o.ID)+": "+p(contracts.OneLine(o.Reason))))
	}
	return out
}
