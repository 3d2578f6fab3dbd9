package outputmetrics

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/framewire/framewire/internal/metricstest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTheOutputsSeriesCarryTheTransportsName(t *testing.T) {
	r := metricstest.NewReader(t)
	in, err := New(r.Provider.Meter("test"), "websocket")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in.LateFrames(ctx, 2)
	in.Underruns(ctx, 3)
	in.DroppedFrames(ctx, 4)
	in.HighWater(ctx, 7, Queue("websocket.outbound"))
	for name, want := range map[string]int64{"framewire.output.late_frames": 2, "framewire.output.underruns": 3, "framewire.output.dropped_frames": 4} {
		if got := r.Sums(t, name, "transport")["websocket"]; got != want {
			t.Errorf("%s{transport=websocket} = %d, want %d", name, got, want)
		}
	}
	if got := r.Counts(t, "framewire.queue.high_water", "queue")["websocket.outbound"]; got != 1 {
		t.Errorf("high water recorded %d times, want 1", got)
	}
}

func TestWithoutAMeterCountingAllocatesNothing(t *testing.T) {
	in, err := New(nil, "webrtc")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { in.LateFrames(ctx, 1); in.Underruns(ctx, 1) }); n != 0 {
		t.Errorf("%v allocations per count, want 0", n)
	}
}
