package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const (
	trustTasks  = 100 // tasks on the hubs of the trust timings
	pushCommits = 10  // state commits in each timed push
)

// trustResult is what the guard and signing cost.
type trustResult struct {
	Tasks   int `json:"tasks"`
	Commits int `json:"commits_per_push"`
	// Push is `git push` of pushCommits state commits to a plain bare
	// repository, a guarded one (hooks install --server), and a guarded
	// one that takes only signed commits (liza.allowedSigners).
	PlainPush  stats `json:"plain_push"`
	GuardPush  stats `json:"guarded_push"`
	SignedPush stats `json:"signed_push"`
	// PerCommit is what the guard adds to a push, per commit, in ms; and
	// with signatures to verify.
	PerCommit       float64 `json:"guard_ms_per_commit"`
	PerSignedCommit float64 `json:"signed_guard_ms_per_commit"`
	// Add is `git liza task add` unsigned and signed (gpg.format=ssh).
	Add       stats   `json:"add"`
	SignedAdd stats   `json:"signed_add"`
	SignCost  float64 `json:"sign_ms_per_operation"`
}

// measureTrust times what the server's guard costs per pushed commit, and
// what signing costs per operation. Three hubs hold the same state: plain,
// guarded, and guarded taking only signed commits; a clone of each makes
// pushCommits operations offline (untimed) and pushes them (timed), one
// push per run, interleaved. Then one add with signing off and one with
// signing on (an ed25519 key file, ssh-keygen -Y sign), interleaved.
func (b *bench) measureTrust() (trustResult, error) {
	r := trustResult{Tasks: trustTasks, Commits: pushCommits}
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		return r, fmt.Errorf("ssh-keygen not found: %v", err)
	}
	progress("trust: setting up plain, guarded and signed hubs")
	dir := filepath.Join(b.tmp, "trust")
	seed, err := b.seedFile(dir, trustTasks)
	if err != nil {
		return r, err
	}
	key := filepath.Join(dir, "key")
	if _, err := output(dir, b.env, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "bench", "-f", key); err != nil {
		return r, err
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		return r, err
	}
	fields := strings.Fields(string(pub))
	signers := filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(signers, []byte("human,planner-* namespaces=\"git\" "+fields[0]+" "+fields[1]+"\n"), 0o644); err != nil {
		return r, err
	}
	signing := []string{"gpg.format=ssh", "user.signingKey=" + key, "commit.gpgSign=true"}
	var clones []string
	for i, hubSetup := range [][][]string{
		nil,
		{{"liza", "hooks", "install", "--server"}},
		{{"liza", "hooks", "install", "--server"}, {"config", "liza.allowedSigners", signers}},
	} {
		hub, err := b.newHub(filepath.Join(dir, fmt.Sprintf("hub-%d", i)), seed)
		if err != nil {
			return r, err
		}
		for _, args := range hubSetup {
			if _, err := output(hub, b.env, "git", args...); err != nil {
				return r, err
			}
		}
		clone := filepath.Join(dir, fmt.Sprintf("clone-%d", i))
		var config []string
		if i == 2 {
			config = signing
		}
		if err := b.clone("file://"+hub, clone, config...); err != nil {
			return r, err
		}
		if _, err := output(clone, b.env, "git", "liza", "sync", "origin"); err != nil {
			return r, err
		}
		clones = append(clones, clone)
	}
	progress(fmt.Sprintf("trust: timing %d+%d pushes of %d commits to each hub", warmups, b.opt.runs, pushCommits))
	push := func(clone string) func(id string) *exec.Cmd {
		return func(id string) *exec.Cmd {
			// The operations are made here, untimed; the command timed is
			// the push alone.
			for i := 0; i < pushCommits; i++ {
				if _, err := output(clone, b.env, "git", append([]string{"liza", "--offline"}, addArgs(fmt.Sprintf("%s-%d", id, i))...)...); err != nil {
					fatal(err)
				}
			}
			return command(clone, b.env, "git", "push", "-q", "origin", "refs/liza/state")
		}
	}
	samples, err := b.interleave([]func(id string) *exec.Cmd{push(clones[0]), push(clones[1]), push(clones[2])})
	if err != nil {
		return r, err
	}
	r.PlainPush, r.GuardPush, r.SignedPush = summarize(samples[0]), summarize(samples[1]), summarize(samples[2])
	r.PerCommit = (r.GuardPush.Median - r.PlainPush.Median) / pushCommits
	r.PerSignedCommit = (r.SignedPush.Median - r.PlainPush.Median) / pushCommits

	progress("trust: timing unsigned and signed adds")
	plain, signed := filepath.Join(dir, "add-plain"), filepath.Join(dir, "add-signed")
	for _, repo := range []string{plain, signed} {
		if err := b.newRepo(repo, seed); err != nil {
			return r, err
		}
	}
	for _, c := range signing {
		k, v, _ := strings.Cut(c, "=")
		if _, err := output(signed, b.env, "git", "config", k, v); err != nil {
			return r, err
		}
	}
	add := func(repo string) func(id string) *exec.Cmd {
		return func(id string) *exec.Cmd {
			return command(repo, b.env, "git", append([]string{"liza"}, addArgs(id)...)...)
		}
	}
	samples, err = b.interleave([]func(id string) *exec.Cmd{add(plain), add(signed)})
	if err != nil {
		return r, err
	}
	r.Add, r.SignedAdd = summarize(samples[0]), summarize(samples[1])
	r.SignCost = r.SignedAdd.Median - r.Add.Median
	return r, nil
}

// printTrust prints the trust timings.
func printTrust(t *trustResult) {
	fmt.Printf("\nthe guard (%d tasks): git push of %d state commits, median (p90) ms\n", t.Tasks, t.Commits)
	fmt.Printf("plain %s  guarded %s  guarded+signed %s\n", ms(t.PlainPush), ms(t.GuardPush), ms(t.SignedPush))
	fmt.Printf("the guard costs %.1f ms per pushed commit; with signatures to verify, %.1f ms\n", t.PerCommit, t.PerSignedCommit)
	fmt.Printf("signing: git liza task add %s unsigned, %s signed: %.1f ms per operation\n", ms(t.Add), ms(t.SignedAdd), t.SignCost)
}
