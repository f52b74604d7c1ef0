package commands

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/proc"
	"github.com/liza-dev/git-liza/refstore"
)

// register registers id for this process. A registration still held by a
// supervisor of this machine that ended without unregistering (killed
// outright: SIGKILL, an out-of-memory kill), which its note names (see
// supervisorNote), is taken over at once (ops.RegisterRequest.ReplaceGone)
// rather than refused until its lease runs out: the next git liza run, or
// run starting a supervisor again, resumes the agent's work. A supervisor
// that runs, or one of another machine, still holds its id.
//
// This process notes itself before it registers, so that wherever it is
// killed once registered, its note is there. The note stays while the
// board may name this process: until a refusal, an unregistration or a
// successor's registration (forgetSupervisor removes it then); a note left
// by a process that has ended is removed by the next registration of the
// id here.
func (e *Env) register(ctx context.Context, s *session, id string, replace bool) (*ops.Registration, error) {
	gone, notes := goneSupervisors(s.repo, id)
	noteSupervisor(s.repo, id)
	// The board takes ReplaceGone into account only where a live lease
	// of that very host string holds the id: each gone supervisor of this
	// machine is offered in turn (there is one, unless a supervisor was
	// killed before it registered, or an older git-liza's note is left).
	var reg *ops.Registration
	var err error
	for i := 0; ; i++ {
		r := ops.RegisterRequest{Replace: replace}
		if i < len(gone) {
			r.ReplaceGone = gone[i]
		}
		reg, err = s.ops.As(id, 0).Register(ctx, r)
		if err == nil || i+1 >= len(gone) || !strings.Contains(err.Error(), "already supervised") {
			break
		}
	}
	if err != nil {
		// A refusal wrote nothing. Any other failure (interrupted, a push
		// whose answer was lost) may have registered this process on the
		// remote: its note stays, for the next registration to find.
		if ops.Class(err) == contracts.CodeInvalid {
			forgetSupervisor(s.repo, id)
		}
		return nil, err
	}
	for _, n := range notes {
		_ = os.Remove(n)
	}
	return reg, nil
}

// supervisorNote is where a supervisor of this machine notes its process
// (proc.Owner) as id's: .git/liza/supervisors/ID.PID. Each process writes
// its own; an older git-liza wrote .git/liza/supervisors/ID once it had
// registered, and a supervisor killed in between left no note.
func supervisorNote(repo *refstore.Repo, id string, pid int) string {
	return filepath.Join(repo.CommonDir, "liza", "supervisors", fmt.Sprintf("%s.%d", id, pid))
}

// noteSupervisor notes this process as id's supervisor.
func noteSupervisor(repo *refstore.Repo, id string) {
	path := supervisorNote(repo, id, os.Getpid())
	if os.MkdirAll(filepath.Dir(path), 0o755) == nil {
		_ = os.WriteFile(path, []byte(proc.Me().String()+"\n"), 0o644)
	}
}

// forgetSupervisor removes this process's note as id's supervisor.
func forgetSupervisor(repo *refstore.Repo, id string) {
	_ = os.Remove(supervisorNote(repo, id, os.Getpid()))
}

// goneSupervisors returns how the board names each of id's supervisors of
// this machine whose process has ended ("HOSTNAME pid N", as ops.Register
// records it), from their notes, and those notes' paths.
func goneSupervisors(repo *refstore.Repo, id string) (hosts, notes []string) {
	dir := filepath.Join(repo.CommonDir, "liza", "supervisors")
	paths, _ := filepath.Glob(filepath.Join(dir, id+".*"))
	paths = append(paths, filepath.Join(dir, id))
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		o, ok := proc.ParseOwner(strings.TrimSpace(string(b)))
		if !ok || !o.Gone() {
			continue
		}
		hosts = append(hosts, fmt.Sprintf("%s pid %d", o.Host, o.PID))
		notes = append(notes, path)
	}
	return hosts, notes
}
