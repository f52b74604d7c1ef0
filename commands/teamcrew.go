package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/liza-dev/git-liza/agent"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// crew runs a team's supervisors, one process per agent, and starts again
// one that died: killed outright (an out-of-memory kill, a stray kill -9)
// or crashed (a Go panic exits 2). Left dead, it would take its agent out
// of an unattended team without a word: a reviewer killed stops every
// merge while run goes on as if nothing happened. The new process takes
// the id over from the dead one (register's ReplaceGone) and resumes its
// work. The agents' crash-loop rule holds for supervisors too: after
// agent.CrashLimit deaths within agent.CrashWindow it is not started
// again, and gaveUp records why on the board, where the notifier tells a
// person. A supervisor that ended on its own (exit 0: the goal completed,
// ABORT), refused to go on (exit 1: a crash loop, its id taken, its
// registration refused) or cannot run here (exit 5) is not started again:
// its end is its answer.
type crew struct {
	spec    teamSpec
	emit    func(agent.Event)
	command func(id string) *exec.Cmd
	start   func(*exec.Cmd) error
	// results has each supervisor's last end, once.
	results chan result

	mu       sync.Mutex
	stopping bool
	procs    map[string]*exec.Cmd // each supervisor's process as it runs now
	halt     chan struct{}        // closed by stop
	relays   sync.WaitGroup       // the goroutines that read the supervisors' output
	keepers  sync.WaitGroup
}

// result is how a supervisor ended.
type result struct {
	id     string
	err    error
	stderr []string // its last lines on stderr
	told   bool     // those lines were shown already
}

// newCrew makes the crew of a team of n supervisors.
func newCrew(t teamSpec, n int, emit func(agent.Event), command func(string) *exec.Cmd, start func(*exec.Cmd) error) *crew {
	if t.backoff <= 0 {
		t.backoff = 2 * time.Second
	}
	return &crew{spec: t, emit: emit, command: command, start: start,
		results: make(chan result, n), procs: map[string]*exec.Cmd{}, halt: make(chan struct{})}
}

// launch starts id's supervisor, and keeps it: a death that is not its
// answer starts it again (see crew).
func (c *crew) launch(id string) error {
	ended, err := c.run(id)
	if err != nil {
		return err
	}
	c.keepers.Add(1)
	go c.keep(id, ended)
	return nil
}

// run starts one process of id's supervisor, unless the team is stopping.
// Its events go to emit; ended has how it ended.
func (c *crew) run(id string) (<-chan result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping {
		return nil, errStopping
	}
	cmd := c.command(id)
	pr, pw := io.Pipe()
	er, ew := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, ew
	if err := c.start(cmd); err != nil {
		pw.Close()
		ew.Close()
		return nil, err
	}
	c.procs[id] = cmd
	c.relays.Add(1)
	go func() {
		defer c.relays.Done()
		relayEvents(pr, id, c.emit)
	}()
	tail := make(chan []string, 1)
	go func() { tail <- lastLines(er, stderrLines) }()
	ended := make(chan result, 1)
	go func() {
		err := cmd.Wait()
		pw.Close()
		ew.Close()
		ended <- result{id: id, err: err, stderr: <-tail}
	}()
	return ended, nil
}

var errStopping = errors.New("the team is stopping")

// keep waits for id's supervisor to end, starts it again after a death
// that is not its answer, and hands its last end to results.
func (c *crew) keep(id string, ended <-chan result) {
	defer c.keepers.Done()
	var deaths []time.Time
	for {
		r := <-ended
		why, died := deathOf(r.err)
		if !died || c.isStopping() {
			c.results <- r
			return
		}
		for _, l := range r.stderr {
			c.emit(agent.Event{T: time.Now(), Agent: id, Kind: agent.EventError, Msg: l})
		}
		r.told = true
		now := time.Now()
		deaths = agent.Recent(append(deaths, now), now)
		if n := len(deaths); n >= agent.CrashLimit {
			c.emit(agent.Event{T: now, Agent: id, Kind: agent.EventError,
				Msg: fmt.Sprintf("the supervisor of %s died %d times in %s (%s): not starting it again", id, n, agent.CrashWindow, why)})
			if c.spec.gaveUp != nil && !c.isStopping() {
				c.spec.gaveUp(id, fmt.Sprintf("the supervisor died %d times in %s, last: %s", n, agent.CrashWindow, why))
			}
			c.results <- r
			return
		}
		delay := c.spec.backoff << (len(deaths) - 1)
		c.emit(agent.Event{T: now, Agent: id, Kind: agent.EventError,
			Msg: fmt.Sprintf("the supervisor of %s died (%s); starting it again in %s", id, why, delay)})
		select {
		case <-time.After(delay):
		case <-c.halt:
			c.results <- r
			return
		}
		next, err := c.run(id)
		if err != nil {
			if !errors.Is(err, errStopping) {
				c.emit(agent.Event{T: time.Now(), Agent: id, Kind: agent.EventError,
					Msg: fmt.Sprintf("cannot start the supervisor of %s again: %v", id, err)})
				r.err = err
			}
			c.results <- r
			return
		}
		ended = next
	}
}

// deathOf says whether a supervisor's end is a death to start it again
// after, and what it was: killed by a signal, or an exit other than 0, 1
// and 5 (a Go panic exits 2).
func deathOf(err error) (string, bool) {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return "", false
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ee.Error(), true
	}
	switch ee.ExitCode() {
	case 0, int(contracts.CodeInvalid), int(contracts.CodeMissingDep):
		return "", false
	}
	return ee.Error(), true
}

func (c *crew) isStopping() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopping
}

// stop asks every supervisor to stop (SIGTERM), which releases its work,
// and starts none again.
func (c *crew) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping {
		return
	}
	c.stopping = true
	close(c.halt)
	for _, p := range c.procs {
		_ = p.Process.Signal(syscall.SIGTERM)
	}
}

// wait waits until every supervisor has ended and its output is read.
func (c *crew) wait() {
	c.keepers.Wait()
	c.relays.Wait()
}

// retire ends the registration of id's supervisor, which run gave up on,
// with why as its stop reason: what it held is released (a coder's task
// parked with its work), and the board says why, which the notifier tells
// a person (supervisor_stopped). The dead process left its registration;
// this machine's note of it lets run take it over (register's
// ReplaceGone).
func (e *Env) retire(s *session, id, why string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reg, err := e.register(ctx, s, id, false)
	if err == nil {
		if _, err = s.ops.As(id, reg.Generation).Unregister(ctx, ops.UnregisterRequest{Reason: why}); err == nil {
			forgetSupervisor(s.repo, id)
		}
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "git-liza: %s: recording that its supervisor was given up on: %s\n", id, contracts.Printable(err.Error()))
	}
}
