package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/notify"
	"github.com/liza-dev/git-liza/ops"
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
	notifier   *notify.Notifier  // nil: no notification channel configured
	alarmsOff  bool              // run's watcher: notifications only
	parked     map[string]string // continuous: the tasks parked at the last look, by id, with the time of the park
	held       held              // the holds the board does not show (watch_held.go)
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
	w := &watcher{s: s, clock: clock, logPath: logPath, activePath: activeFile(logPath)}
	w.notifier = s.newNotifier(func(l string) { w.notice("git-liza: " + l) })
	return w, nil
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
		fmt.Fprintln(w.s.Stdout, contracts.Printable(a.Message))
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
	fmt.Fprintf(w.s.Stderr, "git-liza: watching %s every %s; alerts in %s\n", contracts.Printable(w.s.watchedRef()), interval, contracts.Printable(w.logPath))
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
	if r := s.ops.Remote(); r != "" {
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
	w.lookHeld(ctx, tip, now)
	snap, err := cas.ReadSnapshot(w.s.repo, tip)
	if err != nil {
		return nil, err
	}
	obs, err := w.s.ops.Observe(ctx, ops.ObserveRequest{Snap: snap, Tip: true, WithFiles: true, Now: now, Whole: notify.Whole})
	if err != nil {
		return nil, err
	}
	w.sendEvents(ctx, obs.State, tip, now)
	if w.alarmsOff {
		return obs.Alarms, nil
	}
	w.parkNotices(obs.State)
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
	if r := w.s.ops.Remote(); r != "" {
		got, err := repo.Fetch(ctx, r, refstore.StateRef)
		if err == nil {
			w.s.ops.Store.RecordFetch(r) // the mark of the next outage's event
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
		msg := contracts.FirstLine(err.Error())
		if msg != w.fetchErr {
			w.fetchErr = msg
			w.notice(fmt.Sprintf("⚠️ FETCH FAILED: %s (watching the last state fetched)", msg))
		}
		h, ok, err := repo.ReadRef(refstore.TrackingRef(r, refstore.StateRef))
		if at, fetched := w.s.ops.Store.LastFetch(r); fetched && w.notifier != nil {
			if e, late := notify.RemoteUnreachable(r, msg, at, h.String(), w.clock()); late {
				w.notifier.Notify(ctx, []notify.Event{e})
			}
		}
		if err != nil || ok {
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
// continuously, and in the alerts log with the time. An alarm quotes
// agents' text (a block reason, a discovery), and the alerts log is read
// on terminals (tail -f) too: the line is made printable for both.
func (w *watcher) emit(line string) {
	line = contracts.Printable(line)
	if w.continuous {
		fmt.Fprintln(w.s.Stderr, line)
	}
	w.log(line)
}

// notice reports a line about the watch itself, on stderr and in the
// alerts log; an error it quotes may quote input.
func (w *watcher) notice(line string) {
	line = contracts.Printable(line)
	fmt.Fprintln(w.s.Stderr, line)
	w.log(line)
}

// log appends a line to the alerts log, made printable (emit and notice
// did already; this is the file's one writer).
func (w *watcher) log(line string) {
	if err := appendLog(w.logPath, contracts.FormatTime(w.clock())+" "+contracts.Printable(line)+"\n"); err != nil {
		fmt.Fprintf(w.s.Stderr, "git-liza: alerts log: %s\n", contracts.Printable(err.Error()))
	}
}
