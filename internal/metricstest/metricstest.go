package metricstest

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Reader is a MeterProvider whose instruments a test reads back through
// an SDK ManualReader, so a test checks the real instruments a package
// creates, not a fake of them. Its methods are safe for concurrent use.
type Reader struct {
	// Provider is the MeterProvider to give the package under test.
	Provider *sdkmetric.MeterProvider
	reader   *sdkmetric.ManualReader
}

// NewReader returns a Reader whose provider is shut down when the test
// ends.
func NewReader(t testing.TB) *Reader {
	t.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return &Reader{Provider: mp, reader: r}
}

// Metric returns the metric called name as collected now, and whether
// any instrument recorded it.
func (r *Reader) Metric(t testing.TB, name string) (metricdata.Metrics, bool) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("collect metrics: %v", err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

// Sums returns an int64 counter's values by the value of its attribute
// key ("" for points without it); nil when nothing recorded the counter.
func (r *Reader) Sums(t testing.TB, name string, key attribute.Key) map[string]int64 {
	t.Helper()
	sum, ok := data[metricdata.Sum[int64]](t, r, name, "an int64 sum")
	if !ok {
		return nil
	}
	return byKey(sum.DataPoints, key, func(p metricdata.DataPoint[int64]) (attribute.Set, int64) { return p.Attributes, p.Value })
}

// Counts returns how many values an int64 histogram recorded, by the
// value of its attribute key; nil when nothing recorded it.
func (r *Reader) Counts(t testing.TB, name string, key attribute.Key) map[string]uint64 {
	t.Helper()
	h, ok := data[metricdata.Histogram[int64]](t, r, name, "an int64 histogram")
	if !ok {
		return nil
	}
	return byKey(h.DataPoints, key, func(p metricdata.HistogramDataPoint[int64]) (attribute.Set, uint64) { return p.Attributes, p.Count })
}

// Gauge returns an int64 gauge's last value, and whether it has one.
func (r *Reader) Gauge(t testing.TB, name string) (int64, bool) {
	t.Helper()
	g, ok := data[metricdata.Gauge[int64]](t, r, name, "an int64 gauge")
	if !ok || len(g.DataPoints) == 0 {
		return 0, false
	}
	return g.DataPoints[len(g.DataPoints)-1].Value, true
}

// data returns the data of the metric called name as collected now, and
// whether any instrument recorded it; it fails the test when the data is
// not a D (what names D in the message).
func data[D metricdata.Aggregation](t testing.TB, r *Reader, name, what string) (D, bool) {
	t.Helper()
	var d D
	m, ok := r.Metric(t, name)
	if !ok {
		return d, false
	}
	if d, ok = m.Data.(D); !ok {
		t.Fatalf("%s is a %T, not %s", name, m.Data, what)
	}
	return d, true
}

// byKey adds up what point says of each point by the value of the
// point's attribute key ("" for points without it).
func byKey[P any, V int64 | uint64](points []P, key attribute.Key, point func(P) (attribute.Set, V)) map[string]V {
	got := map[string]V{}
	for _, p := range points {
		attrs, n := point(p)
		v, _ := attrs.Value(key)
		got[v.String()] += n
	}
	return got
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
