package main

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// proxies are the connection counters of the scripts' proxies, by script.
var proxies sync.Map // *testscript.TestScript -> *atomic.Int64

// cmdProxy starts a TCP proxy on 127.0.0.1 in front of ADDR and sets VAR
// to its address: proxy VAR ADDR [DELAY]. With DELAY, every chunk of
// bytes is held that long each way, as a hub far away would (a round trip
// then costs twice DELAY). It counts the connections made through it, for
// conns.
func cmdProxy(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: proxy VAR ADDR [DELAY]")
	}
	var delay time.Duration
	if len(args) == 3 {
		d, err := time.ParseDuration(args[2])
		ts.Check(err)
		delay = d
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	count := new(atomic.Int64)
	proxies.Store(ts, count)
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			count.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				s, err := net.Dial("tcp", args[1])
				if err != nil {
					return
				}
				defer s.Close()
				done := make(chan struct{}, 2)
				go func() { relayDelayed(s, c, delay); done <- struct{}{} }()
				go func() { relayDelayed(c, s, delay); done <- struct{}{} }()
				<-done
				<-done
			}()
		}
	}()
	ts.Defer(func() {
		l.Close()
		proxies.Delete(ts)
	})
	ts.Setenv(args[0], l.Addr().String())
}

// relayDelayed copies src to dst, each chunk delay after it was read, then
// closes dst for writing.
func relayDelayed(dst, src net.Conn, delay time.Duration) {
	type chunk struct {
		at time.Time
		b  []byte
	}
	chunks := make(chan chunk, 256)
	go func() {
		defer close(chunks)
		for {
			b := make([]byte, 32<<10)
			n, err := src.Read(b)
			if n > 0 {
				chunks <- chunk{time.Now().Add(delay), b[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range chunks {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, src)
}

// cmdConns prints how many connections the script's proxy took since the
// last conns (or since it started) and starts counting again: conns [MAX]
// fails when there were more than MAX.
func cmdConns(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 1 {
		ts.Fatalf("usage: conns [MAX]")
	}
	v, ok := proxies.Load(ts)
	if !ok {
		ts.Fatalf("conns: no proxy started")
	}
	n := v.(*atomic.Int64).Swap(0)
	fmt.Fprintf(ts.Stdout(), "%d\n", n)
	if len(args) == 1 {
		most, err := strconv.Atoi(args[0])
		ts.Check(err)
		if n > int64(most) {
			ts.Fatalf("%d connections to the hub, want at most %d", n, most)
		}
	}
}
