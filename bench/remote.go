package main

import (
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

const remoteTasks = 100 // tasks on the remotes of the remote-mode timings

// measureRemote times `git liza task add` on a state of remoteTasks tasks in
// three setups, interleaved: a repository in local mode (no liza.remote); a
// clone in remote mode whose remote is a bare repository reached over
// file://; and one whose remote is served by git daemon on 127.0.0.1. In
// remote mode every add fetches the remote's refs/liza/state and pushes the
// new commit atomically. The daemon is stopped on the way out, error or not.
func (b *bench) measureRemote() (remoteResult, error) {
	progress("remote mode: setting up local, file:// and git daemon")
	dir := filepath.Join(b.tmp, "remote")
	seed, err := b.seedFile(dir, remoteTasks)
	if err != nil {
		return remoteResult{}, err
	}
	local := filepath.Join(dir, "local")
	if err := b.newRepo(local, seed); err != nil {
		return remoteResult{}, err
	}
	fileHub, err := b.newHub(filepath.Join(dir, "file"), seed)
	if err != nil {
		return remoteResult{}, err
	}
	viaFile := filepath.Join(dir, "file-clone")
	if err := b.remoteClone("file://"+fileHub, viaFile); err != nil {
		return remoteResult{}, err
	}
	served := filepath.Join(dir, "served")
	if _, err := b.newHub(served, seed); err != nil {
		return remoteResult{}, err
	}
	url, stop, err := b.startDaemon(served, "hub.git")
	if err != nil {
		return remoteResult{}, err
	}
	defer stop()
	viaDaemon := filepath.Join(dir, "daemon-clone")
	if err := b.remoteClone(url, viaDaemon); err != nil {
		return remoteResult{}, err
	}

	progress(fmt.Sprintf("remote mode: timing %d+%d runs of each", warmups, b.opt.runs))
	add := func(repo string) func(id string) *exec.Cmd {
		return func(id string) *exec.Cmd {
			return command(repo, b.env, "git", append([]string{"liza"}, addArgs(id)...)...)
		}
	}
	samples, err := b.interleave([]func(id string) *exec.Cmd{add(local), add(viaFile), add(viaDaemon)})
	if err != nil {
		return remoteResult{}, err
	}
	r := remoteResult{Tasks: remoteTasks, Local: summarize(samples[0]), File: summarize(samples[1]), Daemon: summarize(samples[2])}
	r.RatioFile = r.File.Median / r.Local.Median
	r.RatioDaemon = r.Daemon.Median / r.Local.Median
	return r, nil
}

// newHub makes dir/hub.git, a bare repository standing for a team's shared
// remote, and returns its path. It is a bare clone of a fresh repository
// (dir/src) to which a first clone (dir/publisher) publishes the state: it
// imports seed without liza.remote, then turns remote mode on and runs
// `git liza sync origin`, which pushes refs/liza/state and the integration
// branch.
func (b *bench) newHub(dir, seed string) (string, error) {
	src, hub, pub := filepath.Join(dir, "src"), filepath.Join(dir, "hub.git"), filepath.Join(dir, "publisher")
	if err := b.initRepo(src); err != nil {
		return "", err
	}
	if _, err := output(dir, b.env, "git", "clone", "-q", "--bare", src, hub); err != nil {
		return "", err
	}
	if err := b.clone("file://"+hub, pub); err != nil {
		return "", err
	}
	for _, args := range [][]string{
		{"liza", "import", seed},
		{"config", "liza.remote", "origin"},
		{"liza", "sync", "origin"},
	} {
		if _, err := output(pub, b.env, "git", args...); err != nil {
			return "", err
		}
	}
	return hub, nil
}

// remoteClone clones url into dir in remote mode (liza.remote is origin)
// and fetches the blackboard with `git liza sync`.
func (b *bench) remoteClone(url, dir string) error {
	if err := b.clone(url, dir, "liza.remote=origin"); err != nil {
		return err
	}
	_, err := output(dir, b.env, "git", "liza", "sync")
	return err
}

// clone clones url into dir with the bench's identity and any further
// config (KEY=VALUE) set in the clone.
func (b *bench) clone(url, dir string, config ...string) error {
	args := []string{"clone", "-q"}
	for _, c := range append([]string{"user.name=Bench", "user.email=bench@liza.invalid", "commit.gpgsign=false"}, config...) {
		args = append(args, "-c", c)
	}
	_, err := output("", b.env, "git", append(args, "--", url, dir)...)
	return err
}

// startDaemon serves the repositories under base with git daemon on a free
// port of 127.0.0.1, pushes allowed, and waits until `git ls-remote` of
// base/repo answers. It returns repo's git:// URL and stop, which kills the
// daemon and waits for it (once, however often it is called). git-daemon runs directly rather than through
// `git daemon`, so that the kill reaches the server itself.
func (b *bench) startDaemon(base, repo string) (string, func(), error) {
	execPath, err := output("", b.env, "git", "--exec-path")
	if err != nil {
		return "", nil, err
	}
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	cmd := command(base, b.env, filepath.Join(execPath, "git-daemon"), "--reuseaddr", "--listen=127.0.0.1",
		"--port="+strconv.Itoa(port), "--base-path="+base, "--export-all", "--enable=receive-pack", base)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("git daemon: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cmd.Process.Kill()
			<-exited
		})
	}
	url := fmt.Sprintf("git://127.0.0.1:%d/%s", port, repo)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := output("", b.env, "git", "ls-remote", url); err == nil {
			return url, stop, nil
		}
		select {
		case err := <-exited:
			return "", nil, fmt.Errorf("git daemon exited before answering (%v)\n%s", err, log.Bytes())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("git daemon on port %d did not answer git ls-remote %s within 10s\n%s", port, url, log.Bytes())
		}
	}
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
