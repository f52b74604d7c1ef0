package refstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/contracts"
)

// TrackingRef is where the last known value of a remote's ref is kept:
// refs/liza/remotes/<remote>/state for refs/liza/state, and
// refs/liza/remotes/<remote>/heads/<branch> for a branch. Keeping them
// apart from refs/remotes leaves git's own remote-tracking branches alone.
func TrackingRef(remote, ref string) string {
	if rest, ok := strings.CutPrefix(ref, "refs/liza/"); ok {
		return "refs/liza/remotes/" + remote + "/" + rest
	}
	return "refs/liza/remotes/" + remote + "/" + strings.TrimPrefix(ref, "refs/")
}

// ErrUnreachable wraps a failure to talk to a remote at all: it could not
// be reached, it refused the credentials, or it refused access.
type ErrUnreachable struct {
	Remote string
	Err    error
	Why    RemoteFailure
	Write  bool   // the failure was a push
	detail string // git's telling line, when Err is a GitError
	// unsure: a push stopped before the remote answered, which may have
	// landed (MayHaveLanded).
	unsure bool
}

// MayHaveLanded reports whether err is a push stopped before the remote
// answered (out of liza.remoteTimeout, or interrupted): the remote may
// have applied it, and what the push stood for may count there.
func MayHaveLanded(err error) bool {
	var u *ErrUnreachable
	if errors.As(err, &u) && u.unsure {
		return true
	}
	var st *ErrStopped
	return errors.As(err, &st) && st.Cmd == "push"
}

// RemoteFailure says why a remote could not be used.
type RemoteFailure int

// The kinds of RemoteFailure.
const (
	// Unreachable: no answer (network, name, port, no such repository).
	Unreachable RemoteFailure = iota
	// AuthFailed: the remote asked who we are and refused the answer, or
	// there was no answer to give (no credentials, prompts disabled).
	AuthFailed
	// Forbidden: the remote knows who we are (or lets anyone in) and does
	// not allow this: HTTP 403, a read-only remote.
	Forbidden
)

// RemoteDown reports whether err is a remote that does not answer: no
// connection, no repository at its address, no answer within
// liza.remoteTimeout. Refused credentials or access are not: they last
// until a person acts.
func RemoteDown(err error) bool {
	var u *ErrUnreachable
	return errors.As(err, &u) && u.Why == Unreachable
}

// Reason is what went wrong, without the advice: git's telling line, or
// the error.
func (e *ErrUnreachable) Reason() string {
	if e.detail != "" {
		return e.detail
	}
	return fmt.Sprint(e.Err)
}

func (e *ErrUnreachable) Error() string {
	why := e.Reason()
	switch {
	case e.Why == AuthFailed:
		return fmt.Sprintf("remote %s refused the credentials (%v): check the ones git uses for it (a password or token in the credential helper or the URL, ssh-add for ssh), then try again; --offline commits locally meanwhile", e.Remote, why)
	case e.Why == Forbidden && e.Write:
		return fmt.Sprintf("remote %s does not let you write to it (%v): you may read its blackboard but not change it; ask for write access, or set liza.remote to a remote you can push to", e.Remote, why)
	case e.Why == Forbidden:
		return fmt.Sprintf("remote %s does not let you read it (%v): ask for access to it", e.Remote, why)
	}
	return fmt.Sprintf("remote %s is unreachable (%v); pass --offline to commit locally and `git liza sync` later", e.Remote, why)
}

// remoteError classifies a failed fetch or push by what git said.
func remoteError(remote string, err error, write bool) error {
	var told *ErrUnreachable
	if errors.As(err, &told) {
		return told // remoteGit's: the remote did not answer in time
	}
	var stopped *ErrStopped
	if errors.As(err, &stopped) {
		return stopped // remoteGit's: interrupted
	}
	e := &ErrUnreachable{Remote: remote, Err: err, Write: write}
	var ge *GitError
	if !errors.As(err, &ge) {
		return e
	}
	if ge.ExitCode < 0 && strings.HasPrefix(ge.Stderr, "signal: ") {
		// git killed here (an out-of-memory kill, a stray kill -9): the
		// remote has nothing to do with it, and --offline is no answer.
		return err
	}
	for _, line := range strings.Split(ge.Stderr, "\n") {
		if strings.HasPrefix(line, "fatal: ") && len(ge.Args) > 0 {
			e.detail = "git " + ge.Args[0] + " failed: " + strings.TrimSpace(line)
		}
	}
	msg := strings.ToLower(ge.Stderr)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(msg, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("authentication failed", "could not read username", "could not read password", "terminal prompts disabled",
		"access denied", "returned error: 401", "permission denied (publickey", "invalid username or password", "bad credentials"):
		e.Why = AuthFailed
	case has("returned error: 403", "permission to ", "denied to ", "not allowed", "read-only", "read only",
		"insufficient permission", "permission denied", "forbidden"):
		e.Why = Forbidden
	}
	return e
}

func (e *ErrUnreachable) Unwrap() error { return e.Err }

// ErrRejected is a push the remote refused for a reason other than a lost
// race: its hooks declined it, it is not allowed, or the remote could not
// store it.
type ErrRejected struct {
	Remote string
	Ref    string
	Reason string
	// Unstored: the remote's git took the push but could not store it
	// (its report: the objects not unpacked or not moved into the
	// repository, the refs' transaction failed), as when its disk is
	// full. That alone does not tell the remote from the push: a pack
	// over the remote's size limit fails the same way (see RemoteUnstored).
	Unstored bool
}

// RemoteUnstored reports whether err is a push the remote took but could
// not store (ErrRejected.Unstored): perhaps its disk is full, perhaps the
// push was too big for it. Only another push, small, tells which.
func RemoteUnstored(err error) bool {
	var r *ErrRejected
	return errors.As(err, &r) && r.Unstored
}

// unstored reports whether a push's summary ("[remote rejected]
// (<reason>)") is receive-pack's for a push it could not store: the
// reasons its git gives when unpacking, moving the objects out of
// quarantine, or committing the refs' transaction fails. A hook's refusal
// or a rule of the remote's config never reads so.
func unstored(summary string) bool {
	for _, m := range []string{"(unpacker error)", "(unable to migrate objects to permanent storage)",
		"(atomic transaction failed)", "(transaction failed to start)", "(failed to update refs)", "(failed to delete)"} {
		if strings.HasSuffix(summary, m) {
			return true
		}
	}
	return false
}

func (e *ErrRejected) Error() string {
	if e.Unstored {
		return fmt.Sprintf("remote %s could not store the push of %s: %s (is its disk full?)", e.Remote, e.Ref, e.Reason)
	}
	msg := fmt.Sprintf("remote %s refused %s: %s", e.Remote, e.Ref, e.Reason)
	if strings.Contains(e.Reason, "newer than this git-liza knows") {
		// The guard's own words ("upgrade git-liza") are about the
		// git-liza its hook runs, not this one.
		msg += fmt.Sprintf(" (the remote's guard, hooks/pre-receive, runs an older git-liza than this one: upgrade git-liza where %s is served; nothing was pushed)", e.Remote)
	}
	return msg
}

// Fetch fetches refs from a remote into their tracking refs (see
// TrackingRef), forcing them to whatever the remote has, and returns the
// remote's values. A ref the remote lacks is missing from the result and
// removed from tracking. A ref ending in "/*" is a pattern: the refs under
// it are fetched the same way (pruned when the remote no longer has them)
// and read with RefsUnder.
func (r *Repo) Fetch(ctx context.Context, remote string, refs ...string) (map[string]Hash, error) {
	if t, ok := r.daemonRemote(remote); ok && allState(refs) && !r.promisor() {
		// The board's own refs, from a git daemon named by its address,
		// are fetched here (daemonfetch.go); code is git's to fetch.
		if got, err := r.fetchDaemon(ctx, t, remote, refs); err == nil {
			return got, nil
		}
		// git fetches, and says what went wrong as git would.
	}
	// --no-auto-maintenance: a fetch inside a compare-and-swap attempt must
	// not stop to gc the repository.
	args := []string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-auto-maintenance", r.PackProgram(remote, false)}
	if r.promisor() && allState(refs) {
		// The blackboard's files are small and every command reads them:
		// a partial clone fetches them whole, whatever its filter.
		args = append(args, "--no-filter")
	}
	for _, ref := range refs {
		if strings.HasSuffix(ref, "/*") {
			// A pattern's tracking refs follow the remote: those it no
			// longer has go.
			args = append(args, "--prune")
			break
		}
	}
	args = append(args, "--", remote)
	for _, ref := range refs {
		args = append(args, "+"+ref+":"+TrackingRef(remote, ref))
	}
	var err error
	var ge *GitError
	// Two fetches in one clone race on the tracking ref's lock, and a fetch
	// that walks the worktrees' HEADs can meet one a claim is creating
	// ("bad object worktrees/ID/HEAD"); both pass, so fetch again.
	// A lock left by a killed git is waited for and removed once stale.
	began := time.Now()
	for try := 0; ; try++ {
		_, err = r.remoteGit(ctx, remote, !allState(refs), nil, args...)
		if err == nil || !errors.As(err, &ge) {
			break
		}
		if _, locked := LockIn(ge.Stderr); locked {
			again, lerr := r.waitLock(ctx, err, ge.Stderr, began)
			if !again {
				return nil, lerr
			}
			continue
		}
		if try == 20 || !(lostRace(ge.Stderr) || strings.Contains(ge.Stderr, "worktrees/")) {
			break
		}
		time.Sleep(time.Duration(2+rand.IntN(5*(try+1))) * time.Millisecond)
	}
	if errors.As(err, &ge) && strings.Contains(ge.Stderr, "couldn't find remote ref") {
		return r.fetchSome(ctx, remote, refs, err)
	}
	if err != nil {
		return nil, remoteError(remote, err, false)
	}
	// A fetch of many objects keeps them as a pack: list the packs again
	// at the next read or write.
	r.odb.rescanPacks()
	got := map[string]Hash{}
	for _, ref := range refs {
		if strings.HasSuffix(ref, "/*") {
			continue // see RefsUnder
		}
		if h, ok, err := r.ReadRef(TrackingRef(remote, ref)); err != nil {
			return nil, err
		} else if ok {
			got[ref] = h
		}
	}
	return got, nil
}

// allState reports whether every ref is one of the blackboard's own.
func allState(refs []string) bool {
	for _, ref := range refs {
		if !strings.HasPrefix(ref, "refs/liza/") {
			return false
		}
	}
	return len(refs) > 0
}

// fetchSome is Fetch after git said (err, a GitError) that the remote
// lacks one of refs (a task's branch before its first push): that ref's
// tracking ref goes, and the others are fetched without it. Nothing else is asked of the remote:
// a listing of its refs, as this once made, is all of them, and a forge
// has a ref per pull request, tens of thousands on a busy project. A
// pattern (refs/liza/queue/*) is fetched only beside a ref that is there.
func (r *Repo) fetchSome(ctx context.Context, remote string, refs []string, err error) (map[string]Hash, error) {
	var failed *GitError
	errors.As(err, &failed)
	_, rest, _ := strings.Cut(failed.Stderr, "couldn't find remote ref ")
	missing, _, _ := strings.Cut(rest, "\n")
	missing = strings.TrimSpace(missing)
	if !slices.Contains(refs, missing) {
		return nil, remoteError(remote, err, false)
	}
	if old, ok, _ := r.ReadRef(TrackingRef(remote, missing)); ok {
		drop := RefUpdate{Name: TrackingRef(remote, missing), Old: old}
		if err := r.UpdateRefs(ctx, "liza: "+remote+" has no such ref", drop); err != nil && !errors.Is(err, ErrStale) {
			return nil, err
		}
	}
	others := slices.DeleteFunc(slices.Clone(refs), func(ref string) bool { return ref == missing })
	if !slices.ContainsFunc(others, func(ref string) bool { return !strings.HasSuffix(ref, "/*") }) {
		return map[string]Hash{}, nil
	}
	return r.Fetch(ctx, remote, others...)
}

// Push moves refs on a remote, atomically: each update names the value the
// remote must still have (zero: the ref must not exist) and the value to
// set. A remote that moved any of them returns ErrStale and nothing moves.
func (r *Repo) Push(ctx context.Context, remote string, updates ...RefUpdate) error {
	if err := flushAllHeld(); err != nil {
		return err
	}
	args := []string{"push", "--quiet", "--atomic", "--porcelain", r.PackProgram(remote, true)}
	for _, u := range updates {
		old := ""
		if !u.Old.IsZero() {
			old = u.Old.String()
		}
		args = append(args, "--force-with-lease="+u.Name+":"+old)
	}
	args = append(args, "--", remote)
	for _, u := range updates {
		if u.New.IsZero() {
			args = append(args, ":"+u.Name)
		} else {
			args = append(args, u.New.String()+":"+u.Name)
		}
	}
	code := false
	for _, u := range updates {
		code = code || !strings.HasPrefix(u.Name, "refs/liza/")
	}
	out, err := r.remoteGit(ctx, remote, code, nil, args...)
	if err == nil {
		return nil
	}
	var ge *GitError
	if !errors.As(err, &ge) {
		return err
	}
	report := string(out) + "\n" + ge.Stderr
	for _, line := range strings.Split(string(out), "\n") {
		// --porcelain: "<flag>\t<from>:<to>\t<summary> (<reason>)"
		f := strings.Split(line, "\t")
		if len(f) < 3 || f[0] != "!" || strings.Contains(f[2], "atomic push failed") {
			continue
		}
		_, to, _ := strings.Cut(f[1], ":")
		if strings.Contains(f[2], "hook declined") {
			return &ErrRejected{Remote: remote, Ref: to, Reason: remoteReason(ge.Stderr, f[2])}
		}
		if lostRace(f[2]) || lostRace(ge.Stderr) {
			return r.lockedRef(err, ge.Stderr)
		}
		return &ErrRejected{Remote: remote, Ref: to, Reason: remoteReason(ge.Stderr, f[2]), Unstored: unstored(f[2])}
	}
	if strings.Contains(report, "atomic push failed") || lostRace(report) {
		return r.lockedRef(err, ge.Stderr)
	}
	return remoteError(remote, err, true)
}

// lostRace recognises a push refused because a ref was not where we said
// it was, on our side (stale lease) or the remote's (its lock or old-value
// check).
func lostRace(s string) bool {
	for _, m := range []string{"stale info", "fetch first", "non-fast-forward", "cannot lock ref",
		"incorrect old value", "but expected", "failed to update ref", "failed to lock"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// remoteReason picks what the remote's hooks said ("remote: ..." lines),
// else the push summary.
func remoteReason(stderr, summary string) string {
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if rest, ok := strings.CutPrefix(l, "remote: "); ok && strings.TrimSpace(rest) != "" {
			lines = append(lines, strings.TrimSpace(rest))
		}
	}
	if len(lines) > 0 {
		return strings.Join(lines, "; ")
	}
	return summary
}

// RemoteHas reports whether remote has ref, asking it with git ls-remote:
// a question worth a network round trip only where the answer changes
// what to do (a missing blackboard, a new one). It never prompts for
// credentials; a remote that cannot answer within a few seconds, or at
// all, counts as not having it.
func (r *Repo) RemoteHas(ctx context.Context, remote, ref string) bool {
	if h, ok, err := r.ReadRef(TrackingRef(remote, ref)); err == nil && ok && !h.IsZero() {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "ls-remote", "--exit-code", r.PackProgram(remote, false), "--", remote, ref)
	cmd.Dir = r.Dir()
	cmd.Env = inEnglish(ContainEnv(append(os.Environ(), "GIT_TERMINAL_PROMPT=0")))
	return cmd.Run() == nil
}

// Remotes lists the repository's remotes.
func (r *Repo) Remotes(ctx context.Context) []string {
	out, err := r.Git(ctx, "remote")
	if err != nil {
		return nil
	}
	return strings.Fields(string(out))
}

// RemoteOf returns the remote configured for the blackboard (git config
// liza.remote), or "".
func (r *Repo) RemoteOf() string {
	v, _ := r.Config("liza.remote")
	return v
}

// CheckRemote verifies that a remote is configured.
func (r *Repo) CheckRemote(name string) error {
	if name == "" {
		return contracts.Invalidf("no remote named")
	}
	if strings.HasPrefix(name, "-") {
		return contracts.Invalidf("invalid remote name %q", name)
	}
	if _, ok := r.Config("remote." + name + ".url"); !ok {
		return contracts.Invalidf("no remote %q: add it with git remote add", name)
	}
	return nil
}

// ListRemote asks remote which values its refs named by patterns hold
// (git ls-remote; a pattern may end in "/*"), without fetching anything:
// one round trip, and no object moves. Names that are not refs git-liza
// could hold are left out.
func (r *Repo) ListRemote(ctx context.Context, remote string, patterns ...string) (map[string]Hash, error) {
	if t, ok := r.daemonRemote(remote); ok {
		if got, err := listDaemon(ctx, t, r.algo, patterns); err == nil {
			return got, nil
		}
		// git asks again, and says what went wrong as git would.
	}
	args := append([]string{"ls-remote", r.PackProgram(remote, false), "--", remote}, patterns...)
	out, err := r.remoteGit(ctx, remote, false, nil, args...)
	if err != nil {
		return nil, remoteError(remote, err, false)
	}
	got := map[string]Hash{}
	for _, line := range strings.Split(string(out), "\n") {
		id, name, ok := strings.Cut(line, "\t")
		if !ok || !validRefPath(name) {
			continue
		}
		if h, ok := ParseHash(id); ok {
			got[name] = h
		}
	}
	return got, nil
}
