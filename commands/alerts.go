package commands

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/liza-dev/git-liza/atomicfile"
	"github.com/liza-dev/git-liza/contracts"
)

// activeFile is where the alarms that are on are kept for the log at
// path: beside it, alerts.log → alerts.active.json.
func activeFile(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".active.json"
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
	return atomicfile.Write(path, append(data, '\n'), 0o644)
}
