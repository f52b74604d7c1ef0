package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Tasks that collide (-only collide): a team of scripted agents works a
// board whose tasks each add a line to one of a few shared files, so two
// tasks in flight on the same file conflict. The early checks (at submit,
// and the reviewer supervisor's before a session) send such a task back
// to its coder before a review session is spent on it; the reviewer
// agent records, at the start of each session, whether the commit it is
// given still merges onto the integration tip. Issue 28's goal: no review
// session spent on work that no longer merges.

// collideAgent is the scripted agent of the collide runs; %d is the
// number of shared files. A coder on a fresh task appends the task's id
// to its shared file, commits and submits. A coder on an integration fix
// (its line is on its branch already) merges the task's new base, the
// integration tip the fix was claimed at, into the branch, and resolves a
// conflict as a person would: the base's lines, then its own. A reviewer
// first records whether the commit it reviews merges onto the integration
// branch as it is now (git merge-tree), then approves; it logs both (a
// verdict is refused when the task went back to its coder meanwhile).
const collideAgent = `#!/bin/sh
set -e
here=$(dirname "$0")
case "$LIZA_ROLE" in
coder)
	cd "$LIZA_WORKTREE"
	n=${LIZA_TASK#t-}
	f=shared-$((n %% %d)).txt
	git liza checkpoint "$LIZA_TASK" --intent "add $LIZA_TASK to $f" --validation "grep -x $LIZA_TASK $f" --files "$f" >/dev/null
	if grep -qx "$LIZA_TASK" "$f"; then
		base=$(git liza show --json "$LIZA_TASK" | sed -n 's/^  "base_commit": "\([0-9a-f]*\)",*$/\1/p')
		test -n "$base"
		echo "$LIZA_TASK $base" >> "$here/fixes.log"
		if ! git merge -q --no-edit "$base" >/dev/null 2>&1; then
			git show "$base:$f" > "$f"
			echo "$LIZA_TASK" >> "$f"
			git add "$f"
			git commit -q --no-edit
		fi
	else
		echo "$LIZA_TASK" >> "$f"
		git add "$f"
		git commit -q -m "$LIZA_TASK"
	fi
	git liza submit "$LIZA_TASK" >/dev/null ;;
code-reviewer)
	cd "$LIZA_WORKTREE"
	tip=$(git rev-parse refs/heads/integration)
	set +e
	git merge-tree --write-tree "$tip" "$LIZA_REVIEW_COMMIT" >/dev/null 2>&1
	rc=$?
	set -e
	case $rc in 0) m=merges ;; 1) m=conflicts ;; *) m=error ;; esac
	v=approved
	git liza verdict "$LIZA_TASK" approve >/dev/null || v=refused
	echo "$LIZA_TASK $LIZA_REVIEW_COMMIT $tip $m $v" >> "$here/reviews.log"
	test $v = approved ;;
esac
`

// collideRun is one team's run on the colliding board.
type collideRun struct {
	Team  teamResult `json:"team"`
	Files int        `json:"shared_files"`
	// Merged counts the tasks MERGED at the end: all of them, or the
	// section fails.
	Merged int `json:"merged"`
	// Reviews are the review sessions; Stale those whose commit did not
	// merge onto the integration tip when the session started (the goal:
	// 0); Refused those whose verdict was refused because the task went
	// back to its coder while the session ran.
	Reviews int `json:"review_sessions"`
	Stale   int `json:"stale_review_sessions"`
	Refused int `json:"refused_verdicts"`
	// AtSubmit and BeforeReview are the conflicts caught early (history
	// events integration_failed from READY_FOR_REVIEW, checked at submit
	// and by the reviewer supervisor's screen); AtMerge the tasks that
	// went INTEGRATION_FAILED when merged, after their review.
	AtSubmit     int `json:"sent_back_at_submit"`
	BeforeReview int `json:"sent_back_before_review"`
	AtMerge      int `json:"failed_at_merge"`
	// Fixes are the claims of INTEGRATION_FAILED tasks (integration-fix
	// rounds); FixedTasks the tasks that needed at least one.
	Fixes      int `json:"integration_fixes"`
	FixedTasks int `json:"fixed_tasks"`
	// Crashes are the agent sessions that exited non-zero (a refused
	// verdict, a submit that failed), from the team's log.
	Crashes int `json:"agent_crashes"`
}

// measureCollide runs the section: collideTasks tasks on collideFiles
// shared files, by each team size of collideCoders.
func (b *bench) measureCollide() ([]collideRun, error) {
	var out []collideRun
	for _, coders := range b.opt.collideCoders {
		r, err := b.measureCollideRun(filepath.Join(b.tmp, fmt.Sprintf("collide-%d", coders)), coders)
		if err != nil {
			return out, fmt.Errorf("%d coders: %v", coders, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// measureCollideRun runs one team on the colliding board, then reads the
// board's history and the reviewer's log.
func (b *bench) measureCollideRun(dir string, coders int) (collideRun, error) {
	k, live := b.opt.collideFiles, b.opt.collideTasks
	r := collideRun{Files: k}
	files := map[string]string{}
	for i := range k {
		files[fmt.Sprintf("shared-%d.txt", i)] = fmt.Sprintf("shared file %d: one line per task\n", i)
	}
	setup := teamSetup{test: batchTest, agent: fmt.Sprintf(collideAgent, k), files: files, countBoard: true,
		scope: func(n int) string { return fmt.Sprintf("IN: line t-%d of shared-%d.txt", n, n%k) }}
	progress(fmt.Sprintf("collide: %d tasks on %d shared files", live, k))
	team, err := b.measureTeamWith(dir, coders, live, 0, setup)
	if err != nil {
		return r, err
	}
	r.Team = team
	repo := filepath.Join(dir, "repo")
	out, err := command(repo, b.env, "git", "liza", "show", "--json").Output()
	if err != nil {
		return r, fmt.Errorf("show --json: %v", err)
	}
	var board struct {
		Tasks []struct {
			ID      string `json:"id"`
			Status  string `json:"status"`
			History []struct {
				Event   string `json:"event"`
				From    string `json:"from"`
				To      string `json:"to"`
				Checked string `json:"checked"`
			} `json:"history"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(out, &board); err != nil {
		return r, fmt.Errorf("show --json: %v", err)
	}
	var stuck []string
	for _, t := range board.Tasks {
		if t.Status != "MERGED" {
			stuck = append(stuck, t.ID+" "+t.Status)
			continue
		}
		r.Merged++
		fixed := false
		for _, e := range t.History {
			switch {
			case e.Event == "integration_failed" && e.From == "READY_FOR_REVIEW" && e.Checked == "submit":
				r.AtSubmit++
			case e.Event == "integration_failed" && e.From == "READY_FOR_REVIEW":
				r.BeforeReview++
			case e.Event == "integration_failed":
				r.AtMerge++
			case e.From == "INTEGRATION_FAILED" && e.To == "CLAIMED":
				r.Fixes++
				fixed = true
			}
		}
		if fixed {
			r.FixedTasks++
		}
	}
	if len(stuck) > 0 || r.Merged != live {
		return r, fmt.Errorf("%d of %d tasks MERGED; not merged: %s (see %s)", r.Merged, live, strings.Join(stuck, ", "), dir)
	}
	log, err := os.ReadFile(filepath.Join(dir, "team.log"))
	if err != nil {
		return r, err
	}
	r.Crashes = strings.Count(string(log), " agent crashed (")
	f, err := os.Open(filepath.Join(dir, "reviews.log"))
	if err != nil {
		return r, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 5 {
			return r, fmt.Errorf("reviews.log: bad line %q", sc.Text())
		}
		r.Reviews++
		if fields[4] == "refused" {
			r.Refused++
		}
		switch fields[3] {
		case "merges":
		case "conflicts":
			r.Stale++
		default:
			return r, fmt.Errorf("reviews.log: git merge-tree failed for %s at %s", fields[0], fields[1])
		}
	}
	return r, sc.Err()
}

func printCollide(rs []collideRun) {
	if len(rs) == 0 {
		return
	}
	fmt.Printf("\nTasks that collide: each adds a line to one of %d shared files; a team with 1 reviewer and a 1 s integration test, until every task is merged\n", rs[0].Files)
	fmt.Printf("(stale reviews: review sessions whose commit did not merge onto the integration tip when the session started; the goal is 0)\n")
	fmt.Printf("(refused: verdicts refused because the task went back while its review ran; sent back: conflicts caught at submit and by the reviewer's screen;\n")
	fmt.Printf(" at merge: tasks that failed to merge after their review; fixes: integration-fix claims, over how many tasks; crashes: sessions that exited non-zero)\n")
	fmt.Printf("  %-7s %6s %7s %8s %6s %8s %10s %12s %9s %11s %8s %10s %8s\n", "coders", "tasks", "merged", "reviews", "stale", "refused",
		"at submit", "before rev.", "at merge", "fixes", "crashes", "merged/min", "seconds")
	for _, r := range rs {
		fmt.Printf("  %-7d %6d %7d %8d %6d %8d %10d %12d %9d %11s %8d %10.1f %8.1f\n", r.Team.Coders, r.Team.Live, r.Merged, r.Reviews, r.Stale, r.Refused,
			r.AtSubmit, r.BeforeReview, r.AtMerge, fmt.Sprintf("%d (%d)", r.Fixes, r.FixedTasks), r.Crashes, r.Team.PerMin, r.Team.Seconds)
	}
}
