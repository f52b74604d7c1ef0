package ops

import (
	"context"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// Observation is what one look at a state commit found.
type Observation struct {
	// State is the state, nil when it cannot be read. A state read from
	// its indexes (Lean) holds whole only the tasks that were asked for
	// or may raise an alarm; every other live task is its summary's stub,
	// and it holds no archive and no lists but the discoveries. With
	// Options.KeepDecoded, its tasks are shared with the next
	// observations: read-only.
	State *contracts.State
	Lean  bool
	// Archived and Anomalies count what a lean State leaves out.
	Archived, Anomalies int
	Err                 error // why State is nil
	// Unverified, for a tip that is not known good here and whose commits
	// since the last one that is do not verify, says why: the state is
	// shown, but nothing builds on it.
	Unverified string
	Switches   []contracts.Switch
	Alarms     []contracts.Alarm
}

// ObserveRequest says what to look at.
type ObserveRequest struct {
	Snap *cas.Snapshot
	// Tip says Snap is the tip of refs/liza/state: a state fetched since
	// the last one known good is verified (cheap: what each operation
	// changed) and then read from its indexes.
	Tip bool
	// WithFiles adds the kill-switch files of the main checkout to the
	// state's control mode.
	WithFiles bool
	Now       time.Time
	// Whole, when set, names the live tasks a lean State must hold whole
	// (those a board lists), from their summaries.
	Whole func(*contracts.TaskSummary) bool
}

// Observe reads the state of r.Snap and computes its alarms at r.Now. A
// state this repository knows good (it wrote it or verified every commit
// up to it) is valid, so it is read from its indexes: the cost follows
// what is shown and what may raise an alarm, not the size of the board.
// Any other state is read whole and validated; one that does not load or
// validate is still observed, and raises the INVALID STATE alarm.
func (s *Service) Observe(ctx context.Context, r ObserveRequest) (*Observation, error) {
	c, err := s.Repo.ReadCommit(r.Snap.Commit)
	if err != nil {
		return nil, err
	}
	in := contracts.AlarmInput{Now: r.Now, LastChange: c.Committer.When}
	obs := &Observation{}
	if s.Trusted(ctx, r.Snap, r.Tip) {
		err = s.lean(r, obs)
	} else {
		obs.State, err = r.Snap.Load()
		if err == nil {
			for _, p := range contracts.Validate(obs.State) {
				in.Problems = append(in.Problems, p.String())
			}
			obs.Archived, obs.Anomalies = len(obs.State.Archive), len(obs.State.Anomalies)
		}
		// What the state says is wrong with it comes first; then that its
		// history does not verify.
		if r.Tip && r.Snap.Exists() {
			obs.Unverified = s.unverified(ctx, r.Snap.Commit)
			in.Problems = append(in.Problems, obs.Unverified)
		}
	}
	var ctrl *contracts.Control
	if err != nil {
		obs.State, obs.Err = nil, err
		in.Problems = []string{err.Error()}
	} else {
		ctrl = obs.State.Control
	}
	files := map[string]time.Time{}
	if root := s.Repo.MainWorkTree(); r.WithFiles && root != "" {
		files = contracts.StatSwitchFiles(root)
	}
	obs.Switches = contracts.ActiveSwitches(ctrl, files)
	in.Switches = obs.Switches
	obs.Alarms = contracts.Alarms(obs.State, in)
	// Empty lists, not null, in --json output.
	if obs.Switches == nil {
		obs.Switches = []contracts.Switch{}
	}
	if obs.Alarms == nil {
		obs.Alarms = []contracts.Alarm{}
	}
	return obs, nil
}

// Trusted reports whether the state at snap can be read from its indexes
// and entity by entity: this repository knows it good (it wrote it or
// verified every commit up to it) or, when it is the tip, the commits
// since one it knows good verify now. Any other state is read whole.
func (s *Service) Trusted(ctx context.Context, snap *cas.Snapshot, tip bool) bool {
	if !snap.Exists() {
		return false
	}
	return s.Store.KnownGood(snap.Commit) || tip && s.Store.Trusted(ctx, snap.Commit)
}

// unverified says why the tip at commit is not verified here.
func (s *Service) unverified(ctx context.Context, commit refstore.Hash) string {
	if s.Store.Verify == nil {
		return "nothing here verifies it"
	}
	if err := s.Store.Verify(ctx, commit); err != nil {
		return strings.TrimPrefix(err.Error(), "state is inconsistent: ")
	}
	return "its commits verify, but its state does not validate"
}

// lean reads a state known valid from its indexes: the header, the live
// tasks' summaries, whole only the tasks r.Whole asks for and those that
// may raise an alarm (contracts.MayAlarm), the discoveries, and the sizes
// of the archive and of the anomalies.
func (s *Service) lean(r ObserveRequest, obs *Observation) error {
	snap := r.Snap
	st, err := snap.Header()
	if err != nil {
		return err
	}
	sums, err := snap.Summaries(cas.TasksDir)
	if err != nil {
		return err
	}
	cfg := st.Config
	cfg.FillDefaults()
	// An agent's or the goal's budget counts every session recorded on
	// the board: its alarms need every task whole, the archived ones too.
	spend := budgetsOverAll(cfg.Budgets)
	if spend {
		if st.Archive, err = snap.SharedAllTasks(cas.ArchiveDir, s.decoded); err != nil {
			return err
		}
	}
	var whole []string
	var at []int
	for _, x := range sums {
		if spend || contracts.MayAlarm(x, cfg, r.Now) || r.Whole != nil && r.Whole(x) {
			whole, at = append(whole, x.ID), append(at, len(st.Tasks))
		}
		st.Tasks = append(st.Tasks, x.Stub())
	}
	// Through the cache, the tasks are shared: what reads a lean State
	// does not change its tasks.
	read, err := snap.SharedTasks(cas.TasksDir, whole, s.decoded)
	if err != nil {
		return err
	}
	for i, t := range read {
		st.Tasks[at[i]] = t
	}
	cas.SortTasks(st.Tasks)
	if err := cas.EachEntry(snap, cas.ListDiscovered, func(d *contracts.Discovery) error {
		st.Discovered = append(st.Discovered, d)
		return nil
	}); err != nil {
		return err
	}
	if obs.Archived, _, err = snap.Count(cas.ArchiveDir); err != nil {
		return err
	}
	if obs.Anomalies, err = snap.ListLen(cas.ListAnomalies); err != nil {
		return err
	}
	obs.State, obs.Lean = st, true
	return nil
}

// budgetsOverAll reports whether b holds an agent's or the goal's spend,
// which sums the sessions of every task.
func budgetsOverAll(b *contracts.Budgets) bool {
	return b != nil && (b.AgentTokens > 0 || b.AgentUSD > 0 || b.GoalTokens > 0 || b.GoalUSD > 0)
}
