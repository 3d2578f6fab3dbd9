package bus_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/bus"
	"github.com/framewire/framewire/bus/bustest"
	"github.com/framewire/framewire/internal/natstest"
)

func TestRequestStreamsProgressThenTheResult(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		serve(t, p.Callee, "svc.echo", func(_ context.Context, req []byte, progress func([]byte)) ([]byte, error) {
			progress([]byte("one"))
			progress([]byte("two"))
			return append([]byte("echo "), req...), nil
		})
		var got []string
		resp, err := p.Caller.Request(t.Context(), "svc.echo", []byte("hi"), func(b []byte) { got = append(got, string(b)) })
		if err != nil {
			t.Fatal(err)
		}
		if string(resp) != "echo hi" {
			t.Errorf("result %q, want %q", resp, "echo hi")
		}
		if d := cmp.Diff([]string{"one", "two"}, got); d != "" {
			t.Errorf("progress (-want +got):\n%s", d)
		}
	})
}

func TestHandlerErrorReachesTheCallerAsText(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		serve(t, p.Callee, "svc.fail", func(context.Context, []byte, func([]byte)) ([]byte, error) {
			return nil, errors.New("the index is offline")
		})
		_, err := p.Caller.Request(t.Context(), "svc.fail", nil, nil)
		var re *bus.RemoteError
		if !errors.As(err, &re) {
			t.Fatalf("error %v, want a *RemoteError", err)
		}
		if d := cmp.Diff(bus.RemoteError{Subject: "svc.fail", Message: "the index is offline"}, *re); d != "" {
			t.Errorf("remote error (-want +got):\n%s", d)
		}
	})
}

func TestHandlerPanicIsAnError(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		serve(t, p.Callee, "svc.panic", func(context.Context, []byte, func([]byte)) ([]byte, error) {
			panic("boom")
		})
		_, err := p.Caller.Request(t.Context(), "svc.panic", nil, nil)
		var re *bus.RemoteError
		if !errors.As(err, &re) || re.Message != "handler panicked: boom" {
			t.Fatalf("error %v, want the panic as a remote error", err)
		}
	})
}

func TestCallerCancelEndsTheRemoteWork(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		blk := newBlocker()
		serve(t, p.Callee, "svc.block", blk.handle)
		ctx, cancel := context.WithCancel(t.Context())
		res := requestAsync(t, ctx, p.Caller, "svc.block", nil)
		bustest.Within(t, blk.started, bustest.Wait, "the handler started")
		cancel()
		r := bustest.Within(t, res, bustest.Wait, "Request returned")
		if !errors.Is(r.err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", r.err)
		}
		bustest.Within(t, blk.ended, bustest.Wait, "the handler's ctx ended")
	})
}

func TestCalleeDeathIsAnErrorWithinAFewBeats(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		blk := newBlocker()
		svc := serve(t, p.Callee, "svc.block", blk.handle)
		res := requestAsync(t, t.Context(), p.Caller, "svc.block", nil)
		bustest.Within(t, blk.started, bustest.Wait, "the handler started")
		time.Sleep(3 * testOptions.Heartbeat) // alive while it beats
		select {
		case r := <-res:
			t.Fatalf("Request returned %v while the callee worked", r.err)
		default:
		}
		died := time.Now()
		p.Kill(svc)
		r := bustest.Within(t, res, bustest.Wait, "Request returned")
		if !errors.Is(r.err, bus.ErrGone) {
			t.Errorf("error %v, want ErrGone", r.err)
		}
		if limit := bustest.Silence(testOptions) + time.Second; time.Since(died) > limit { // a few beats, with room for a loaded machine
			t.Errorf("the death was noticed after %v, want at most %v", time.Since(died), limit)
		}
		bustest.Within(t, blk.ended, bustest.Wait, "the handler's ctx ended")
		bustest.Within(t, svc.Done(), bustest.Wait, "the service stopped")
	})
}

func TestStoppedServiceEndsItsCallsAtOnce(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		blk := newBlocker()
		svc := serve(t, p.Callee, "svc.block", blk.handle)
		res := requestAsync(t, t.Context(), p.Caller, "svc.block", nil)
		bustest.Within(t, blk.started, bustest.Wait, "the handler started")
		if err := svc.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		r := bustest.Within(t, res, bustest.Wait, "Request returned")
		if !errors.Is(r.err, bus.ErrGone) {
			t.Errorf("error %v, want ErrGone", r.err)
		}
		if r.took > bustest.Silence(testOptions)+time.Second {
			t.Errorf("took %v", r.took)
		}
		if _, err := p.Caller.Request(t.Context(), "svc.block", nil, nil); !errors.Is(err, bus.ErrNoResponders) {
			t.Errorf("after Stop: error %v, want ErrNoResponders", err)
		}
	})
}

func TestCallerGoneEndsTheRemoteWork(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		if p.DropCaller == nil {
			t.Skip("in one process the caller cannot vanish without its ctx")
		}
		blk := newBlocker()
		serve(t, p.Callee, "svc.block", blk.handle)
		res := requestAsync(t, t.Context(), p.Caller, "svc.block", nil)
		bustest.Within(t, blk.started, bustest.Wait, "the handler started")
		p.DropCaller()
		if r := bustest.Within(t, res, bustest.Wait, "Request returned"); r.err == nil {
			t.Error("Request succeeded on a closed connection")
		}
		bustest.Within(t, blk.ended, bustest.Wait, "the handler's ctx ended")
	})
}

func TestNoResponders(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		start := time.Now()
		_, err := p.Caller.Request(t.Context(), "svc.nobody", nil, nil)
		if !errors.Is(err, bus.ErrNoResponders) {
			t.Errorf("error %v, want ErrNoResponders", err)
		}
		if time.Since(start) > bustest.Silence(testOptions) {
			t.Errorf("took %v: no responders must not wait for silence", time.Since(start))
		}
	})
}

func TestPayloadsOverTheCap(t *testing.T) {
	big := []byte(strings.Repeat("x", testOptions.MaxPayload+1))
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		var gotProgress []string
		serve(t, p.Callee, "svc.big", func(_ context.Context, req []byte, progress func([]byte)) ([]byte, error) {
			progress(big)             // dropped
			progress([]byte("small")) // delivered
			if string(req) == "big result" {
				return big, nil
			}
			return []byte("ok"), nil
		})
		if _, err := p.Caller.Request(t.Context(), "svc.big", big, nil); !errors.Is(err, bus.ErrTooLarge) {
			t.Errorf("big request: error %v, want ErrTooLarge", err)
		}
		if _, err := p.Caller.Request(t.Context(), "svc.big", []byte("big result"), nil); !errors.Is(err, bus.ErrTooLarge) {
			t.Errorf("big result: error %v, want ErrTooLarge", err)
		}
		resp, err := p.Caller.Request(t.Context(), "svc.big", nil, func(b []byte) { gotProgress = append(gotProgress, string(b)) })
		if err != nil || string(resp) != "ok" {
			t.Fatalf("Request = %q, %v", resp, err)
		}
		if d := cmp.Diff([]string{"small"}, gotProgress); d != "" {
			t.Errorf("progress of the last call (-want +got):\n%s", d)
		}
	})
}

func TestCallsOverTheLimitAreBusy(t *testing.T) {
	o := testOptions
	o.MaxCalls = 1
	bustest.Each(t, o, func(t *testing.T, p bustest.Pair) {
		blk := newBlocker()
		serve(t, p.Callee, "svc.block", blk.handle)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		requestAsync(t, ctx, p.Caller, "svc.block", nil)
		bustest.Within(t, blk.started, bustest.Wait, "the first call started")
		if _, err := p.Caller.Request(t.Context(), "svc.block", nil, nil); !errors.Is(err, bus.ErrBusy) {
			t.Errorf("second call: error %v, want ErrBusy", err)
		}
	})
}

func TestBadSubjects(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		for _, s := range []string{"", "a..b", "a.*", "a.>", "a b", strings.Repeat("a", 257)} {
			if _, err := p.Caller.Request(t.Context(), s, nil, nil); err == nil {
				t.Errorf("Request(%q) succeeded", s)
			}
			if svc, err := p.Callee.Serve(t.Context(), s, blockerHandler); err == nil {
				_ = svc.Stop()
				t.Errorf("Serve(%q) succeeded", s)
			}
		}
	})
}

var blockerHandler bus.Handler = func(ctx context.Context, _ []byte, _ func([]byte)) ([]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestNATSPayloadsOverTheServersMaxPayload(t *testing.T) {
	bustest.LeakCheck(t)
	url := natstest.Embedded(t) // max_payload: 1 MiB
	o := testOptions
	o.MaxPayload = 4 << 20 // the bus allows more than the server
	caller, callee := bus.NATS(natstest.Connect(t, url), o), bus.NATS(natstest.Connect(t, url), o)
	big := make([]byte, 2<<20)
	serve(t, callee, "svc.big", func(context.Context, []byte, func([]byte)) ([]byte, error) { return big, nil })
	if _, err := caller.Request(t.Context(), "svc.big", big, nil); !errors.Is(err, bus.ErrTooLarge) {
		t.Errorf("request: error %v, want ErrTooLarge", err)
	}
	start := time.Now()
	if _, err := caller.Request(t.Context(), "svc.big", nil, nil); !errors.Is(err, bus.ErrTooLarge) {
		t.Errorf("result: error %v, want ErrTooLarge", err)
	}
	if took := time.Since(start); took > bustest.Silence(o) {
		t.Errorf("took %v: an unsendable result must be reported, not waited out", took)
	}
}

func TestASlowCallerIsNotADeadCallee(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		serve(t, p.Callee, "svc.chatty", func(_ context.Context, _ []byte, progress func([]byte)) ([]byte, error) {
			for _, s := range []string{"a", "b", "c"} {
				progress([]byte(s))
			}
			return []byte("done"), nil
		})
		var got []string
		resp, err := p.Caller.Request(t.Context(), "svc.chatty", nil, func(b []byte) {
			got = append(got, string(b))
			time.Sleep(bustest.Silence(testOptions) + testOptions.Heartbeat) // longer than the callee may be silent
		})
		if err != nil || string(resp) != "done" {
			t.Fatalf("Request = %q, %v", resp, err)
		}
		if d := cmp.Diff([]string{"a", "b", "c"}, got); d != "" {
			t.Errorf("progress (-want +got):\n%s", d)
		}
	})
}

func TestServicesOfOneSubjectShareItsRequests(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		for _, name := range []string{"a", "b"} {
			serve(t, p.Callee, "svc.shared", func(context.Context, []byte, func([]byte)) ([]byte, error) {
				return []byte(name), nil
			})
		}
		served := map[string]int{}
		for range 40 {
			resp, err := p.Caller.Request(t.Context(), "svc.shared", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			served[string(resp)]++
		}
		if served["a"] == 0 || served["b"] == 0 || served["a"]+served["b"] != 40 {
			t.Errorf("served %v, want 40 requests shared by a and b", served)
		}
	})
}
