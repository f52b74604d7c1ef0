package commands

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/agent"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/doctor"
	"github.com/liza-dev/git-liza/httpcall"
	"github.com/liza-dev/git-liza/notify"
	"github.com/liza-dev/git-liza/refstore"
)

func (e *Env) notifyCmd() *cli.Command {
	const usage = "usage: git liza notify test"
	return &cli.Command{
		Name:  "notify",
		Usage: "the notifications of the states that need a person (watch and run send them): test sends one of each kind",
		Commands: []*cli.Command{{
			Name:   "test",
			Usage:  "send one made-up event of each kind through every configured channel, and say which channels were not used and why",
			Action: e.action(0, 0, "notify test", func(ctx context.Context, s *session, _ []string) error { return s.notifyTest(ctx) }),
		}},
		Action: func(context.Context, *cli.Command) error { return contracts.Invalidf("%s", usage) },
	}
}

// notifySetup finds the channels this user configured.
func (s *session) notifySetup() notify.Setup {
	return notify.DefaultSetup(s.repo, s.Getenv)
}

// testedChannel is one channel's outcome in notify test --json.
type testedChannel struct {
	Name   string `json:"name"`
	Target string `json:"target,omitempty"`
	Sent   int    `json:"sent"`
	Error  string `json:"error,omitempty"`
}

// notifyTest sends notify.Samples through every channel: one line per
// channel used, one per channel not used, one per repository value
// ignored; exit 1 when a channel failed or none is configured. A channel
// that fails is not tried with the next events: one failure says enough,
// and a receiver that is down would make each of them wait its retries.
func (s *session) notifyTest(ctx context.Context) error {
	setup := s.notifySetup()
	clock, err := s.clock()
	if err != nil {
		return err
	}
	tip, _, _ := s.repo.ReadRef(refstore.StateRef)
	events := notify.Samples(tip.String(), clock())
	var tested []testedChannel
	failed := 0
	for _, c := range setup.Channels {
		t := testedChannel{Name: c.Name(), Target: channelTarget(c)}
		for _, ev := range events {
			if err := c.Send(ctx, ev); err != nil {
				t.Error = fmt.Sprintf("the %s event: %s", ev.Kind, contracts.FirstLine(err.Error()))
				failed++
				break
			}
			t.Sent++
		}
		tested = append(tested, t)
	}
	if s.json {
		if err := s.printJSON(map[string]any{"channels": orEmpty(tested), "unused": orEmpty(setup.Unused), "ignored": orEmpty(setup.Ignored)}); err != nil {
			return err
		}
	} else {
		for _, t := range tested {
			to := ""
			if t.Target != "" {
				to = " to " + t.Target
			}
			if t.Error != "" {
				fmt.Fprintln(s.Stdout, contracts.Printable(fmt.Sprintf("%s: FAILED after %d of %d events%s: %s", t.Name, t.Sent, len(events), to, t.Error)))
				continue
			}
			fmt.Fprintln(s.Stdout, contracts.Printable(fmt.Sprintf("%s: sent %d of %d events%s", t.Name, t.Sent, len(events), to)))
		}
		for _, l := range setup.Unused {
			name, why, _ := strings.Cut(l, ": ")
			fmt.Fprintf(s.Stdout, "%s: not used: %s\n", name, why)
		}
		for _, l := range setup.Ignored {
			fmt.Fprintln(s.Stdout, l)
		}
	}
	switch {
	case len(setup.Channels) == 0:
		return contracts.Invalidf("no notification channel is configured: set %s or %s with git config --global, or install notify-send", notify.KeyURL, notify.KeyCommand)
	case failed > 0:
		return contracts.Invalidf("%d of %d notification channels failed", failed, len(setup.Channels))
	}
	return nil
}

func orEmpty[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

// channelTarget says where a channel sends, for notify test.
func channelTarget(c notify.Channel) string {
	switch c := c.(type) {
	case *notify.Webhook:
		return notify.ShowURL(c.URL)
	case *notify.Command:
		return notify.KeyCommand
	case *notify.Desktop:
		return c.Program
	}
	return ""
}

// newNotifier is the watcher's notifier, nil when no channel is
// configured. Its failures go to report.
func (s *session) newNotifier(report func(string)) *notify.Notifier {
	setup := s.notifySetup()
	if len(setup.Channels) == 0 {
		return nil
	}
	return &notify.Notifier{Channels: setup.Channels, MemoryPath: filepath.Join(s.repo.CommonDir, notify.MemoryFile), Report: report}
}

// sendEvents sends the events of the state just observed: once each.
func (w *watcher) sendEvents(ctx context.Context, st *contracts.State, tip refstore.Hash, now time.Time) {
	if w.notifier == nil || st == nil {
		return
	}
	w.notifier.Notify(ctx, notify.Events(st, tip.String(), now))
}

// startNotifier starts run's watcher: in this process, sending the
// notifications only (the alarms are watch's). The function it returns
// stops it after one last look, so that what stopped the team (a
// supervisor's crash loop) is told too. off (--no-notify), or no channel
// configured, starts nothing.
func (s *session) startNotifier(ctx context.Context, off bool) func() {
	if off {
		return func() {}
	}
	clock, err := s.clock()
	if err != nil {
		return func() {}
	}
	// Its own notices (a fetch that failed in remote mode) go where
	// watch's go.
	logPath := filepath.Join(s.repo.CommonDir, "liza", "alerts.log")
	w := &watcher{s: s, clock: clock, alarmsOff: true, logPath: logPath, activePath: activeFile(logPath)}
	w.notifier = s.newNotifier(func(l string) { fmt.Fprintln(s.Stderr, "git-liza: "+contracts.Printable(l)) })
	if w.notifier == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(defaultWatchInterval)
		defer tick.Stop()
		for {
			_, _ = w.poll(ctx) // a failure is told by watch; run's watcher tries again
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
		last, done := context.WithTimeout(context.Background(), 30*time.Second)
		defer done()
		_, _ = w.poll(last)
	}
}

// notifyCheck is doctor's line on the notifications: the channels that
// will be used, a warning when there is none or when a value of the
// repository's config is ignored. Never a failure: a team runs without.
func notifyCheck(repo *refstore.Repo, getenv func(string) string) doctor.Check {
	c := doctor.Check{Name: "notifications", Level: doctor.OK}
	if repo == nil {
		c.Detail = "not in a repository"
		return c
	}
	setup := notify.DefaultSetup(repo, getenv)
	var names []string
	for _, ch := range setup.Channels {
		names = append(names, ch.Name())
	}
	if len(names) == 0 {
		c.Level, c.Detail = doctor.Warn, "no channel: nobody is told when the team needs a person"
		c.Fix = "git config --global " + notify.KeyURL + " URL, or " + notify.KeyCommand + " CMD; then git liza notify test"
	} else {
		c.Detail = "sent through " + strings.Join(names, ", ")
	}
	if slices.Contains(names, "webhook") {
		if _, err := httpcall.Find(); err != nil {
			c.Level, c.Fix = doctor.Warn, "go install github.com/liza-dev/git-liza/"+httpcall.Program+"@latest"
			c.Detail += "; the webhook posts through " + httpcall.Program + ", which is not installed"
		}
	}
	if len(setup.Ignored) > 0 {
		c.Level = doctor.Warn
		c.Detail += "; " + strings.Join(setup.Ignored, "; ")
	}
	return c
}

// stopReason is what a supervisor that stopped records on the board as
// why (ops.UnregisterRequest.Reason): a crash loop, or any other failure
// of its agent (an environment failure says its fix); nothing for a clean
// stop.
func stopReason(runErr error) string {
	switch {
	case runErr == nil, errors.Is(runErr, agent.ErrStale), errors.Is(runErr, context.Canceled):
		return ""
	default:
		return contracts.FirstLine(runErr.Error())
	}
}
