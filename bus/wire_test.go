package bus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"

	"github.com/framewire/framewire/bus"
	"github.com/framewire/framewire/bus/bustest"
	"github.com/framewire/framewire/internal/natstest"
)

// These tests speak the wire protocol by hand, as another implementation
// of docs/decisions/agent-bus.md would.

func TestWireACallAsDocumented(t *testing.T) {
	bustest.LeakCheck(t)
	url := natstest.Embedded(t)
	raw, callee := natstest.Connect(t, url), natstest.Connect(t, url)
	serve(t, bus.NATS(callee, testOptions), "svc.wire", func(_ context.Context, req []byte, progress func([]byte)) ([]byte, error) {
		progress([]byte("half"))
		return append(req, '!'), nil
	})
	inbox := raw.NewInbox()
	sub, err := raw.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.PublishMsg(&nats.Msg{Subject: "svc.wire", Reply: inbox, Header: nats.Header{"Framewire-Bus": {"1"}}, Data: []byte("go")}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) == 0 || got[len(got)-1] != "result go!" {
		m, err := sub.NextMsg(bustest.Wait)
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		if m.Header.Get("Framewire-Bus") != "1" || m.Reply == "" {
			t.Errorf("message %+v lacks the version or the control subject", m)
		}
		got = append(got, m.Header.Get("Framewire-Bus-Kind")+" "+string(m.Data))
	}
	// Beats may come between; the first message is the acceptance.
	var noBeats []string
	for _, g := range got {
		if g != "beat " {
			noBeats = append(noBeats, g)
		}
	}
	if got[0] != "beat " {
		t.Errorf("first message %q, want a beat", got[0])
	}
	if d := cmp.Diff([]string{"progress half", "result go!"}, noBeats); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
}

func TestWireARequestOfAnotherVersionIsRefused(t *testing.T) {
	bustest.LeakCheck(t)
	url := natstest.Embedded(t)
	raw, callee := natstest.Connect(t, url), natstest.Connect(t, url)
	serve(t, bus.NATS(callee, testOptions), "svc.wire", blockerHandler)
	m, err := raw.RequestMsg(&nats.Msg{Subject: "svc.wire", Header: nats.Header{"Framewire-Bus": {"2"}}}, bustest.Wait)
	if err != nil {
		t.Fatal(err)
	}
	if k, c := m.Header.Get("Framewire-Bus-Kind"), m.Header.Get("Framewire-Bus-Code"); k != "error" || c != "version" {
		t.Errorf("kind %q code %q, want error/version", k, c)
	}
}

func TestWireACallerRefusesWhatItDoesNotKnow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header nats.Header
	}{
		{"another version", nats.Header{"Framewire-Bus": {"2"}, "Framewire-Bus-Kind": {"result"}}},
		{"no version", nats.Header{"Framewire-Bus-Kind": {"result"}}},
		{"an unknown kind", nats.Header{"Framewire-Bus": {"1"}, "Framewire-Bus-Kind": {"bogus"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bustest.LeakCheck(t)
			url := natstest.Embedded(t)
			caller, fake := natstest.Connect(t, url), natstest.Connect(t, url)
			sub, err := fake.Subscribe("svc.fake", func(m *nats.Msg) {
				_ = fake.PublishMsg(&nats.Msg{Subject: m.Reply, Header: tc.header, Data: []byte("x")})
			})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = sub.Unsubscribe() }()
			if err := fake.Flush(); err != nil {
				t.Fatal(err)
			}
			_, err = bus.NATS(caller, testOptions).Request(t.Context(), "svc.fake", nil, nil)
			if !errors.Is(err, bus.ErrProtocol) {
				t.Errorf("error %v, want ErrProtocol", err)
			}
		})
	}
}

func TestWireASilentCalleeIsGone(t *testing.T) {
	bustest.LeakCheck(t)
	url := natstest.Embedded(t)
	caller, fake := natstest.Connect(t, url), natstest.Connect(t, url)
	sub, err := fake.Subscribe("svc.mute", func(*nats.Msg) {}) // takes requests, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := fake.Flush(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = bus.NATS(caller, testOptions).Request(t.Context(), "svc.mute", nil, nil)
	if !errors.Is(err, bus.ErrGone) {
		t.Errorf("error %v, want ErrGone", err)
	}
	if took := time.Since(start); took < bustest.Silence(testOptions) || took > bustest.Silence(testOptions)+time.Second {
		t.Errorf("gave up after %v, want about %v", took, bustest.Silence(testOptions))
	}
}
