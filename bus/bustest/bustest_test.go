package bustest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/framewire/framewire/bus"
	"github.com/framewire/framewire/bus/bustest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Each runs over both buses, each Pair carrying a call from caller to
// callee, and Kill ends a running call with ErrGone within the silence.
func TestEachPairCarriesACallAndKillEndsIt(t *testing.T) {
	var ran []string
	bustest.Each(t, bustest.Options(), func(t *testing.T, p bustest.Pair) {
		ran = append(ran, t.Name())
		started := make(chan struct{})
		svc, err := p.Callee.Serve(t.Context(), "svc.block", func(ctx context.Context, req []byte, _ func([]byte)) ([]byte, error) {
			if string(req) == "echo" {
				return req, nil
			}
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = svc.Stop() })
		if resp, err := p.Caller.Request(t.Context(), "svc.block", []byte("echo"), nil); err != nil || string(resp) != "echo" {
			t.Fatalf("echo: %q, %v", resp, err)
		}
		errc := make(chan error, 1)
		go func() {
			_, err := p.Caller.Request(t.Context(), "svc.block", nil, nil)
			errc <- err
		}()
		bustest.Within(t, started, bustest.Wait, "the handler started")
		killed := time.Now()
		p.Kill(svc)
		if err := bustest.Within(t, errc, bustest.Wait, "the call ended"); !errors.Is(err, bus.ErrGone) {
			t.Errorf("error %v, want bus.ErrGone", err)
		}
		if took, limit := time.Since(killed), bustest.Silence(bustest.Options())+time.Second; took > limit {
			t.Errorf("the call ended %v after the kill, want at most %v", took, limit)
		}
	})
	if len(ran) != 2 || ran[0] != t.Name()+"/local" || ran[1] != t.Name()+"/nats" {
		t.Errorf("subtests %q, want local and nats", ran)
	}
}

func TestSilenceIsHeartbeatTimesMissedBeats(t *testing.T) {
	if got := bustest.Silence(bustest.Options()); got != 200*time.Millisecond {
		t.Errorf("Silence(Options()) = %v, want 200ms", got)
	}
}
