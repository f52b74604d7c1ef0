package notify

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/liza-dev/git-liza/contracts"
)

// The git config keys of the channels. Both say where git-liza sends the
// board's news or what it runs: they are read only from the user's own
// config (global, system, command line), never from the repository's,
// which an agent can write (refstore's programKeys).
const (
	KeyURL     = "liza.notifyURL"
	KeyCommand = "liza.notifyCommand"
)

// The channels' time bounds.
const (
	DesktopTimeout = 5 * time.Second
	CommandTimeout = 30 * time.Second
	WebhookTimeout = 10 * time.Second
	WebhookTries   = 3
	WebhookBackoff = time.Second
)

// ConfigReader reads git config: Config as git-liza trusts it,
// ConfigAnyScope with the repository's own files counted (refstore.Repo).
type ConfigReader interface {
	Config(key string) (string, bool)
	ConfigAnyScope(key string) (string, bool)
}

// Setup is the channels configured, a line for each channel not used
// saying why ("desktop: notify-send is not on PATH"), and a line for each
// value of the repository's config that is ignored.
type Setup struct {
	Channels []Channel
	Unused   []string
	Ignored  []string
}

// Configure finds the channels: the desktop when notify-send is on PATH
// and there is a session bus or a display; the command and the webhook
// when the user's config names them.
func Configure(cfg ConfigReader, getenv func(string) string, lookPath func(string) (string, error)) Setup {
	var s Setup
	switch prog, err := lookPath("notify-send"); {
	case err != nil:
		s.Unused = append(s.Unused, "desktop: notify-send is not on PATH")
	case !sessionBus(getenv, lookPath):
		s.Unused = append(s.Unused, "desktop: no session bus (DBUS_SESSION_BUS_ADDRESS is unset, no bus socket in XDG_RUNTIME_DIR, no display with dbus-launch)")
	default:
		s.Channels = append(s.Channels, &Desktop{Program: prog, Timeout: DesktopTimeout})
	}
	if line, ok := trusted(cfg, KeyCommand, "command", &s); ok {
		s.Channels = append(s.Channels, &Command{Line: line, Timeout: CommandTimeout})
	}
	if raw, ok := trusted(cfg, KeyURL, "webhook", &s); ok {
		if u, err := url.Parse(raw); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			s.Unused = append(s.Unused, fmt.Sprintf("webhook: %s %q is not an http or https URL", KeyURL, contracts.Printable(raw)))
		} else {
			s.Channels = append(s.Channels, &Webhook{URL: raw, Tries: WebhookTries, Backoff: WebhookBackoff, Timeout: WebhookTimeout})
		}
	}
	return s
}

// sessionBus reports whether notify-send can reach a session bus, where
// it finds one (libnotify 0.8, through GLib): DBUS_SESSION_BUS_ADDRESS;
// else the bus socket in XDG_RUNTIME_DIR; else one dbus-launch starts for
// the X display. Without any, notify-send fails on every event (measured:
// "Failed to execute child process “dbus-launch”"), so the desktop is not
// used.
func sessionBus(getenv func(string) string, lookPath func(string) (string, error)) bool {
	if getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return true
	}
	if dir := getenv("XDG_RUNTIME_DIR"); dir != "" {
		if fi, err := os.Stat(filepath.Join(dir, "bus")); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return true
		}
	}
	if getenv("DISPLAY") != "" {
		_, err := lookPath("dbus-launch")
		return err == nil
	}
	return false
}

// trusted reads key from the user's config; when it is unset there, it
// says why the channel is unused, naming a repository's value it ignores.
func trusted(cfg ConfigReader, key, channel string, s *Setup) (string, bool) {
	v, ok := cfg.Config(key)
	if any, anyOK := cfg.ConfigAnyScope(key); anyOK && (!ok || any != v) {
		s.Ignored = append(s.Ignored, fmt.Sprintf("%s in this repository's config is ignored (an agent can write it): set it with git config --global", key))
		if !ok {
			s.Unused = append(s.Unused, fmt.Sprintf("%s: %s is not set in your own config", channel, key))
			return "", false
		}
	}
	if !ok || v == "" {
		s.Unused = append(s.Unused, fmt.Sprintf("%s: %s is not set", channel, key))
		return "", false
	}
	return v, true
}

// DefaultSetup is Configure with the process's environment and PATH.
func DefaultSetup(cfg ConfigReader, getenv func(string) string) Setup {
	return Configure(cfg, getenv, exec.LookPath)
}

// Notifier sends events once each.
type Notifier struct {
	Channels []Channel
	// MemoryPath is the file of the events sent (MemoryFile under the git
	// common dir).
	MemoryPath string
	// Report is told, in one line each, what failed: a channel that did
	// not deliver, a memory that could not be kept.
	Report func(string)

	// here is what this notifier sent while the memory file could not be
	// written (a full disk, most often: itself an event), until it can be.
	here    *Memory
	unsaved string // what kept the file from being written, said once
}

// Notify sends each event it was not sent before through every channel,
// and returns those it sent. An event counts as sent once it went
// through the channels, delivered or not: a receiver that is down is told
// in one line, not retried on every look (at most once, never twice). The memory is read afresh and written
// before the sending, under a lock, so that a second watcher of the same
// repository (run's, and a watch) sends nothing the first one took. A
// memory that cannot be written (its disk full) is kept in this process
// until it can be, and said once: each event is then sent once by this
// watcher, and perhaps once more by another watcher of the repository,
// where sending nothing would leave a full disk untold. With no channel,
// nothing is sent nor remembered: the events wait for a channel.
func (n *Notifier) Notify(ctx context.Context, events []Event) []Event {
	if len(n.Channels) == 0 || len(events) == 0 {
		return nil
	}
	todo, err := n.take(events)
	switch {
	case err != nil && n.unsaved == "":
		n.unsaved = firstLine(err.Error())
		n.Report("notify: remembering what was sent: " + n.unsaved + " (each event is sent once by this watcher until it can)")
	case err == nil:
		n.unsaved = ""
	}
	if len(todo) == 0 {
		return nil
	}
	// A channel that fails is not tried with the next events of this look:
	// a receiver that is down, or a desktop without a notification
	// server, is said once, with how many events it missed.
	failed := make([]string, len(n.Channels))
	missed := make([]int, len(n.Channels))
	for _, e := range todo {
		for i, c := range n.Channels {
			if failed[i] != "" {
				missed[i]++
				continue
			}
			if err := c.Send(ctx, e); err != nil {
				failed[i] = fmt.Sprintf("notify: %s: %s: %s", c.Name(), e.ID, firstLine(err.Error()))
			}
		}
	}
	for i, line := range failed {
		if line == "" {
			continue
		}
		if missed[i] > 0 {
			line += fmt.Sprintf(" (and %d more events not sent through it)", missed[i])
		}
		n.Report(line)
	}
	return todo
}

// take returns the events not sent yet and remembers them as sent: in
// the memory file, under its lock, and in this process when the file
// cannot be kept (the error says why).
func (n *Notifier) take(events []Event) ([]Event, error) {
	if n.here == nil {
		n.here = &Memory{set: map[string]bool{}}
	}
	fresh := func(mem *Memory) []Event {
		var todo []Event
		for _, e := range events {
			if !mem.Sent(e.ID) && !n.here.Sent(e.ID) {
				mem.Add(e.ID)
				todo = append(todo, e)
			}
		}
		return todo
	}
	keepHere := func(todo []Event, err error) ([]Event, error) {
		for _, e := range todo {
			n.here.Add(e.ID)
		}
		return todo, err
	}
	unlock, err := lockMemory(n.MemoryPath)
	if err != nil {
		return keepHere(fresh(&Memory{set: map[string]bool{}}), err)
	}
	defer unlock()
	mem, err := LoadMemory(n.MemoryPath)
	if err != nil {
		return keepHere(fresh(&Memory{set: map[string]bool{}}), err)
	}
	todo := fresh(mem)
	if len(todo) == 0 && len(n.here.ids) == 0 {
		return nil, nil
	}
	for _, id := range n.here.ids {
		mem.Add(id)
	}
	if err := mem.Save(); err != nil {
		return keepHere(todo, err)
	}
	n.here = nil // the file holds it all
	return todo, nil
}

// Samples is one event of each kind, as `git liza notify test` sends
// them: made up, and marked so.
func Samples(commit string, now time.Time) []Event {
	at := contracts.FormatTime(now)
	mk := func(kind, task, agent, title, body, action string) Event {
		return Event{ID: "test/" + kind + "@" + at, Kind: kind, Task: task, Agent: agent,
			Title: "[test] " + title, Body: body + "\n(a test of git liza notify: nothing happened)", Action: action, Commit: commit, Time: at}
	}
	return []Event{
		mk(KindBlocked, "t1", "", "t1 is BLOCKED: the spec does not say which codes to retry",
			"Reason: the spec does not say which codes to retry\nQuestion: Which status codes?", "git liza task unblock t1  (or: git liza note --for t1 MESSAGE)"),
		mk(KindIntegrationFailed, "t2", "", "t2 failed to integrate: merge conflict in shared.txt",
			"Reason: merge conflict in shared.txt\nIts coder coder-1 has no supervisor running.", "git liza agent coder  (or: git liza task block t2 --reason TEXT)"),
		mk(KindReviewWaiting, "t3", "", "t3 waits for a reviewer since "+at, "No reviewer took it within the lease.", "git liza agent code-reviewer"),
		mk(KindBreakerTriggered, "", "", "circuit breaker TRIGGERED (SPEC_FLAW): the team is in CHECKPOINT", "The report: git liza analyze", "git liza analyze --resolve TEXT"),
		mk(KindCheckpoint, "", "", "sprint checkpoint: the summary is ready", "The summary: .liza/sprint_summary.md", "git liza resume"),
		mk(KindPaused, "", "", "the team is PAUSED (by human)", "Since "+at, "git liza resume"),
		mk(KindAborted, "", "", "the team is ABORTED (by human)", "Since "+at, "git liza resume"),
		mk(KindSupervisorStopped, "", "coder-1", "the supervisor of coder-1 stopped: crash loop", "Reason: crash loop: 3 crashes in 10m0s", "git liza doctor, then git liza agent coder"),
		mk(KindRemoteUnreachable, "", "", "the remote origin has not answered for 6m0s",
			"Last fetched at "+at+". The last failure: git fetch failed: fatal: unable to connect to hub.example.com", "check the server of origin: git ls-remote origin"),
		mk(KindRemoteUnstored, "", "", "the remote origin has stored nothing for 3m0s",
			"Since "+at+" it refuses every push it is sent: fatal: unable to write loose object file: No space left on device", "make room on the server of origin (df; git gc there)"),
		mk(KindDiskFull, "", "", "the disk of /srv/proj has been full for 3m0s", "0 KiB and 1200 files left", "make room on the disk of /srv/proj (df /srv/proj)"),
		mk(KindGoalCompleted, "", "", "goal goal-1 COMPLETED", "Completed at "+at, "git liza sprint metrics"),
	}
}

// Whole names the tasks a lean state must hold whole for Events: those
// waiting for review (the alarms already ask for the blocked and the
// failed).
func Whole(s *contracts.TaskSummary) bool { return s.Status == contracts.ReadyForReview }
