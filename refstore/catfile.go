package refstore

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// gitObjects reads objects through git's plumbing, with one long-lived
// `git cat-file --batch-command` started at the first read, and writes
// them with `git hash-object -w`. It serves repositories whose format this
// package does not read itself, and the objects a partial clone lacks: git
// fetches those from the promisor remote as it reads them.
//
// It is safe for concurrent use.
type gitObjects struct {
	dir string

	mu     sync.Mutex
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *cappedBuffer
}

// start runs cat-file if it is not running.
func (g *gitObjects) start() error {
	if g.cmd != nil {
		return nil
	}
	if err := CheckGit(); err != nil {
		return err
	}
	cmd := exec.Command("git", "cat-file", "--batch-command")
	cmd.Dir = g.dir
	cmd.Env = inEnglish(ContainEnv(nil))
	g.stderr = new(cappedBuffer)
	cmd.Stderr = g.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return &GitError{Args: []string{"cat-file"}, ExitCode: -1, Stderr: err.Error()}
	}
	g.cmd, g.in, g.out = cmd, in, bufio.NewReaderSize(out, 64<<10)
	return nil
}

// close ends the cat-file process, if one runs.
func (g *gitObjects) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stop()
}

func (g *gitObjects) stop() {
	if g.cmd == nil {
		return
	}
	g.in.Close()
	_ = g.cmd.Wait()
	g.cmd = nil
}

// ask sends one command and reads the header of the answer:
// "<id> <type> <size>", or "<id> missing".
func (g *gitObjects) ask(cmd string, id Hash) (t objType, size int, ok bool, err error) {
	if err := g.start(); err != nil {
		return 0, 0, false, err
	}
	fail := func(err error) (objType, int, bool, error) {
		g.stop()
		msg := strings.TrimSpace(g.stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return 0, 0, false, &GitError{Args: []string{"cat-file"}, ExitCode: -1, Stderr: msg}
	}
	if _, err := io.WriteString(g.in, cmd+" "+id.String()+"\n"); err != nil {
		return fail(err)
	}
	line, err := g.out.ReadString('\n')
	if err != nil {
		return fail(err)
	}
	f := strings.Fields(line)
	if len(f) == 2 && f[1] == "missing" {
		return 0, 0, false, nil
	}
	if len(f) != 3 || f[0] != id.String() {
		return fail(fmt.Errorf("unexpected answer %q", line))
	}
	t, known := parseObjType(f[1])
	size, serr := strconv.Atoi(f[2])
	if !known || serr != nil || size < 0 {
		return fail(fmt.Errorf("unexpected answer %q", line))
	}
	return t, size, true, nil
}

// read returns an object's type and contents; ok is false when git does
// not have it either. With max not negative, an object of more than max
// bytes is refused (*TooLargeError) on the size git states, before its
// contents are asked for.
func (g *gitObjects) read(id Hash, max int64) (objType, []byte, bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if max >= 0 {
		t, size, ok, err := g.ask("info", id)
		if !ok || err != nil {
			return 0, nil, false, err
		}
		if err := (limit{id, max}).check(t.String(), int64(size)); err != nil {
			return 0, nil, false, err
		}
	}
	t, size, ok, err := g.ask("contents", id)
	if !ok || err != nil {
		return 0, nil, false, err
	}
	data := make([]byte, size+1) // the contents, then a newline
	if _, err := io.ReadFull(g.out, data); err != nil || data[size] != '\n' {
		g.stop()
		return 0, nil, false, &GitError{Args: []string{"cat-file"}, ExitCode: -1, Stderr: fmt.Sprintf("short read of %s", id)}
	}
	return t, data[:size], true, nil
}

// has reports whether git has the object (or can fetch it).
func (g *gitObjects) has(id Hash) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, _, ok, err := g.ask("info", id)
	return ok, err
}

// write stores an object with git hash-object, which checks that a tree
// or a commit is well formed before it writes it.
func (g *gitObjects) write(t objType, data []byte, algo hashAlgo) (Hash, error) {
	if data == nil {
		data = []byte{} // nil would leave git reading our standard input
	}
	out, err := Run(context.Background(), g.dir, data, "hash-object", "-w", "--stdin", "-t", t.String())
	if err != nil {
		return Hash{}, err
	}
	id, ok := ParseHash(strings.TrimSpace(string(out)))
	if !ok || id.algo() != algo {
		return Hash{}, &GitError{Args: []string{"hash-object"}, ExitCode: 0, Stderr: fmt.Sprintf("unexpected output %q", out)}
	}
	return id, nil
}

// cappedBuffer keeps the first 64 KiB written to it: what a long-lived
// process says on standard error, for messages.
type cappedBuffer struct{ bytes.Buffer }

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := 64<<10 - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
