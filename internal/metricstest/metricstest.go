package metricstest

import (
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Signalling records SignallingResponse and LimitRefused calls: the
// part of webrtc.Metrics and cluster.Metrics that counts requests. Embed
// it in a fake that records more. Its zero value is ready; it is safe for
// concurrent use.
type Signalling struct {
	mu       sync.Mutex
	statuses map[int]int
	refused  map[string]int
}

// SignallingResponse counts one response by status.
func (s *Signalling) SignallingResponse(_ context.Context, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.statuses == nil {
		s.statuses = map[int]int{}
	}
	s.statuses[status]++
}

// LimitRefused counts one refusal by limit.
func (s *Signalling) LimitRefused(_ context.Context, limit string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refused == nil {
		s.refused = map[string]int{}
	}
	s.refused[limit]++
}

// Statuses returns the responses counted so far, by status.
func (s *Signalling) Statuses() map[int]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.statuses)
}

// Refused returns the refusals counted so far, by limit.
func (s *Signalling) Refused() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.refused)
}

// FreeAddr returns a loopback address HOST:PORT that was free a moment
// ago, for a program under test to serve its metrics on.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// WaitFor reads the Prometheus endpoint at url with client until the text
// holds every one of want, and returns it; it fails the test after 5 s.
func WaitFor(t testing.TB, client *http.Client, url string, want ...string) string {
	t.Helper()
	var body string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if res, err := client.Get(url); err == nil {
			b, _ := io.ReadAll(io.LimitReader(res.Body, 16<<20))
			_ = res.Body.Close()
			if body = string(b); containsAll(body, want) {
				return body
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the metrics at %s lack one of %q:\n%.3000s", url, want, body)
		}
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
