package signalmetrics_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/framewire/framewire/internal/metricstest"
	"github.com/framewire/framewire/internal/signalmetrics"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestInstrumentsCountResponsesByStatusAndRefusalsByLimit(t *testing.T) {
	r := metricstest.NewReader(t)
	in, err := signalmetrics.New(r.Provider.Meter("test"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in.Response(ctx, 200)
	in.Response(ctx, 200)
	in.Response(ctx, 503)
	in.Refused(ctx, "sessions")
	if d := cmp.Diff(map[string]int64{"200": 2, "503": 1}, r.Sums(t, "framewire.signalling.responses", "http.response.status_code")); d != "" {
		t.Errorf("responses (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]int64{"sessions": 1}, r.Sums(t, "framewire.limits.refused", "limit")); d != "" {
		t.Errorf("refusals (-want +got):\n%s", d)
	}
}

// Without a meter the instruments are no-ops that allocate nothing once
// a label set was built.
func TestANilMeterCountsNothingAndAllocatesNothing(t *testing.T) {
	in, err := signalmetrics.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in.Response(ctx, 200)
	in.Refused(ctx, "sessions")
	if n := testing.AllocsPerRun(100, func() { in.Response(ctx, 200); in.Refused(ctx, "sessions") }); n != 0 {
		t.Errorf("%v allocations per count, want 0", n)
	}
}
