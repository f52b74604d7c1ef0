package refstore

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// hubWithNews is daemonHub whose hub also holds a state two commits past
// what the clone has (a file that changes a little each time, so that the
// server sends deltas) and a ticket the clone has never seen.
func hubWithNews(t *testing.T) (clone *Repo, hub string) {
	t.Helper()
	clone, hub = daemonHub(t)
	other := filepath.Join(t.TempDir(), "other")
	git(t, clone.Dir(), "clone", "-q", hub, other)
	git(t, other, "checkout", "-q", "-b", "work", "origin/main")
	var text strings.Builder
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&text, "line %d of the board's file\n", i)
	}
	for i := 0; i < 2; i++ {
		writeFile(t, filepath.Join(other, "liza.yaml"), text.String()+fmt.Sprintf("change %d\n", i))
		writeFile(t, filepath.Join(other, "tasks", fmt.Sprintf("t%d.yaml", i)), "id: t\n")
		git(t, other, "add", ".")
		git(t, other, "commit", "-q", "-m", fmt.Sprintf("state %d", i))
	}
	git(t, other, "commit", "-q", "--allow-empty", "-m", "ticket")
	git(t, other, "push", "-q", hub, "HEAD~1:"+StateRef, "HEAD:refs/liza/queue/00000000000000aa")
	return clone, hub
}

// refsOf is for-each-ref's list of refs under prefix in dir.
func refsOf(t *testing.T, dir, prefix string) string {
	t.Helper()
	return git(t, dir, "for-each-ref", "--format=%(objectname) %(refname)", prefix)
}

// A fetch from a git daemon named by its address is made in this process:
// no git fetch, its objects in one pack (no loose file), the tracking refs
// as git fetch leaves them, a ticket the remote dropped dropped here, and
// git itself finds the repository whole.
func TestFetchDaemonInProcess(t *testing.T) {
	needDial(t)
	eachMode(t, []repoMode{{name: "sha1", format: "sha1"}, {name: "sha256", format: "sha256"}}, func(t *testing.T) {
		r, hub := hubWithNews(t)
		refs := []string{StateRef, "refs/liza/queue/*"}
		// What git fetch makes of the same hub, in a clone of its own.
		mirror := filepath.Join(t.TempDir(), "mirror")
		git(t, r.Dir(), "clone", "-q", "--no-checkout", r.Dir(), mirror)
		url := git(t, r.Dir(), "config", "remote.origin.url")
		git(t, mirror, "fetch", "-q", "--prune", url, "+refs/liza/state:refs/liza/remotes/origin/state", "+refs/liza/queue/*:refs/liza/remotes/origin/queue/*")

		loose := func() int {
			n := 0
			filepath.WalkDir(filepath.Join(r.Dir(), ".git", "objects"), func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && len(filepath.Base(filepath.Dir(p))) == 2 {
					n++
				}
				return nil
			})
			return n
		}
		before := loose()
		trace := filepath.Join(t.TempDir(), "trace")
		t.Setenv("GIT_TRACE", trace)
		got, err := r.Fetch(context.Background(), "origin", refs...)
		t.Setenv("GIT_TRACE", "")
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(trace); strings.Contains(string(b), "git fetch") {
			t.Fatalf("Fetch ran git fetch:\n%s", b)
		}
		if n := loose(); n != before {
			t.Fatalf("%d loose objects after the fetch, %d before", n, before)
		}
		want := refsOf(t, mirror, "refs/liza/remotes/")
		if have := refsOf(t, r.Dir(), "refs/liza/remotes/"); have != want {
			t.Fatalf("tracking refs:\n%s\ngit fetch makes:\n%s", have, want)
		}
		if got[StateRef].String() != git(t, hub, "rev-parse", StateRef) {
			t.Fatalf("Fetch says the state is %s", got[StateRef])
		}
		git(t, r.Dir(), "fsck", "--strict", "--no-progress", "--no-dangling")
		if data, err := r.ReadBlob(hashOf(t, git(t, hub, "rev-parse", StateRef+":liza.yaml"))); err != nil || !strings.Contains(string(data), "change 1") {
			t.Fatalf("the fetched state's file: %q, %v", data, err)
		}

		// The remote drops a ticket: so does the fetch, as git's --prune.
		git(t, hub, "update-ref", "-d", "refs/liza/queue/00000000000000aa")
		git(t, mirror, "fetch", "-q", "--prune", url, "+refs/liza/state:refs/liza/remotes/origin/state", "+refs/liza/queue/*:refs/liza/remotes/origin/queue/*")
		t.Setenv("GIT_TRACE", trace)
		if _, err := r.Fetch(context.Background(), "origin", refs...); err != nil {
			t.Fatal(err)
		}
		t.Setenv("GIT_TRACE", "")
		if have, want := refsOf(t, r.Dir(), "refs/liza/remotes/"), refsOf(t, mirror, "refs/liza/remotes/"); have != want {
			t.Fatalf("tracking refs after the ticket went:\n%s\ngit fetch makes:\n%s", have, want)
		}
		if b, _ := os.ReadFile(trace); strings.Contains(string(b), "git fetch") {
			t.Fatalf("Fetch ran git fetch:\n%s", b)
		}

		// A ref asked for by name that the remote lacks is git's to
		// report: the fetch is left to it, and gets the rest.
		os.Remove(trace)
		t.Setenv("GIT_TRACE", trace)
		got, err = r.Fetch(context.Background(), "origin", StateRef, "refs/liza/nothing")
		t.Setenv("GIT_TRACE", "")
		if err != nil || got[StateRef].IsZero() || len(got) != 1 {
			t.Fatalf("Fetch with a ref the remote lacks: %v, %v", got, err)
		}
		if b, _ := os.ReadFile(trace); !strings.Contains(string(b), "git fetch") {
			t.Fatalf("git fetch did not run:\n%s", b)
		}
	})
}

// fakeV2 is a protocol version 2 server that lists refs and answers any
// fetch with pack, as a hostile or broken hub might.
func fakeV2(t *testing.T, refs map[string]Hash, pack []byte) int {
	return listen(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		// command reads one request up to its flush, and returns its
		// first line.
		command := func() (string, bool) {
			first := ""
			for {
				var head [4]byte
				if _, err := io.ReadFull(br, head[:]); err != nil {
					return "", false
				}
				n, err := strconv.ParseUint(string(head[:]), 16, 16)
				if err != nil {
					return "", false
				}
				if n == 0 {
					return first, true
				}
				if n < 4 {
					continue
				}
				b := make([]byte, n-4)
				if _, err := io.ReadFull(br, b); err != nil {
					return "", false
				}
				if first == "" {
					first = strings.TrimSuffix(string(b), "\n")
				}
			}
		}
		var head [4]byte
		io.ReadFull(br, head[:])
		n, _ := strconv.ParseUint(string(head[:]), 16, 16)
		br.Discard(int(n) - 4) // the service request
		c.Write([]byte(pkt("version 2\n") + pkt("ls-refs=unborn\n") + pkt("fetch=shallow\n") + pkt("object-format=sha1\n") + "0000"))
		for {
			first, ok := command()
			if !ok {
				return
			}
			var out strings.Builder
			switch first {
			case "command=ls-refs":
				for name, h := range refs {
					out.WriteString(pkt(h.String() + " " + name + "\n"))
				}
			case "command=fetch":
				out.WriteString(pkt("packfile\n"))
				for rest := pack; len(rest) > 0; {
					n := min(len(rest), 1000)
					out.WriteString(pkt("\x01" + string(rest[:n])))
					rest = rest[n:]
				}
			}
			out.WriteString("0000")
			c.Write([]byte(out.String()))
		}
	})
}

// pe is one entry of a pack packOf makes: a type and its data, for a
// reference delta the id of its base; an offset delta's base is the
// entry before it.
type pe struct {
	t    objType
	data []byte
	base Hash
}

// packOf makes a pack of entries and signs it as git does; bad changes it
// and signs it again, when not nil.
func packOf(entries []pe, bad func([]byte)) []byte {
	var b bytes.Buffer
	b.WriteString("PACK")
	binary.Write(&b, binary.BigEndian, uint32(2))
	binary.Write(&b, binary.BigEndian, uint32(len(entries)))
	prev := 0
	for _, e := range entries {
		off := b.Len()
		size := len(e.data)
		c := byte(e.t)<<4 | byte(size&15)
		for size >>= 4; size > 0; size >>= 7 {
			b.WriteByte(c | 0x80)
			c = byte(size & 0x7f)
		}
		b.WriteByte(c)
		switch e.t {
		case objOfsDelta:
			b.WriteByte(byte(off - prev)) // small offsets only
		case objRefDelta:
			b.Write(e.base.bytes())
		}
		zw := zlib.NewWriter(&b)
		zw.Write(e.data)
		zw.Close()
		prev = off
	}
	sum := algoSHA1.new()
	sum.Write(b.Bytes())
	out := append(b.Bytes(), sum.Sum(nil)...)
	if bad != nil {
		bad(out)
		sum := algoSHA1.new()
		sum.Write(out[:len(out)-20])
		copy(out[len(out)-20:], sum.Sum(nil))
	}
	return out
}

// deltaOf is the delta that makes base followed by extra (at most 127
// bytes) from base (at most 65535 bytes).
func deltaOf(base, extra []byte, claim int) []byte {
	size := func(d []byte, n int) []byte {
		for ; n >= 0x80; n >>= 7 {
			d = append(d, byte(n)|0x80)
		}
		return append(d, byte(n))
	}
	d := size(size(nil, len(base)), claim)
	d = append(d, 0x80|0x10|0x20, byte(len(base)), byte(len(base)>>8))
	d = append(d, byte(len(extra)))
	return append(d, extra...)
}

// What a hub sends is read within bounds and checked before anything
// moves: a pack whose checksum fails, one cut short, one that lacks the
// object it was asked for or sends another under its name, a commit whose
// tree is nowhere, a delta whose base is nowhere, an entry longer than it
// says: each fails the fetch, and the tracking refs stay as they were.
func TestFetchDaemonHostilePack(t *testing.T) {
	needDial(t)
	gitEnv(t)
	r, _ := daemonHub(t)
	blob := []byte("what the hub says the state is\n")
	blobID, _ := r.odb.name(objBlob, blob)
	tree := append([]byte("100644 liza.yaml\x00"), blobID.bytes()...)
	treeID, _ := r.odb.name(objTree, tree)
	commit := []byte("tree " + treeID.String() + "\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n\nstate\n")
	commitID, _ := r.odb.name(objCommit, commit)
	missing := strings.Repeat("ab", 20)
	orphan := []byte("tree " + missing + "\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n\nstate\n")
	orphanID, _ := r.odb.name(objCommit, orphan)
	whole := []pe{{t: objCommit, data: commit}, {t: objTree, data: tree}, {t: objBlob, data: blob}}
	big := []byte(strings.Repeat("a line of the board\n", 100))
	bigID, _ := r.odb.name(objBlob, big)
	cases := []struct {
		name string
		want Hash
		pack []byte
		says string
	}{
		{"checksum", commitID, func() []byte { p := packOf(whole, nil); p[20] ^= 1; return p }(), "checksum does not match"},
		{"cut short", commitID, packOf(whole, nil)[:40], "checksum does not match"},
		{"not what was asked", orphanID, packOf(whole, nil), "is neither in the pack nor here"},
		{"tree nowhere", orphanID, packOf([]pe{{t: objCommit, data: orphan}}, nil), "object " + missing + " is neither in the pack nor here"},
		{"delta base nowhere", commitID, packOf([]pe{{t: objRefDelta, data: deltaOf(big, []byte("x"), len(big)+1), base: hashOf(t, missing)}}, nil), "a delta whose base is neither in the pack nor here"},
		{"longer than it says", commitID, packOf([]pe{{t: objBlob, data: []byte("0123456789")}}, func(p []byte) {
			p[12] = byte(objBlob)<<4 | 5 // says 5 bytes, holds 10
		}), "longer than it says"},
		{"claims far more than it holds", commitID, packOf([]pe{{t: objBlob, data: []byte("x")}}, func(p []byte) {
			copy(p[12:], []byte{byte(objBlob)<<4 | 0x80 | 1, 0x80, 0x80, 0x80, 0x04}) // 128 MiB, in a few bytes
		}), "the entry at 12 claims 134217729 bytes"},
		{"claims over the bound", commitID, packOf([]pe{{t: objBlob, data: []byte("x")}}, func(p []byte) {
			copy(p[12:], []byte{byte(objBlob)<<4 | 0x80 | 1, 0x80, 0x80, 0x80, 0x40}) // 2 GiB
		}), "objects of over"},
		{"a delta that claims a terabyte", bigID, packOf([]pe{{t: objBlob, data: big}, {t: objOfsDelta, data: deltaOf(big, []byte("x"), 1<<40)}}, nil), "objects of over"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := refsOf(t, r.Dir(), "refs/liza/remotes/")
			port := fakeV2(t, map[string]Hash{StateRef: c.want}, c.pack)
			_, err := r.fetchDaemon(context.Background(), daemonTarget{addr: loopback(port), host: "x", path: "/h"}, "origin", []string{StateRef})
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("fetchDaemon: %v, want an error with %q", err, c.says)
			}
			if after := refsOf(t, r.Dir(), "refs/liza/remotes/"); after != before {
				t.Fatalf("tracking refs moved:\n%s\nwere:\n%s", after, before)
			}
		})
	}
	// The same pack, whole and right, is taken.
	// A chain of reference deltas sent last first is resolved in one
	// pass, whatever its length.
	versions := [][]byte{big}
	for i := 1; i <= 300; i++ {
		versions = append(versions, append(append([]byte(nil), versions[i-1]...), 'x'))
	}
	chain := []pe{}
	for i := 300; i >= 1; i-- {
		base, _ := r.odb.name(objBlob, versions[i-1])
		chain = append(chain, pe{t: objRefDelta, data: deltaOf(versions[i-1], []byte("x"), len(versions[i])), base: base})
	}
	chain = append(chain, pe{t: objBlob, data: big})
	last, _ := r.odb.name(objBlob, versions[300])
	port := fakeV2(t, map[string]Hash{"refs/liza/chain": last}, packOf(chain, nil))
	if _, err := r.fetchDaemon(context.Background(), daemonTarget{addr: loopback(port), host: "x", path: "/h"}, "origin", []string{"refs/liza/chain"}); err != nil {
		t.Fatalf("a chain of deltas: %v", err)
	}
	if data, err := r.ReadBlob(last); err != nil || len(data) != len(big)+300 {
		t.Fatalf("the chain's last object: %d bytes, %v", len(data), err)
	}
	// The same pack, whole and right, is taken.
	port = fakeV2(t, map[string]Hash{StateRef: commitID}, packOf(whole, nil))
	got, err := r.fetchDaemon(context.Background(), daemonTarget{addr: loopback(port), host: "x", path: "/h"}, "origin", []string{StateRef})
	if err != nil || got[StateRef] != commitID {
		t.Fatalf("fetchDaemon: %v, %v", got, err)
	}
	if out, err := exec.Command("git", "-C", r.Dir(), "cat-file", "-p", commitID.String()+":liza.yaml").Output(); err != nil || string(out) != string(blob) {
		t.Fatalf("git reads the fetched state's file as %q, %v", out, err)
	}
}
