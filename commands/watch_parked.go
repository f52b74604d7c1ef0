package commands

import (
	"fmt"

	"github.com/liza-dev/git-liza/contracts"
)

// parkNotices says, when watching continuously, each task that became
// parked since the last look (its coder's supervisor stopped cleanly: see
// contracts.ParkOf), once per park, with who parked it, when and how it
// resumes. A park is no alarm until it grows old (PARK STALE); this line
// is what the watcher's reader sees of a team stopped with Ctrl-C. watch
// --once, which prints only the alarms that are on, says nothing of it.
func (w *watcher) parkNotices(st *contracts.State) {
	if !w.continuous || st == nil {
		return
	}
	now := map[string]string{}
	for _, t := range st.Tasks {
		park, ok := contracts.ParkOf(t)
		if !ok {
			continue
		}
		now[t.ID] = park.Since
		if w.parked[t.ID] != park.Since {
			w.notice(fmt.Sprintf("⏸️ PARKED: %s by %s at %s — its supervisor stopped cleanly; %s", t.ID, park.By, park.Since, contracts.ResumeHint))
		}
	}
	w.parked = now
}
