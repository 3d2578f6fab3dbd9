package webrtc

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// closedWithin reports whether the server closed conn within d: a read
// that ends with EOF or a reset rather than the deadline.
func closedWithin(conn net.Conn, r io.Reader, d time.Duration) bool {
	_ = conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, r)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// Row 4: 20 connections dripping a body 1 byte / 5 s, and idle keep-alive
// connections, were all still open at 45 s: only ReadHeaderTimeout was
// set. Serve's ReadTimeout and IdleTimeout close them (here scaled down).
func TestServeClosesDrippedBodiesAndIdleKeepAlives(t *testing.T) {
	if d := (ServeOptions{}).withDefaults(offlineSession(t).srv); d.ReadTimeout > 15*time.Second || d.IdleTimeout > 30*time.Second {
		t.Errorf("default ReadTimeout %v, IdleTimeout %v: a dripping or idle connection outlives 30 s", d.ReadTimeout, d.IdleTimeout)
	}
	h := newHarness(t, Options{})
	s := startServe(t, h.srv, ServeOptions{ReadTimeout: time.Second, IdleTimeout: 500 * time.Millisecond})
	addr := s.url[len("http://"):]

	t.Run("20 dripped bodies", func(t *testing.T) {
		var wg sync.WaitGroup
		closed := make(chan time.Duration, 20)
		start := time.Now()
		for range 20 {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, "POST /start HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"); err != nil {
				t.Fatal(err)
			}
			wg.Go(func() { // a byte every 200 ms: 200 s for the whole body
				for range 999 {
					time.Sleep(200 * time.Millisecond)
					if _, err := conn.Write([]byte(" ")); err != nil {
						return
					}
				}
			})
			wg.Go(func() {
				if closedWithin(conn, conn, 10*time.Second) {
					closed <- time.Since(start)
				} else {
					closed <- -1
				}
				conn.Close()
			})
		}
		wg.Wait()
		close(closed)
		for d := range closed {
			if d < 0 || d > 5*time.Second {
				t.Errorf("a dripping connection closed after %v (-1: still open at 10 s), want about the 1 s ReadTimeout", d)
			}
		}
		h.srv.mu.Lock()
		n := h.srv.starts.len()
		h.srv.mu.Unlock()
		if n != 0 {
			t.Errorf("%d /start ids from bodies that never arrived", n)
		}
	})

	t.Run("idle keep-alives", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, "POST /start HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Close {
			t.Fatalf("/start: %d, close %v; want a 200 on a kept-alive connection", resp.StatusCode, resp.Close)
		}
		start := time.Now()
		if !closedWithin(conn, br, 5*time.Second) {
			t.Fatal("an idle keep-alive connection was still open 5 s after its request, with a 500 ms IdleTimeout")
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("the idle connection closed after %v, want about the 500 ms IdleTimeout", d)
		}
	})
}
