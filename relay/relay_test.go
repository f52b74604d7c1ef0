package relay

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
)

// The relay carries git's request to the server and the server's answer
// back, whole and in order, and ends when the server closes.
func TestRelayCarriesBothWays(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		// Answer every line with its reversal, many small writes each.
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			for i := len(line) - 1; i >= 0; i-- {
				c.Write([]byte{line[i]})
			}
			c.Write([]byte("\n"))
			if line == "bye" {
				return
			}
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	in := strings.NewReader("0014command=ls-refs\nagent\nbye\n")
	var out, errs bytes.Buffer
	if code := Main([]string{"127.0.0.1", port}, in, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	if want := "sfer-sl=dnammoc4100\ntnega\neyb\n"; out.String() != want {
		t.Fatalf("relayed %q, want %q", out.String(), want)
	}
}

// What git passes is checked before anything is dialled: one line each.
func TestRelayRefusesBadArguments(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"127.0.0.1"},
		{"127.0.0.1", "0"},
		{"127.0.0.1", "65536"},
		{"127.0.0.1", "22x"},
		{"-oProxyCommand=x", "22"},
		{"host with space", "22"},
		{"evil\x1b[2J", "22"},
		{strings.Repeat("a", 256), "22"},
	} {
		var errs bytes.Buffer
		if code := Main(args, strings.NewReader(""), io.Discard, &errs); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
		if n := strings.Count(errs.String(), "\n"); n != 1 || strings.ContainsRune(errs.String(), 0x1b) {
			t.Errorf("%q: stderr %q, want one line without escapes", args, errs.String())
		}
	}
}

// A server that is not there is one line and exit 1.
func TestRelayNoServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	var errs bytes.Buffer
	if code := Main([]string{"127.0.0.1", strconv.Itoa(port)}, strings.NewReader(""), io.Discard, &errs); code != 1 {
		t.Fatalf("exit %d, want 1 (%s)", code, errs.String())
	}
	if strings.Count(errs.String(), "\n") != 1 {
		t.Fatalf("stderr %q, want one line", errs.String())
	}
}
