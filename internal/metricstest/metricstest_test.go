package metricstest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSignallingCountsByStatusAndLimit(t *testing.T) {
	var s Signalling
	if s.Statuses() != nil || s.Refused() != nil {
		t.Fatalf("a new recorder has counts: %v %v", s.Statuses(), s.Refused())
	}
	ctx := context.Background()
	s.SignallingResponse(ctx, 200)
	s.SignallingResponse(ctx, 200)
	s.SignallingResponse(ctx, 503)
	s.LimitRefused(ctx, "sessions")
	if d := cmp.Diff(map[int]int{200: 2, 503: 1}, s.Statuses()); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]int{"sessions": 1}, s.Refused()); d != "" {
		t.Errorf("refusals (-want +got):\n%s", d)
	}
}

// WaitFor reads until every wanted line is there.
func TestWaitForReadsUntilTheTextHoldsEveryLine(t *testing.T) {
	var reads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		n := reads.Add(1)
		fmt.Fprintln(w, "a_total 1")
		if n >= 3 {
			fmt.Fprintln(w, "b_total 2")
		}
	}))
	defer srv.Close()
	body := WaitFor(t, srv.Client(), srv.URL+"/metrics", "a_total 1", "b_total 2")
	if !strings.Contains(body, "b_total 2") || reads.Load() < 3 {
		t.Errorf("returned after %d reads:\n%s", reads.Load(), body)
	}
}
