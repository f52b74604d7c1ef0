package contracts

import (
	"os"
	"path/filepath"
	"slices"
	"time"
)

// The modes of the kill switches. A Control with no mode is RUNNING.
const (
	ModeRunning    = "RUNNING"
	ModePaused     = "PAUSED"
	ModeCheckpoint = "CHECKPOINT"
	ModeAborted    = "ABORTED"
)

// Modes lists the values Control.Mode may take.
var Modes = []string{ModeRunning, ModePaused, ModeCheckpoint, ModeAborted}

// SwitchFiles are the seed's kill-switch files, relative to the project
// root, and the mode each one sets. They are honoured alongside the
// control section of the state: the state reaches every clone through the
// remote, a file only the checkout it is in.
var SwitchFiles = map[string]string{
	".liza/ABORT":      ModeAborted,
	".liza/PAUSE":      ModePaused,
	".liza/CHECKPOINT": ModeCheckpoint,
}

// Switch is one kill switch that is on.
type Switch struct {
	Mode   string    `json:"mode"`   // ModePaused, ModeCheckpoint or ModeAborted
	Source string    `json:"source"` // "state", or the file such as ".liza/PAUSE"
	Since  time.Time `json:"since"`  // zero when unknown
	By     string    `json:"by,omitempty"`
	Reason string    `json:"reason,omitempty"`
}

// modeRank orders the modes by priority: ABORT > PAUSE > CHECKPOINT >
// normal operation (seed 000's kill-switch priority, with the checkpoint,
// which also halts the team, below a pause).
func modeRank(mode string) int {
	switch mode {
	case ModeAborted:
		return 3
	case ModePaused:
		return 2
	case ModeCheckpoint:
		return 1
	}
	return 0
}

// ActiveSwitches lists the kill switches that are on: the state's control
// mode and the switch files present (files maps a path of SwitchFiles to
// its modification time). Highest priority first.
func ActiveSwitches(ctrl *Control, files map[string]time.Time) []Switch {
	var out []Switch
	if ctrl != nil && modeRank(ctrl.Mode) > 0 {
		since, _ := ParseTime(ctrl.Since)
		out = append(out, Switch{Mode: ctrl.Mode, Source: "state", Since: since, By: ctrl.By, Reason: ctrl.Reason})
	}
	for path, at := range files {
		if mode, ok := SwitchFiles[path]; ok {
			out = append(out, Switch{Mode: mode, Source: path, Since: at.UTC()})
		}
	}
	slices.SortStableFunc(out, func(a, b Switch) int {
		if d := modeRank(b.Mode) - modeRank(a.Mode); d != 0 {
			return d
		}
		if a.Source == "state" {
			return -1
		}
		if b.Source == "state" {
			return 1
		}
		return 0
	})
	return out
}

// EffectiveMode is the mode the team runs in given the switches that are
// on: the one with the highest priority, or RUNNING.
func EffectiveMode(switches []Switch) string {
	mode := ModeRunning
	for _, s := range switches {
		if modeRank(s.Mode) > modeRank(mode) {
			mode = s.Mode
		}
	}
	return mode
}

// StatSwitchFiles reports which kill-switch files exist under the project
// root, with their modification times.
func StatSwitchFiles(root string) map[string]time.Time {
	out := map[string]time.Time{}
	for path := range SwitchFiles {
		if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(path))); err == nil {
			out[path] = fi.ModTime()
		}
	}
	return out
}
