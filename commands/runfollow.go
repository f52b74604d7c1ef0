package commands

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/liza-dev/git-liza/agent"
	"github.com/liza-dev/git-liza/transcript"
)

// eventStep is the kind of the events run --follow and -v add: one step of
// an agent's session, as git liza logs -f shows it.
const eventStep = "step"

// followPoll is how often run looks for a followed agent's next session.
const followPoll = 250 * time.Millisecond

// followAgents follows the sessions the agents ids start from now on, in
// their logs under dir (one directory per agent), giving each step to emit
// as an event. It returns a function that stops the following once the team
// has stopped: what the logs hold by then is given first.
func followAgents(ids []string, dir string, emit func(agent.Event)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, id := range ids {
		f := &follower{id: id, dir: filepath.Join(dir, id), emit: emit, seen: map[string]bool{}}
		f.newSessions() // the sessions already there are not this run's
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.run(ctx)
		}()
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// follower follows the sessions of one agent, one after the other.
type follower struct {
	id   string
	dir  string
	emit func(agent.Event)
	seen map[string]bool // the logs it followed, or found there at its start
}

// run follows each new session log to its end, until ctx ends; then it
// reads what the logs it has not read yet hold, and returns.
func (f *follower) run(ctx context.Context) {
	for {
		for _, p := range f.newSessions() {
			f.follow(ctx, p)
		}
		select {
		case <-ctx.Done():
			for _, p := range f.newSessions() {
				f.follow(ctx, p) // ctx is done: Follow reads what is there and returns
			}
			return
		case <-time.After(followPoll):
		}
	}
}

// newSessions are the session logs of the agent not seen yet, oldest first
// (their names begin with the time they started).
func (f *follower) newSessions() []string {
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, transcript.Ext) && !f.seen[name] {
			f.seen[name] = true
			out = append(out, filepath.Join(f.dir, name))
		}
	}
	slices.Sort(out)
	return out
}

// follow gives the steps of the session log at path as events, until its
// end record or, once ctx is done, the end of what it holds.
func (f *follower) follow(ctx context.Context, path string) {
	var p *transcript.Parser
	task := ""
	_ = transcript.Follow(ctx, path, func(r transcript.Record) {
		if r.Header != nil {
			p, task = transcript.NewParser(r.Header.Format), r.Header.Task
			return
		}
		for _, st := range p.Record(r) {
			st := st
			f.emit(agent.Event{T: st.T, Agent: f.id, Kind: eventStep, Task: task, Msg: transcript.Render(st, stepWidth), Step: &st})
		}
	})
}
