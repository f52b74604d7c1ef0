package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// earlyConflicts reads, from the board's history (git liza show --json),
// the conflicts caught before a review session was spent (a task sent
// back READY_FOR_REVIEW -> INTEGRATION_FAILED) and the review sessions
// spent on work that then did not merge (APPROVED -> INTEGRATION_FAILED
// for a merge conflict): the figure issue 28 wants at 0. It counts as
// contracts.EarlyConflicts does, which the bench does not import.
func earlyConflicts(repo string, env []string) (caught, spent int, err error) {
	out, err := command(repo, env, "git", "liza", "show", "--json").Output()
	if err != nil {
		return 0, 0, fmt.Errorf("show: %v", err)
	}
	type task struct {
		History []struct {
			Event  string `json:"event"`
			From   string `json:"from"`
			Reason string `json:"reason"`
		} `json:"history"`
	}
	var b struct {
		Tasks   []task `json:"tasks"`
		Archive []task `json:"archive"`
	}
	if err := json.Unmarshal(out, &b); err != nil {
		return 0, 0, err
	}
	for _, t := range append(b.Tasks, b.Archive...) {
		for _, e := range t.History {
			switch {
			case e.Event != "integration_failed":
			case e.From == "READY_FOR_REVIEW":
				caught++
			case e.From == "APPROVED" && strings.HasPrefix(e.Reason, "merge conflict"):
				spent++
			}
		}
	}
	return caught, spent, nil
}
