package webrtc

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

func TestClientReadyIsAnsweredWithBotReadyOverTheChatChannel(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{})
	if err := c.Send(`{"label":"rtvi-ai","type":"client-ready","id":"abcd1234","data":{"version":"2.1.0","about":{"library":"@pipecat-ai/client-js"}}}`); err != nil {
		t.Fatal(err)
	}
	msg, err := c.Next(ctx, isType("bot-ready"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Label, Type, ID string
		Data            struct{ Version string }
	}
	if err := json.Unmarshal([]byte(msg), &got); err != nil {
		t.Fatal(err)
	}
	if got.Label != "rtvi-ai" || got.ID != "abcd1234" || got.Data.Version != "2.1.0" {
		t.Errorf("bot-ready = %s", msg)
	}
	s, b, _ := h.session(c)
	// trackStatus (mic on, camera off) is consumed by the transport; pings
	// never reach the pipeline.
	eventually(t, 5*time.Second, "camera trackStatus applied", func() bool { return !s.TrackEnabled(1) })
	if !s.TrackEnabled(0) {
		t.Error("the mic is reported disabled")
	}
	for _, m := range b.gotMessages() {
		if m != `{"label":"rtvi-ai","type":"client-ready","id":"abcd1234","data":{"version":"2.1.0","about":{"library":"@pipecat-ai/client-js"}}}` {
			t.Errorf("the pipeline got %q", m)
		}
	}
}

func readyRoundTrip(t *testing.T, ctx context.Context, c *webrtctest.Client, id string) {
	t.Helper()
	if err := c.Send(`{"label":"rtvi-ai","type":"client-ready","id":"` + id + `","data":{"version":"2.1.0"}}`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Next(ctx, func(m string) bool { return strings.Contains(m, `"id":"`+id+`"`) }); err != nil {
		t.Fatal(err)
	}
}

func TestRestartReplacesThePeerConnectionAndKeepsTheSession(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{ToneHz: 440})
	s, b, _ := h.session(c)
	oldID := c.PCID()
	readyRoundTrip(t, ctx, c, "before01")
	if err := c.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if c.PCID() == oldID {
		t.Fatal("restart_pc:true kept the pc_id; the new PC needs its own")
	}
	if err := c.WaitOpen(ctx); err != nil {
		t.Fatal(err)
	}
	if got, ok := h.srv.Session(c.PCID()); !ok || got != s {
		t.Errorf("the new pc_id %s does not lead to the session", c.PCID())
	}
	if _, ok := h.srv.Session(oldID); ok {
		t.Errorf("the retired pc_id %s still leads to the session", oldID)
	}
	if s.PCID() != c.PCID() {
		t.Errorf("session pc_id %s, want the new %s", s.PCID(), c.PCID())
	}
	readyRoundTrip(t, ctx, c, "after001")
	// Audio flows again on the new PC, into the same pipeline.
	b.takeAudio()
	got := 0
	eventually(t, 5*time.Second, "audio after the restart", func() bool {
		got += len(b.takeAudio())
		return got > 10
	})
	h.mu.Lock()
	built := h.built
	h.mu.Unlock()
	if built != 1 || s.ctx.Err() != nil {
		t.Errorf("%d pipelines built, session ended: %v; want one, still running", built, s.ctx.Err())
	}
	eventually(t, 5*time.Second, "the old PC closed", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.peers) == 1
	})
}

func TestRenegotiationKeepsThePeerConnectionAndPCID(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{})
	s, _, _ := h.session(c)
	id := c.PCID()
	if err := c.Renegotiate(ctx); err != nil {
		t.Fatal(err)
	}
	if c.PCID() != id || s.PCID() != id {
		t.Errorf("renegotiation changed the pc_id: %s -> %s (session %s)", id, c.PCID(), s.PCID())
	}
	readyRoundTrip(t, ctx, c, "reneg001")
	s.mu.Lock()
	n := len(s.peers)
	s.mu.Unlock()
	if n != 1 {
		t.Errorf("%d peer connections after renegotiation, want 1", n)
	}
}

func TestServerRenegotiateMakesTheClientReofferOnTheSamePC(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{})
	s, _, _ := h.session(c)
	id := c.PCID()
	s.Renegotiate()
	eventually(t, 10*time.Second, "the client re-offered", func() bool { return c.Renegotiations.Load() == 1 })
	if c.PCID() != id || s.PCID() != id {
		t.Errorf("pc_id changed: %s -> client %s, session %s", id, c.PCID(), s.PCID())
	}
	readyRoundTrip(t, ctx, c, "reneg002")
}

func TestAVanishedClientIsDetectedWithin3500ms(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{})
	s, _, _ := h.session(c)
	time.Sleep(1500 * time.Millisecond) // at least one ping arrives
	c.Vanish()
	t0 := time.Now()
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the session outlived its silent client by 10 s")
	}
	if d := time.Since(t0); d > 3500*time.Millisecond {
		t.Errorf("detected %v after the last ping could have been sent, want within 3.5 s", d)
	}
	if !strings.Contains(s.Reason(), "vanished") || !s.Vanished() {
		t.Errorf("reason %q, vanished %v", s.Reason(), s.Vanished())
	}
}

func TestClientDisconnectEndsTheSessionAndItsPipeline(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{ToneHz: 300})
	s, _, task := h.session(c)
	c.Close()
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the session survived its client's disconnect")
	}
	select {
	case <-task.Done():
	default:
		t.Error("the pipeline is still running")
	}
	if h.srv.SessionCount() != 0 {
		t.Error("the server still counts the session")
	}
	if _, ok := h.srv.Session(c.PCID()); ok {
		t.Error("the pc_id still resolves")
	}
}

func TestPipelineEndSendsPeerLeftThenCloses(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{})
	s, _, task := h.session(c)
	task.QueueFrame(&frames.End{})
	if _, err := c.Next(ctx, func(m string) bool {
		return m == `{"type":"signalling","message":{"type":"peerLeft"}}`
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Closed():
	case <-ctx.Done():
		t.Fatal("the data channel stayed open after peerLeft")
	}
	<-s.Done()
	if !strings.Contains(s.Reason(), "pipeline ended") {
		t.Errorf("reason %q", s.Reason())
	}
}

func TestMessagesSentBeforeTheChannelOpensAreQueued(t *testing.T) {
	h := newHarness(t, Options{})
	h.onSession = func(s *Session) {
		s.Send([]byte(`{"label":"rtvi-ai","type":"server-message","data":{"n":1}}`))
		s.Send([]byte(`{"label":"rtvi-ai","type":"server-message","data":{"n":2}}`))
	}
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{})
	for _, n := range []string{"1", "2"} {
		m, err := c.Next(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(m, `"n":`+n) {
			t.Errorf("message %s: %s", n, m)
		}
	}
}

func TestOutboundQueueIsBoundedAndCountsDrops(t *testing.T) {
	s := offlineSession(t)
	for range s.srv.opts.MaxPendingMessages + 5 {
		s.Send([]byte(`{}`))
	}
	if st := s.Stats(); st.OutboundDropped != 5 {
		t.Errorf("dropped %d, want 5", st.OutboundDropped)
	}
}

func TestClientMessagesBeforeThePipelineStartsAreReplayedInOrder(t *testing.T) {
	s := offlineSession(t)
	s.onMessage([]byte(`{"n":1}`))
	s.onMessage([]byte(`ping: 1`))
	s.onMessage([]byte(`{not json`))
	s.onMessage([]byte(`{"type":"signalling","message":{"type":"trackStatus","receiver_index":0,"enabled":false}}`))
	s.onMessage([]byte(`{"n":2}`))
	if s.TrackEnabled(0) || !s.micOff.Load() {
		t.Error("trackStatus for the mic was not applied")
	}
	var got []string
	s.attachInput(pusherFunc(func(f frames.Frame, _ frames.Direction) {
		got = append(got, string(f.(*frames.InputTransportMessage).Message))
	}))
	s.onMessage([]byte(`{"n":3}`))
	if strings.Join(got, ",") != `{"n":1},{"n":2},{"n":3}` {
		t.Errorf("pipeline got %v", got)
	}
	s.mu.Lock()
	if s.watchdog != nil {
		s.watchdog.Stop()
	}
	s.mu.Unlock()
}

type pusherFunc func(frames.Frame, frames.Direction)

func (p pusherFunc) Push(f frames.Frame, d frames.Direction) { p(f, d) }
func (p pusherFunc) PushError(error)                         {}

func TestAPeerArrivingDuringTeardownIsRefused(t *testing.T) {
	s := offlineSession(t)
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	if _, ok := s.adopt(&peer{s: s, id: "late"}); ok {
		t.Fatal("a closing session adopted a new peer connection")
	}
	if _, ok := s.srv.Session("late"); ok || len(s.peers) != 0 {
		t.Error("the refused peer's pc_id was registered")
	}
}

func TestRestartGraceKeepsTheSessionForAClientThatComesBack(t *testing.T) {
	h := newHarness(t, Options{RestartGrace: 5 * time.Second})
	ctx := testContext(t, 30*time.Second)
	c := h.dial(ctx, webrtctest.Options{})
	s, _, _ := h.session(c)
	time.Sleep(1500 * time.Millisecond)
	c.Vanish() // the network drops: no pings
	eventually(t, 5*time.Second, "the client reported vanished", s.Vanished)
	if s.ctx.Err() != nil {
		t.Fatal("the session ended despite RestartGrace")
	}
	// The browser rebuilds its peer connection and pings again.
	if err := c.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitOpen(ctx); err != nil {
		t.Fatal(err)
	}
	c.Resume()
	eventually(t, 5*time.Second, "the client counted back", func() bool { return !s.Vanished() })
	time.Sleep(5 * time.Second) // past the grace
	if s.ctx.Err() != nil {
		t.Fatalf("the session ended after the client came back: %s", s.Reason())
	}
	readyRoundTrip(t, ctx, c, "grace001")
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.built != 1 {
		t.Errorf("%d pipelines built, want the one kept", h.built)
	}
}

func TestRestartGraceEndsTheSessionWhenNoRestartComes(t *testing.T) {
	h := newHarness(t, Options{RestartGrace: time.Second})
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{})
	s, _, _ := h.session(c)
	time.Sleep(1500 * time.Millisecond)
	c.Vanish()
	t0 := time.Now()
	select {
	case <-s.Done():
	case <-ctx.Done():
		t.Fatal("the session outlived its grace")
	}
	if d := time.Since(t0); d < time.Second {
		t.Errorf("ended %v after the pings stopped, before the grace", d)
	}
	if !strings.Contains(s.Reason(), "no restart within") {
		t.Errorf("reason %q", s.Reason())
	}
}

// A ping that arrives after the session counted the client as vanished
// (without RestartGrace, the session is then ending) used to stop a grace
// timer that does not exist.
func TestAPingAfterTheClientVanishedWithoutRestartGraceDoesNotPanic(t *testing.T) {
	s := offlineSession(t)
	s.touch()
	s.vanish(s.srv.opts.PingTimeout)
	s.touch()
	s.mu.Lock()
	if s.watchdog != nil {
		s.watchdog.Stop()
	}
	s.mu.Unlock()
	if s.Reason() == "" {
		t.Error("the vanished client did not end the session")
	}
}
