package refstore

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
)

// A ref listing of a git daemon's repository, made here rather than by
// git ls-remote. A clone waiting for its turn on a hub asks the hub's
// refs many times a minute. Through git, each look is a git process here
// and, on git:// (as through the relay), a relay process too; and git
// writes its request as many small packets, which the server's delayed
// acknowledgement held for about 40 ms a look when git connected itself.
// Asked here, a look is one connection, its request one write, and the
// daemon's upload-pack the only process it starts. What it reads is only
// ever a hint (when to fetch, whose turn it is): the fetch that follows
// is git's, and checked as always.
//
// It is used only where git itself would connect straight to the url the
// config gives, with no setting of the user's in between: a git:// url
// (one, no pushurl, no url.*.insteadOf) whose host is an IP address, no
// proxy command, no protocol restriction, no other upload-pack program,
// on Linux. Anything else, and any failure here, leaves the listing to
// git. (A host name would need a resolver: Go's net package, which makes
// the program a dynamically linked one, and every short command 2 ms
// slower to start; see dialDaemon.)

// daemonTimeout bounds a listing: connecting, asking and reading.
const daemonTimeout = 10 * time.Second

// daemonMaxRefs bounds how many refs a listing reads.
const daemonMaxRefs = 1 << 16

// daemonTarget is a git daemon's repository: the address and port to
// dial, the host as the url names it, and the path to ask for.
type daemonTarget struct {
	addr       netip.AddrPort
	host, path string
}

// daemonRemote says where remote's git daemon is, when git would connect
// to it as its url says (see above).
func (r *Repo) daemonRemote(remote string) (daemonTarget, bool) {
	if !canDialDaemon || r.plumbing != "" || os.Getenv("GIT_PROXY_COMMAND") != "" || os.Getenv("GIT_ALLOW_PROTOCOL") != "" {
		return daemonTarget{}, false
	}
	r.configOnce.Do(r.loadConfig)
	var urls []string
	for _, e := range r.config {
		switch {
		case e.Key == "remote."+remote+".url":
			urls = append(urls, e.Value)
		case e.Key == "remote."+remote+".pushurl", e.Key == "remote."+remote+".uploadpack",
			e.Key == "core.gitproxy", strings.HasPrefix(e.Key, "protocol."):
			return daemonTarget{}, false
		}
	}
	for k := range configParameters() {
		if k == "core.gitproxy" || strings.HasPrefix(k, "protocol.") || k == "remote."+remote+".url" {
			return daemonTarget{}, false
		}
	}
	if len(urls) != 1 || r.rewritesURLs() {
		return daemonTarget{}, false
	}
	return parseDaemonURL(urls[0])
}

// ListsInProcess says whether ListRemote lists remote's refs in this
// process (a git daemon's, see above): a look that costs no process here.
func (r *Repo) ListsInProcess(remote string) bool {
	_, ok := r.daemonRemote(remote)
	return ok
}

// parseDaemonURL reads git://HOST[:PORT]/PATH, refusing what git would
// read otherwise than plainly (user info, escapes, controls).
func parseDaemonURL(url string) (daemonTarget, bool) {
	rest, ok := strings.CutPrefix(url, "git://")
	if !ok {
		return daemonTarget{}, false
	}
	slash := strings.IndexByte(rest, '/')
	if slash <= 0 {
		return daemonTarget{}, false
	}
	hostport, path := rest[:slash], rest[slash:]
	if strings.ContainsAny(hostport, "@%") || strings.ContainsAny(path, "%") || len(path) < 2 ||
		strings.ContainsFunc(url, func(c rune) bool { return c < ' ' || c == 0x7f }) {
		return daemonTarget{}, false
	}
	host, port := hostport, "9418"
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return daemonTarget{}, false
		}
		host = hostport[1:end]
		if tail := hostport[end+1:]; tail != "" {
			p, ok := strings.CutPrefix(tail, ":")
			if !ok {
				return daemonTarget{}, false
			}
			port = p
		}
	} else if h, p, ok := strings.Cut(hostport, ":"); ok {
		host, port = h, p
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return daemonTarget{}, false
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || ip.Zone() != "" {
		return daemonTarget{}, false
	}
	return daemonTarget{addr: netip.AddrPortFrom(ip, uint16(n)), host: hostport, path: path}, true
}

// daemonSession is one connection to a git daemon's upload-pack, past
// its greeting: a version 2 server's capabilities, or a version 0 or 1
// server's advertisement of every ref.
type daemonSession struct {
	conn *daemonConn
	rd   *pktReader
	algo hashAlgo
	// v0 holds the lines of a version 0 advertisement; nil for version 2.
	v0 []string
}

// openDaemon connects to t and reads its greeting. The caller closes it.
func openDaemon(ctx context.Context, t daemonTarget, algo hashAlgo) (*daemonSession, error) {
	conn, err := dialDaemon(ctx, t.addr)
	if err != nil {
		return nil, err
	}
	s := &daemonSession{conn: conn, rd: &pktReader{r: bufio.NewReaderSize(conn, 64<<10)}, algo: algo}
	if err := s.greet(t); err != nil {
		conn.Close()
		return nil, err
	}
	return s, nil
}

func (s *daemonSession) greet(t daemonTarget) error {
	// The service request asks for protocol version 2, as git does.
	var req bytes.Buffer
	pktWrite(&req, "git-upload-pack "+t.path+"\x00host="+t.host+"\x00\x00version=2\x00")
	if _, err := s.conn.Write(req.Bytes()); err != nil {
		return err
	}
	line, err := s.rd.next()
	if err != nil {
		return err
	}
	if line != "version 2" {
		// A server of protocol version 0 or 1 lists every ref at once.
		if line == "version 1" {
			if line, err = s.rd.next(); err != nil {
				return err
			}
		}
		for n := 0; line != flushPkt; n++ {
			if n >= daemonMaxRefs {
				return fmt.Errorf("over %d refs", daemonMaxRefs)
			}
			s.v0 = append(s.v0, line)
			if line, err = s.rd.next(); err != nil {
				return err
			}
		}
		if s.v0 == nil {
			s.v0 = []string{}
		}
		return nil
	}
	format := "sha1"
	for {
		line, err := s.rd.next()
		if err != nil {
			return err
		}
		if line == flushPkt {
			break
		}
		if f, ok := strings.CutPrefix(line, "object-format="); ok {
			format = f
		}
	}
	if format != s.algo.String() {
		return fmt.Errorf("the remote's objects are %s, this repository's %s", format, s.algo.String())
	}
	return nil
}

// Close ends the session; a version 0 one first says it wants nothing,
// as git does.
func (s *daemonSession) Close() {
	if s.v0 != nil {
		_, _ = s.conn.Write([]byte("0000"))
	}
	s.conn.Close()
}

// lsRefs lists the refs that patterns name (exact names, or prefixes
// ending in "/*").
func (s *daemonSession) lsRefs(patterns []string) (map[string]Hash, error) {
	got := map[string]Hash{}
	if s.v0 != nil {
		for _, line := range s.v0 {
			ref, _, _ := strings.Cut(line, "\x00") // capabilities follow the first
			id, name, _ := strings.Cut(ref, " ")
			addListed(got, id, name, s.algo, patterns)
		}
		return got, nil
	}
	var req bytes.Buffer
	pktWrite(&req, "command=ls-refs\n")
	pktWrite(&req, "object-format="+s.algo.String()+"\n")
	req.WriteString("0001")
	for _, p := range patterns {
		pktWrite(&req, "ref-prefix "+strings.TrimSuffix(p, "*")+"\n")
	}
	req.WriteString("0000")
	if _, err := s.conn.Write(req.Bytes()); err != nil {
		return nil, err
	}
	for n := 0; ; n++ {
		line, err := s.rd.next()
		if err != nil {
			return nil, err
		}
		if line == flushPkt {
			return got, nil
		}
		if n >= daemonMaxRefs {
			return nil, fmt.Errorf("over %d refs", daemonMaxRefs)
		}
		id, rest, _ := strings.Cut(line, " ")
		name, _, _ := strings.Cut(rest, " ") // attributes (symref-target, peeled) follow
		addListed(got, id, name, s.algo, patterns)
	}
}

// listDaemon lists the refs of t that patterns name, as ListRemote.
func listDaemon(ctx context.Context, t daemonTarget, algo hashAlgo, patterns []string) (map[string]Hash, error) {
	ctx, cancel := context.WithTimeout(ctx, daemonTimeout)
	defer cancel()
	s, err := openDaemon(ctx, t, algo)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.lsRefs(patterns)
}

// addListed adds the ref name at id to got when a pattern names it and
// both are well formed.
func addListed(got map[string]Hash, id, name string, algo hashAlgo, patterns []string) {
	h, ok := ParseHash(id)
	if !ok || len(id) != 2*algo.size() || h.IsZero() || !validRefPath(name) {
		return
	}
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(name, prefix) || name == p {
			got[name] = h
			return
		}
	}
}

// flushPkt is what pktReader.next returns for a flush packet ("0000").
const flushPkt = "\x00flush"

// pktWrite appends s to b as one pkt-line.
func pktWrite(b *bytes.Buffer, s string) {
	fmt.Fprintf(b, "%04x%s", len(s)+4, s)
}

// pktReader reads pkt-lines, each at most 65520 bytes, as git sends them.
type pktReader struct {
	r *bufio.Reader
}

// next is the next packet's payload without its trailing newline, or
// flushPkt for a flush (and a delimiter or response-end packet).
func (p *pktReader) next() (string, error) {
	b, err := p.raw()
	if err != nil {
		return "", err
	}
	if b == nil {
		return flushPkt, nil
	}
	if bytes.HasPrefix(b, []byte("ERR ")) {
		return "", fmt.Errorf("the remote says: %s", strings.TrimSpace(string(b[4:])))
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// raw is the next packet's payload as sent; nil for a flush, delimiter
// or response-end packet.
func (p *pktReader) raw() ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(p.r, head[:]); err != nil {
		return nil, err
	}
	n, err := strconv.ParseUint(string(head[:]), 16, 16)
	if err != nil {
		return nil, fmt.Errorf("not a pkt-line: %q", head[:])
	}
	if n < 4 {
		return nil, nil
	}
	if n > 65520 {
		return nil, fmt.Errorf("a pkt-line of %d bytes", n)
	}
	buf := make([]byte, n-4)
	if _, err := io.ReadFull(p.r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}
