package main

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// bigpushRuns is how many times each forged push is made: each costs
// seconds, and git refuses it the same way every time.
const bigpushRuns = 3

// bigpushResult is what a push of a state commit carrying a huge file
// costs a guarded remote (hooks install --server, its receive.maxInputSize
// as the installer sets it).
type bigpushResult struct {
	Cases []bigpushCase `json:"cases"`
}

// bigpushCase is one forged push: an import with BlobMB megabytes of
// objects where its state holds a few KB.
type bigpushCase struct {
	Name   string `json:"name"`
	BlobMB int    `json:"blob_mb"`
	// PackKB is the size of the pack the push sends.
	PackKB int64 `json:"pack_kb"`
	// Push is the whole git push (client and, over file://, the server
	// it starts), ms; PushMaxMB the most memory any process of it held.
	Push      stats   `json:"push"`
	PushMaxMB float64 `json:"push_max_rss_mb"`
	// Hook is the pre-receive hook alone (git liza hook pre-receive and
	// the script around it), ms and MB; absent when git refused the push
	// before running it.
	Hook      *stats  `json:"hook,omitempty"`
	HookMaxMB float64 `json:"hook_max_rss_mb,omitempty"`
	// Refused is the line that says why.
	Refused string `json:"refused"`
}

// measureHookMode is the bench binary run as a hook wrapper: bench
// -measure-hook OUT HOOK ARGS... runs HOOK with this process's standard
// streams, appends "WALL_MS MAX_RSS_KB" to OUT (the hook process and
// everything it waited for: wait4's rusage), and exits as HOOK did.
func measureHookMode(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bench -measure-hook OUT HOOK [ARGS...]")
		return 2
	}
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "bench -measure-hook:", err)
		return 2
	}
	rss := int64(0)
	if kb, ok := maxRSSKB(cmd.ProcessState); ok {
		rss = kb
	}
	f, ferr := os.OpenFile(args[0], os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if ferr == nil {
		fmt.Fprintf(f, "%.1f %d\n", float64(wall.Microseconds())/1000, rss)
		f.Close()
	}
	return cmd.ProcessState.ExitCode()
}

// measureBigPush forges, in a clone of a guarded hub, import commits
// carrying far more than a state holds, and pushes each bigpushRuns times:
// a liza.yaml of 300 MB of one repeated line (a few hundred KB on the
// wire: receive.maxInputSize does not stop it, the guard's size check
// does), of 300 MB of random bytes (over receive.maxInputSize: git refuses
// it before the hook runs) and of 200 MB of random bytes (under it: the
// hook refuses it); a tasks/ tree of 300 MB (one entry repeated); and one
// task file of 1 MiB, within its cap, named 400 times in tasks/ (the worst
// within the caps: the guard decodes it until cas.MaxImport). The hub's
// pre-receive hook runs under a wrapper (this binary, -measure-hook) that
// records its time and peak memory.
func (b *bench) measureBigPush() (bigpushResult, error) {
	var r bigpushResult
	dir := filepath.Join(b.tmp, "bigpush")
	seed, err := b.seedFile(dir, 10)
	if err != nil {
		return r, err
	}
	hub, err := b.newHub(filepath.Join(dir, "hub"), seed)
	if err != nil {
		return r, err
	}
	if _, err := output(hub, b.env, "git", "liza", "hooks", "install", "--server"); err != nil {
		return r, err
	}
	hooksDir := filepath.Join(hub, "hooks")
	if err := os.Rename(filepath.Join(hooksDir, "pre-receive"), filepath.Join(hooksDir, "pre-receive.measured")); err != nil {
		return r, err
	}
	self, err := os.Executable()
	if err != nil {
		return r, err
	}
	record := filepath.Join(dir, "hook-usage")
	wrapper := fmt.Sprintf("#!/bin/sh\nexec %s -measure-hook %s %s \"$@\"\n",
		strconv.Quote(self), strconv.Quote(record), strconv.Quote(filepath.Join(hooksDir, "pre-receive.measured")))
	if err := os.WriteFile(filepath.Join(hooksDir, "pre-receive"), []byte(wrapper), 0o755); err != nil {
		return r, err
	}
	clone := filepath.Join(dir, "clone")
	if err := b.remoteClone("file://"+hub, clone); err != nil {
		return r, err
	}
	// An import to forge from: its message, its parent.
	data, err := os.ReadFile(seed)
	if err != nil {
		return r, err
	}
	edited := filepath.Join(dir, "edited.yaml")
	if err := os.WriteFile(edited, bytes.Replace(data, []byte("Implement part 1 "), []byte("Implement part one "), 1), 0o644); err != nil {
		return r, err
	}
	if _, err := output(clone, b.env, "git", "liza", "--offline", "import", edited); err != nil {
		return r, err
	}
	for _, c := range []struct {
		name string
		mb   int
		// forge writes the objects and returns the entries to put in
		// the import's tree (update-index --index-info lines) and the
		// paths to take out of it.
		forge func() (put []string, drop []string, err error)
	}{
		{"liza.yaml: 300 MB of one line repeated", 300, b.bigBlob(clone, 300<<20, false)},
		{"liza.yaml: 300 MB of random bytes", 300, b.bigBlob(clone, 300<<20, true)},
		{"liza.yaml: 200 MB of random bytes", 200, b.bigBlob(clone, 200<<20, true)},
		{"tasks/: a 300 MB tree of one entry repeated", 300, b.bigTree(clone, 300<<20)},
		{"tasks/: one 1 MiB task file under 400 names", 400, b.manyTasks(clone, 400)},
	} {
		progress(fmt.Sprintf("bigpush: forging an import whose %s", c.name))
		put, drop, err := c.forge()
		if err != nil {
			return r, err
		}
		commit, err := b.forgeImport(clone, dir, put, drop)
		if err != nil {
			return r, err
		}
		bc := bigpushCase{Name: c.name, BlobMB: c.mb}
		if pack, err := output(clone, b.env, "sh", "-c", "printf '%s\\n^%s\\n' "+commit+" refs/liza/remotes/origin/state | git pack-objects --revs --stdout -q | wc -c"); err == nil {
			n, _ := strconv.ParseInt(strings.TrimSpace(pack), 10, 64)
			bc.PackKB = n >> 10
		}
		os.Remove(record)
		var push []float64
		for i := 0; i < bigpushRuns; i++ {
			cmd := command(clone, b.env, "git", "push", "origin", commit+":refs/liza/state")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			err := cmd.Run()
			push = append(push, float64(time.Since(start).Microseconds())/1000)
			if err == nil {
				return r, fmt.Errorf("the push of %s was accepted", c.name)
			}
			if kb, ok := maxRSSKB(cmd.ProcessState); ok {
				bc.PushMaxMB = max(bc.PushMaxMB, float64(kb)/1024)
			}
			bc.Refused = refusal(out.String())
		}
		bc.Push = summarize(push)
		if raw, err := os.ReadFile(record); err == nil {
			var hook []float64
			for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
				f := strings.Fields(line)
				if len(f) != 2 {
					continue
				}
				ms, _ := strconv.ParseFloat(f[0], 64)
				kb, _ := strconv.ParseFloat(f[1], 64)
				hook = append(hook, ms)
				bc.HookMaxMB = max(bc.HookMaxMB, kb/1024)
			}
			if len(hook) > 0 {
				s := summarize(hook)
				bc.Hook = &s
			}
		}
		r.Cases = append(r.Cases, bc)
		// The refused objects went with git's quarantine; the clone's
		// copies go now.
		if _, err := output(clone, b.env, "git", "prune", "--expire=now"); err != nil {
			return r, err
		}
	}
	return r, nil
}

// bigBlob writes a blob of size bytes (one line repeated, or random
// bytes) to be the import's liza.yaml.
func (b *bench) bigBlob(clone string, size int, random bool) func() ([]string, []string, error) {
	return func() ([]string, []string, error) {
		var src io.Reader
		if random {
			src = rand.NewChaCha8([32]byte{1, 2, 3})
		} else {
			src = &repeated{line: []byte("goal: the same line, again and again, hundreds of megabytes of it\n")}
		}
		blob, err := b.hashObject(clone, io.LimitReader(src, int64(size)), "blob")
		return []string{"100644 " + blob + "\tliza.yaml"}, nil, err
	}
}

// bigTree writes a tree of about size bytes, one entry (a.yaml) repeated,
// to be the import's tasks/ (git hash-object --literally checks nothing).
func (b *bench) bigTree(clone string, size int) func() ([]string, []string, error) {
	return func() ([]string, []string, error) {
		blob, err := b.hashObject(clone, strings.NewReader("x"), "blob")
		if err != nil {
			return nil, nil, err
		}
		id, _ := hex.DecodeString(blob)
		entry := append([]byte("100644 a.yaml\x00"), id...)
		tree, err := b.hashObject(clone, bytes.NewReader(bytes.Repeat(entry, size/len(entry))), "tree")
		return []string{"040000 " + tree + "\ttasks"}, []string{"tasks"}, err
	}
}

// manyTasks writes one task file of 1 MiB (a valid task, its description
// filling it) and names it n times in tasks/, each name in its bucket: a
// pushed import's state is decoded whole, that file over and over until
// cas.MaxImport.
func (b *bench) manyTasks(clone string, n int) func() ([]string, []string, error) {
	return func() ([]string, []string, error) {
		head := "id: t-0\nstatus: DRAFT\npriority: 3\ncreated: \"2026-01-17T10:00:00Z\"\nspec_ref: specs/vision.md\ndone_when: d\nscope: s\ndescription: \""
		text := head + strings.Repeat("w", 1<<20-len(head)-2) + "\"\n"
		blob, err := b.hashObject(clone, strings.NewReader(text), "blob")
		if err != nil {
			return nil, nil, err
		}
		var put []string
		for i := range n {
			id := fmt.Sprintf("t-%d", i)
			sum := sha1.Sum([]byte(id))
			x := hex.EncodeToString(sum[:1])
			put = append(put, fmt.Sprintf("100644 %s\ttasks/%c/%c/%s.yaml", blob, x[0], x[1], id))
		}
		return put, nil, nil
	}
}

// hashObject writes an object of type kind from src, with git.
func (b *bench) hashObject(clone string, src io.Reader, kind string) (string, error) {
	cmd := command(clone, b.env, "git", "hash-object", "-t", kind, "--literally", "-w", "--stdin")
	cmd.Stdin = src
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git hash-object -t %s: %v", kind, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// forgeImport writes a commit that is the clone's import with the paths in
// drop taken out of its tree and the entries put put in, and returns it.
func (b *bench) forgeImport(clone, dir string, put, drop []string) (string, error) {
	index := filepath.Join(dir, "forge-index")
	defer os.Remove(index)
	env := append(append([]string{}, b.env...), "GIT_INDEX_FILE="+index)
	if _, err := output(clone, env, "git", "read-tree", "refs/liza/state"); err != nil {
		return "", err
	}
	for _, p := range drop {
		if _, err := output(clone, env, "git", "rm", "-q", "-r", "--cached", p); err != nil {
			return "", err
		}
	}
	tree := ""
	if len(drop) > 0 {
		// A tree entry cannot go in an index: the root is made by hand.
		base, err := output(clone, env, "git", "write-tree")
		if err != nil {
			return "", err
		}
		list, err := output(clone, b.env, "git", "ls-tree", base)
		if err != nil {
			return "", err
		}
		lines := append(strings.Split(list, "\n"), put...)
		for i, l := range lines {
			if mode, rest, ok := strings.Cut(l, " "); ok && !strings.Contains(rest, " ") {
				lines[i] = mode + " tree " + rest // the put lines name no type
			}
		}
		cmd := command(clone, b.env, "git", "mktree", "--missing")
		cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git mktree: %v", err)
		}
		tree = strings.TrimSpace(string(out))
	} else {
		cmd := command(clone, env, "git", "update-index", "--index-info")
		cmd.Stdin = strings.NewReader(strings.Join(put, "\n") + "\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("git update-index: %v\n%s", err, out)
		}
		var err error
		if tree, err = output(clone, env, "git", "write-tree"); err != nil {
			return "", err
		}
	}
	msg, err := output(clone, b.env, "git", "log", "-1", "--format=%B", "refs/liza/state")
	if err != nil {
		return "", err
	}
	cmd := command(clone, b.env, "git", "commit-tree", "-p", "refs/liza/state~1", tree)
	cmd.Stdin = strings.NewReader(msg + "\n")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git commit-tree: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// repeated reads as its line over and over.
type repeated struct {
	line []byte
	off  int
}

func (r *repeated) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.line[r.off:])
		n += c
		r.off = (r.off + c) % len(r.line)
	}
	return n, nil
}

// refusal is the line of a refused push's output that says why: the
// guard's first problem, or git's own complaint.
func refusal(out string) string {
	var gitSays string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "remote: git-liza: commit ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "remote: "))
		}
		if gitSays == "" && (strings.Contains(line, "fatal:") || strings.Contains(line, "error:")) {
			gitSays = line
		}
	}
	return gitSays
}

// printBigPush prints the forged pushes' costs.
func printBigPush(r *bigpushResult) {
	fmt.Printf("\nthe guard against a huge state file: git push of an import whose liza.yaml is huge, %d runs, median (p90) ms, peak RSS MB\n", bigpushRuns)
	for _, c := range r.Cases {
		fmt.Printf("%s (pack %d KB): push %s, %.0f MB", c.Name, c.PackKB, ms(c.Push), c.PushMaxMB)
		if c.Hook != nil {
			fmt.Printf("; hook %s, %.0f MB", ms(*c.Hook), c.HookMaxMB)
		} else {
			fmt.Printf("; hook not run")
		}
		fmt.Printf("\n  refused: %s\n", c.Refused)
	}
}
