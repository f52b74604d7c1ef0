package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// defaultWatchInterval is how often watch looks at the blackboard: reading
// a ref and a few small files costs milliseconds, and an alarm is then
// seen well within the shortest poll interval of the agents.
const defaultWatchInterval = 10 * time.Second

func (e *Env) watchCmd() *cli.Command {
	return &cli.Command{
		Name:  "watch",
		Usage: "watch the blackboard and raise an alarm when something needs a human (--once: look once, for cron)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "once", Usage: "look once, print the alarms that are on and exit"},
			&cli.DurationFlag{Name: "interval", Usage: "time between two looks", Value: defaultWatchInterval},
			&cli.StringFlag{Name: "log", Usage: "append alarms to `PATH` (default: <git common dir>/liza/alerts.log)"},
		},
		Action: e.action(0, 0, "watch [--once] [--interval DURATION] [--log PATH]", func(ctx context.Context, s *session, _ []string) error {
			w, err := s.newWatcher()
			if err != nil {
				return err
			}
			if s.cmd.Bool("once") {
				return w.once(ctx)
			}
			interval := s.cmd.Duration("interval")
			if interval <= 0 {
				return contracts.Invalidf("--interval must be positive (got %s)", interval)
			}
			longLived()
			return w.run(ctx, interval)
		}),
	}
}

// watcher polls the blackboard and reports alarms as they start and
// clear. It never writes to refs/liza/state: what it keeps, the alerts log
// and the set of alarms on, lives in the git common dir, outside every
// checkout.
type watcher struct {
	s          *session
	clock      func() time.Time
	logPath    string
	activePath string
	fetchErr   string // the fetch failure already reported, if any
	pollErr    string // the poll failure already reported, if any
	continuous bool
}

func (s *session) newWatcher() (*watcher, error) {
	logPath := s.cmd.String("log")
	if logPath == "" {
		logPath = filepath.Join(s.repo.CommonDir, "liza", "alerts.log")
	} else if !filepath.IsAbs(logPath) {
		logPath = filepath.Join(s.Dir, logPath)
	}
	clock, err := s.clock()
	if err != nil {
		return nil, err
	}
	return &watcher{s: s, clock: clock, logPath: logPath, activePath: activeFile(logPath)}, nil
}

// activeFile is where the alarms that are on are kept for the log at
// path: beside it, alerts.log → alerts.active.json.
func activeFile(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".active.json"
}

// once looks once, records the transitions and prints every alarm on.
func (w *watcher) once(ctx context.Context) error {
	alarms, err := w.poll(ctx)
	if err != nil {
		return err
	}
	if w.s.json {
		return w.s.printJSON(alarms)
	}
	for _, a := range alarms {
		fmt.Fprintln(w.s.Stdout, a.Message)
	}
	return nil
}

// run polls every interval until ctx ends or the process is told to stop
// (SIGINT, SIGTERM), and then returns nil. Only the first poll's failure
// is fatal; a later one is reported once and the watch goes on.
func (w *watcher) run(ctx context.Context, interval time.Duration) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	w.continuous = true
	if _, err := w.poll(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	fmt.Fprintf(w.s.Stderr, "git-liza: watching %s every %s; alerts in %s\n", w.s.watchedRef(), interval, w.logPath)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		_, err := w.poll(ctx)
		if ctx.Err() != nil {
			return nil
		}
		switch {
		case err != nil && err.Error() != w.pollErr:
			w.pollErr = err.Error()
			w.notice("🚨 WATCH FAILED: " + w.pollErr)
		case err == nil && w.pollErr != "":
			w.pollErr = ""
			w.notice("✅ WATCH RECOVERED: the blackboard is readable again")
		}
	}
}

// watchedRef names what is watched, for people.
func (s *session) watchedRef() string {
	if r := s.remote(); r != "" {
		return refstore.StateRef + " on " + r
	}
	return refstore.StateRef
}

// poll looks at the blackboard once, records the alarms that started or
// cleared since the last look, and returns the alarms on.
func (w *watcher) poll(ctx context.Context) ([]contracts.Alarm, error) {
	tip, err := w.tip(ctx)
	if err != nil {
		return nil, err
	}
	now := w.clock()
	snap, err := cas.ReadSnapshot(w.s.repo, tip)
	if err != nil {
		return nil, err
	}
	obs, err := w.s.observe(snap, true, now)
	if err != nil {
		return nil, err
	}
	prev, err := readActive(w.activePath)
	if err != nil {
		return nil, err
	}
	lines, next := alarmTransitions(prev, obs.Alarms)
	if len(lines) == 0 {
		return obs.Alarms, nil
	}
	for _, l := range lines {
		w.emit(l.text)
		if w.continuous && w.s.json {
			_ = json.NewEncoder(w.s.Stdout).Encode(watchEvent{Time: contracts.FormatTime(now), Event: l.event, Alarm: l.alarm})
		}
	}
	return obs.Alarms, writeActive(w.activePath, next)
}

// tip is the state commit to look at: in remote mode the remote's, fetched
// now, or the last one fetched when the remote cannot be reached (said
// once per outage); else the local one.
func (w *watcher) tip(ctx context.Context) (refstore.Hash, error) {
	repo := w.s.repo
	if r := w.s.remote(); r != "" {
		got, err := repo.Fetch(ctx, r, refstore.StateRef)
		if err == nil {
			if w.fetchErr != "" {
				w.fetchErr = ""
				w.notice("✅ FETCH RECOVERED: " + r + " answers again")
			}
			if h, ok := got[refstore.StateRef]; ok {
				return h, nil
			}
			return refstore.Hash{}, contracts.Invalidf("no blackboard on %s: run git liza init GOAL, or git liza sync", r)
		}
		if ctx.Err() != nil {
			return refstore.Hash{}, ctx.Err()
		}
		var unreachable *refstore.ErrUnreachable
		if errors.As(err, &unreachable) {
			err = fmt.Errorf("%s is unreachable: %v", r, unreachable.Err)
		}
		if msg := firstLine(err.Error()); msg != w.fetchErr {
			w.fetchErr = msg
			w.notice(fmt.Sprintf("⚠️ FETCH FAILED: %s (watching the last state fetched)", msg))
		}
		if h, ok, err := repo.ReadRef(refstore.TrackingRef(r, refstore.StateRef)); err != nil || ok {
			return h, err
		}
	}
	h, ok, err := repo.ReadRef(refstore.StateRef)
	if err == nil && !ok {
		err = contracts.Invalidf("no blackboard here: run `git liza init GOAL` first")
	}
	return h, err
}

// emit reports an alarm's transition: on stderr when watching
// continuously, and in the alerts log with the time.
func (w *watcher) emit(line string) {
	if w.continuous {
		fmt.Fprintln(w.s.Stderr, line)
	}
	w.log(line)
}

// notice reports a line about the watch itself, on stderr and in the
// alerts log.
func (w *watcher) notice(line string) {
	fmt.Fprintln(w.s.Stderr, line)
	w.log(line)
}

func (w *watcher) log(line string) {
	if err := appendLog(w.logPath, contracts.FormatTime(w.clock())+" "+line+"\n"); err != nil {
		fmt.Fprintf(w.s.Stderr, "git-liza: alerts log: %v\n", err)
	}
}

func appendLog(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// watchEvent is one transition, as watch --json prints it.
type watchEvent struct {
	Time  string          `json:"time"`
	Event string          `json:"event"` // "raised" or "cleared"
	Alarm contracts.Alarm `json:"alarm"`
}

type transition struct {
	event string
	alarm contracts.Alarm
	text  string
}

// alarmTransitions compares the alarms on at the last look with those on
// now. An alarm is raised when its key appears or its kind changes (an
// escalation), and cleared when its key goes. next is what to remember:
// each alarm as it was raised, so that its clearing quotes it.
func alarmTransitions(prev, cur []contracts.Alarm) ([]transition, []contracts.Alarm) {
	was := map[string]contracts.Alarm{}
	for _, a := range prev {
		was[a.Key] = a
	}
	var out []transition
	next := make([]contracts.Alarm, 0, len(cur))
	on := map[string]bool{}
	for _, a := range cur {
		on[a.Key] = true
		if p, ok := was[a.Key]; ok && p.Kind == a.Kind {
			next = append(next, p)
			continue
		}
		next = append(next, a)
		out = append(out, transition{event: "raised", alarm: a, text: a.Message})
	}
	var cleared []transition
	for _, a := range prev {
		if !on[a.Key] {
			cleared = append(cleared, transition{event: "cleared", alarm: a, text: "✅ CLEARED: " + unsigned(a.Message)})
		}
	}
	slices.SortFunc(cleared, func(a, b transition) int { return strings.Compare(a.alarm.Key, b.alarm.Key) })
	return append(cleared, out...), next
}

// unsigned drops the level sign from an alarm's message.
func unsigned(msg string) string {
	for _, sign := range []string{"⚠️ ", "🚨 "} {
		if rest, ok := strings.CutPrefix(msg, sign); ok {
			return rest
		}
	}
	return msg
}

// readActive reads the alarms on at the last look; none when there was no
// look yet or the file is unreadable (the next write replaces it).
func readActive(path string) ([]contracts.Alarm, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var list []contracts.Alarm
	if json.Unmarshal(data, &list) != nil {
		return nil, nil
	}
	return list, nil
}

// writeActive replaces the file of alarms on, atomically, so that a
// watcher and a cron job never read half of it.
func writeActive(path string, list []contracts.Alarm) error {
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".alarms-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(data, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// observation is what one look at a state commit found.
type observation struct {
	State    *contracts.State // nil when the state cannot be read
	Err      error            // why State is nil
	Switches []contracts.Switch
	Alarms   []contracts.Alarm
}

// observe reads the state of snap, validates it and computes its alarms
// at now. A state that does not load or validate is still
// observed: it raises the INVALID STATE alarm. withFiles adds the
// kill-switch files of the main checkout to the state's control mode.
func (s *session) observe(snap *cas.Snapshot, withFiles bool, now time.Time) (*observation, error) {
	c, err := s.repo.ReadCommit(snap.Commit)
	if err != nil {
		return nil, err
	}
	in := contracts.AlarmInput{Now: now, LastChange: c.Committer.When}
	obs := &observation{}
	obs.State, err = snap.Load()
	var ctrl *contracts.Control
	if err != nil {
		obs.State, obs.Err = nil, err
		in.Problems = []string{err.Error()}
	} else {
		for _, p := range contracts.Validate(obs.State) {
			in.Problems = append(in.Problems, p.String())
		}
		ctrl = obs.State.Control
	}
	files := map[string]time.Time{}
	if root := s.repo.MainWorkTree(); withFiles && root != "" {
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
