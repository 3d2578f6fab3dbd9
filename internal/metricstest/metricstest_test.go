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
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

func TestReaderReadsBackWhatTheInstrumentsRecorded(t *testing.T) {
	r := NewReader(t)
	if r.Sums(t, "c", "k") != nil {
		t.Fatal("a new reader has a counter")
	}
	m := r.Provider.Meter("test")
	c, _ := m.Int64Counter("c")
	h, _ := m.Int64Histogram("h")
	g, _ := m.Int64Gauge("g")
	ctx := context.Background()
	c.Add(ctx, 2, metric.WithAttributes(attribute.Int("k", 200)))
	c.Add(ctx, 1, metric.WithAttributes(attribute.Int("k", 503)))
	c.Add(ctx, 1, metric.WithAttributes(attribute.Int("k", 200)))
	h.Record(ctx, 7, metric.WithAttributes(attribute.String("q", "a")))
	h.Record(ctx, 9, metric.WithAttributes(attribute.String("q", "a")))
	g.Record(ctx, 3)
	if d := cmp.Diff(map[string]int64{"200": 3, "503": 1}, r.Sums(t, "c", "k")); d != "" {
		t.Errorf("sums (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]uint64{"a": 2}, r.Counts(t, "h", "q")); d != "" {
		t.Errorf("counts (-want +got):\n%s", d)
	}
	if v, ok := r.Gauge(t, "g"); !ok || v != 3 {
		t.Errorf("gauge %d %v, want 3", v, ok)
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
