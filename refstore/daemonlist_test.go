package refstore

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startDaemon serves the bare repositories under base with a real git
// daemon on loopback, and returns its port.
func startDaemon(t *testing.T, base string) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(strings.TrimSpace(string(execPath)), "git-daemon"),
		"--reuseaddr", "--listen=127.0.0.1", "--port="+strconv.Itoa(port),
		"--base-path="+base, "--export-all", base)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			c.Close()
			return port
		}
		if i == 100 {
			t.Fatalf("git daemon did not come up: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// daemonHub makes a bare hub with a state, tickets, a branch and a tag,
// serves it, and returns a clone whose origin is its git:// url.
func daemonHub(t *testing.T) (clone *Repo, hub string) {
	t.Helper()
	r, c1, c2 := twoCommits(t)
	base := t.TempDir()
	hub = filepath.Join(base, "hub.git")
	git(t, r.Dir(), "init", "-q", "--bare", "--object-format="+mode.format, hub)
	for name, c := range map[string]Hash{
		StateRef: c2, "refs/liza/queue/0123456789abcdef": c1, "refs/liza/queue/fedcba9876543210": c2,
		"refs/liza/queued": c1, "refs/heads/main": c2, "refs/tags/v1": c1,
	} {
		git(t, r.Dir(), "push", "-q", hub, c.String()+":"+name)
	}
	port := startDaemon(t, base)
	git(t, r.Dir(), "remote", "add", "origin", fmt.Sprintf("git://127.0.0.1:%d/hub.git", port))
	return open(t, r.Dir()), hub
}

// lsRemote is what git ls-remote says of patterns.
func lsRemote(t *testing.T, dir, remote string, patterns ...string) map[string]Hash {
	t.Helper()
	got := map[string]Hash{}
	for _, line := range strings.Split(git(t, dir, append([]string{"ls-remote", remote}, patterns...)...), "\n") {
		if id, name, ok := strings.Cut(line, "\t"); ok {
			got[name] = hashOf(t, id)
		}
	}
	return got
}

// loopback is 127.0.0.1:port.
func loopback(port int) netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port))
}

// needDial skips a test of listings made here where they are not.
func needDial(t *testing.T) {
	if !canDialDaemon {
		t.Skip("git lists a daemon's refs on this system")
	}
}

// pkt is s as one pkt-line.
func pkt(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }

// A git daemon's refs are listed in this process, with no git process,
// and as git ls-remote lists them: exact names, prefixes, nothing else.
func TestListRemoteDaemonInProcess(t *testing.T) {
	needDial(t)
	eachMode(t, []repoMode{{name: "sha1", format: "sha1"}, {name: "sha256", format: "sha256"}}, func(t *testing.T) {
		r, _ := daemonHub(t)
		if !r.ListsInProcess("origin") {
			t.Fatal("ListsInProcess(origin) = false for a git:// remote")
		}
		trace := filepath.Join(t.TempDir(), "trace")
		t.Setenv("GIT_TRACE", trace)
		patterns := []string{StateRef, "refs/liza/queue/*"}
		got, err := r.ListRemote(context.Background(), "origin", patterns...)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(trace); len(b) > 0 {
			t.Fatalf("ListRemote ran git:\n%s", b)
		}
		t.Setenv("GIT_TRACE", "")
		want := lsRemote(t, r.Dir(), "origin", patterns...)
		if len(want) != 3 || !maps.Equal(got, want) {
			t.Fatalf("listed %v, git ls-remote says %v", got, want)
		}
	})
}

// A server of protocol version 0 (git before 2.18, or one that turned
// version 2 off) lists every ref at once; the listing reads it, as
// real git's upload-pack advertises it, and keeps only what was asked.
func TestListDaemonVersion0(t *testing.T) {
	needDial(t)
	r, hub := daemonHub(t)
	adv, err := exec.Command("git", "upload-pack", "--advertise-refs", hub).Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(adv), "version 2") {
		t.Fatalf("not a version 0 advertisement:\n%s", adv)
	}
	port := fakeServer(t, func(c net.Conn) { c.Write(adv) })
	got, err := listDaemon(context.Background(), daemonTarget{addr: loopback(port), host: "x", path: "/hub.git"}, r.algo, []string{StateRef, "refs/liza/queue/*"})
	if err != nil {
		t.Fatal(err)
	}
	want := lsRemote(t, r.Dir(), "origin", StateRef, "refs/liza/queue/*")
	if !maps.Equal(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
}

// fakeServer answers each connection with serve, after reading the
// client's first request; it stands for a hostile or broken server.
func fakeServer(t *testing.T, serve func(c net.Conn)) int {
	t.Helper()
	return listen(t, func(c net.Conn) {
		bufio.NewReader(c).Peek(4)
		serve(c)
	})
}

// listen serves each connection on loopback with serve, and then reads
// what else the client sends before closing, so that the close does not
// reset the connection.
func listen(t *testing.T, serve func(c net.Conn)) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
				c.(*net.TCPConn).CloseWrite()
				c.SetReadDeadline(time.Now().Add(2 * time.Second))
				io.Copy(io.Discard, c)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// What a server sends is read within bounds: a packet longer than git
// allows, a length that is not hex, an error packet, a silent server, a
// connection cut short and a flood of refs each end the listing with an
// error; lines that do not name a ref with a well-formed id are left out.
func TestListDaemonHostileServer(t *testing.T) {
	needDial(t)
	gitEnv(t)
	id := strings.Repeat("ab", 20)
	caps := "000eversion 2\n0017object-format=sha1\n0000"
	ref := func(s string) string { return pkt(s + "\n") }
	flood := func(c net.Conn) {
		w := bufio.NewWriter(c)
		w.WriteString(caps)
		for i := 0; i <= daemonMaxRefs; i++ {
			w.WriteString(ref(id + " refs/liza/queue/" + fmt.Sprintf("%016x", i)))
		}
		w.WriteString("0000")
		w.Flush()
	}
	bad := []struct {
		name  string
		serve func(c net.Conn)
		want  string
	}{
		{"long packet", func(c net.Conn) { c.Write([]byte("fff1" + strings.Repeat("x", 100))) }, "a pkt-line of 65521 bytes"},
		{"not hex", func(c net.Conn) { c.Write([]byte("zz10version 2\n")) }, "not a pkt-line"},
		{"error packet", func(c net.Conn) { c.Write([]byte(pkt("ERR access denied\n"))) }, "the remote says: access denied"},
		{"silent", func(c net.Conn) { time.Sleep(3 * time.Second) }, "timeout"},
		{"cut short", func(c net.Conn) { c.Write([]byte(caps + "0040" + id)) }, "EOF"},
		{"other format", func(c net.Conn) { c.Write([]byte("000eversion 2\n0019object-format=sha256\n0000")) }, "the remote's objects are sha256"},
		{"flood", flood, "over 65536 refs"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			port := fakeServer(t, c.serve)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			got, err := listDaemon(ctx, daemonTarget{addr: loopback(port), host: "x", path: "/h"}, algoSHA1, []string{"refs/liza/*"})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("listDaemon = %v, %v; want an error with %q", got, err, c.want)
			}
		})
	}
	port := fakeServer(t, func(c net.Conn) {
		var b strings.Builder
		b.WriteString(caps)
		for _, l := range []string{
			id + " refs/liza/state",
			id + " refs/liza/../state",                // not a ref name
			strings.Repeat("ab", 19) + " refs/liza/x", // an id cut short
			strings.Repeat("0", 40) + " refs/liza/y",  // the null id
			strings.Repeat("cd", 32) + " refs/liza/z", // an id of the other format
			id + " refs/heads/main",                   // not asked for
			id + " refs/liza/queue/0123456789abcdef symref-target:refs/liza/state",
		} {
			b.WriteString(ref(l))
		}
		b.WriteString("0000")
		c.Write([]byte(b.String()))
		// The request is read only now: it was one write.
		c.SetReadDeadline(time.Now().Add(time.Second))
	})
	got, err := listDaemon(context.Background(), daemonTarget{addr: loopback(port), host: "x", path: "/h"}, algoSHA1, []string{StateRef, "refs/liza/queue/*"})
	if err != nil {
		t.Fatal(err)
	}
	h := hashOf(t, id)
	want := map[string]Hash{StateRef: h, "refs/liza/queue/0123456789abcdef": h}
	if !maps.Equal(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
}

// The listing is made here only where git would connect straight to the
// url as given: any setting of the person's that could send git
// elsewhere or through something else leaves it to git.
func TestDaemonRemoteOnlyPlainGitURLs(t *testing.T) {
	needDial(t)
	urls := map[string]bool{
		"git://127.0.0.1:9999/hub.git": true,
		"git://hub.example/team/b.git": false, // a name: git resolves it
		"git://10.1.2.3/team/b.git":    true,
		"git://[::1]:9419/hub.git":     true,
		"git://[::1]/hub.git":          true,
		"git://u@10.1.2.3/b.git":       false,
		"git://10.1.2.3/b%20c.git":     false,
		"git://hub.example":            false,
		"git://hub.example/":           false,
		"git://10.1.2.3:0/b.git":       false,
		"git://10.1.2.3:x/b.git":       false,
		"git://10.1.2.3:99999/b.git":   false,
		"git://[fe80::1%25eth0]/b.git": false,
		"git://[::1/b.git":             false,
		"git://10.1.2.3/b\n.git":       false,
		"https://hub.example/b.git":    false,
		"ssh://hub.example/b.git":      false,
		"/srv/hub.git":                 false,
	}
	for u, want := range urls {
		if _, got := parseDaemonURL(u); got != want {
			t.Errorf("parseDaemonURL(%q) = %v, want %v", u, got, want)
		}
	}
	dir := newRepo(t)
	git(t, dir, "remote", "add", "origin", "git://127.0.0.1:9999/hub.git")
	if !open(t, dir).ListsInProcess("origin") {
		t.Fatal("a plain git:// remote is not listed in process")
	}
	settings := []struct {
		name   string
		config []string
		env    [2]string
	}{
		{"pushurl", []string{"remote.origin.pushurl", "git://elsewhere/hub.git"}, [2]string{}},
		{"two urls", []string{"--add", "remote.origin.url", "git://elsewhere/hub.git"}, [2]string{}},
		{"insteadOf", []string{"url.git://elsewhere/.insteadOf", "git://127.0.0.1:9999/"}, [2]string{}},
		{"uploadpack", []string{"remote.origin.uploadpack", "my-upload-pack"}, [2]string{}},
		{"protocol", []string{"protocol.git.allow", "never"}, [2]string{}},
		{"proxy in config", []string{"core.gitProxy", "my-proxy"}, [2]string{}},
		{"proxy command", nil, [2]string{"GIT_PROXY_COMMAND", "my-proxy"}},
		{"allowed protocols", nil, [2]string{"GIT_ALLOW_PROTOCOL", "https"}},
		{"proxy on the command line", nil, [2]string{"GIT_CONFIG_PARAMETERS", "'core.gitproxy'='my-proxy'"}},
	}
	for _, s := range settings {
		t.Run(s.name, func(t *testing.T) {
			d := newRepo(t)
			git(t, d, "remote", "add", "origin", "git://127.0.0.1:9999/hub.git")
			if s.config != nil {
				git(t, d, append([]string{"config"}, s.config...)...)
			}
			if s.env[0] != "" {
				t.Setenv(s.env[0], s.env[1])
			}
			if open(t, d).ListsInProcess("origin") {
				t.Fatalf("listed in process with %s", s.name)
			}
		})
	}
}

// A listing that fails here is asked of git, which says what went wrong
// as it would without git-liza.
func TestListRemoteDaemonFallsBackToGit(t *testing.T) {
	needDial(t)
	r, _ := daemonHub(t)
	port := fakeServer(t, func(c net.Conn) { c.Write([]byte(pkt("ERR access denied\n"))) })
	git(t, r.Dir(), "remote", "set-url", "origin", fmt.Sprintf("git://127.0.0.1:%d/hub.git", port))
	r = open(t, r.Dir())
	trace := filepath.Join(t.TempDir(), "trace")
	t.Setenv("GIT_TRACE", trace)
	_, err := r.ListRemote(context.Background(), "origin", StateRef)
	t.Setenv("GIT_TRACE", "")
	if err == nil || !strings.Contains(err.Error(), "(git ls-remote failed: fatal: remote error: access denied)") {
		t.Fatalf("ListRemote = %v, want git's error", err)
	}
	if b, _ := os.ReadFile(trace); !strings.Contains(string(b), "ls-remote") {
		t.Fatalf("git ls-remote did not run:\n%s", b)
	}
}

// A connection on loopback is often made before its socket is registered
// with the runtime's poller, which then sees no edge to wait for: each of
// many dials connects at once, and a refused one says so.
func TestDialDaemonConnects(t *testing.T) {
	needDial(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	for i := 0; i < 200; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := dialDaemon(ctx, loopback(port))
		cancel()
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		c.Close()
	}
	ln.Close()
	if _, err := dialDaemon(context.Background(), loopback(port)); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("dial to a closed port: %v, want connection refused", err)
	}
}
