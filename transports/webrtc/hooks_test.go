package webrtc

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

// eventLog records what Options.OnSession is told.
type eventLog struct {
	mu     sync.Mutex
	events []SessionEvent
}

func (l *eventLog) add(ev SessionEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
}

// seen returns the events so far, each as kind, ids and whether it came
// with its request.
func (l *eventLog) seen() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.events))
	for _, ev := range l.events {
		s := ev.Kind.String() + " pc=" + ev.PCID + " prev=" + ev.PrevPCID + " start=" + ev.StartID + " reason=" + ev.Reason
		if ev.Request != nil {
			s += " (request " + ev.Request.URL.Path + ")"
		}
		if ev.Kind != StartIssued && ev.Session == nil {
			s += " (no session)"
		}
		out = append(out, s)
	}
	return out
}

// OnSession tells, in order, of a /start id, the session created through
// it, the pc_id a restart gave it and its end; Owns finds each id while
// the server holds it.
func TestOnSessionTellsOfEveryIdASessionHoldsAndOwnsFindsThem(t *testing.T) {
	var log eventLog
	h := newHarness(t, Options{OnSession: log.add})
	ctx := testContext(t, 20*time.Second)
	status, _, body := do(t, "POST", h.url("/start"), `{}`)
	var start startResponse
	if err := json.Unmarshal([]byte(body), &start); status != http.StatusOK || err != nil {
		t.Fatalf("/start: %d %s", status, body)
	}
	if !h.srv.Owns(start.SessionID) {
		t.Error("Owns does not know the /start id it issued")
	}
	c := h.dial(ctx, webrtctest.Options{OfferURL: h.url("/sessions/" + start.SessionID + "/api/offer")})
	first := c.PCID()
	if !h.srv.Owns(first) {
		t.Error("Owns does not know a live session's pc_id")
	}
	if err := c.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	second := c.PCID()
	if h.srv.Owns(first) || !h.srv.Owns(second) {
		t.Errorf("after a restart, Owns(old)=%v Owns(new)=%v; want false, true", h.srv.Owns(first), h.srv.Owns(second))
	}
	s, _, _ := h.session(c)
	s.Close("test over")
	<-s.Done()
	if h.srv.Owns(second) {
		t.Error("Owns still knows the pc_id of an ended session")
	}
	if h.srv.Owns("not-an-id") {
		t.Error("Owns knows an id the server never issued")
	}
	offer := "/sessions/" + start.SessionID + "/api/offer"
	want := []string{
		"start issued pc= prev= start=" + start.SessionID + " reason= (request /start)",
		"session started pc=" + first + " prev= start=" + start.SessionID + " reason= (request " + offer + ")",
		"session restarted pc=" + second + " prev=" + first + " start=" + start.SessionID + " reason= (request " + offer + ")",
		"session ended pc=" + second + " prev= start=" + start.SessionID + " reason=test over",
	}
	if d := cmp.Diff(want, log.seen()); d != "" {
		t.Errorf("OnSession events (-want +got):\n%s", d)
	}
}

// A session whose offer failed was never announced: no event tells of
// its end.
func TestOnSessionTellsNothingOfAnOfferThatFailed(t *testing.T) {
	var log eventLog
	h := newHarness(t, Options{OnSession: log.add, NewPipeline: func(context.Context, *Session) (*pipeline.Task, error) {
		return nil, errors.New("no pipeline today")
	}})
	ctx := testContext(t, 20*time.Second)
	if _, err := webrtctest.Dial(ctx, webrtctest.Options{OfferURL: h.url("/api/offer")}); err == nil {
		t.Fatal("an offer whose pipeline fails was answered")
	}
	eventually(t, 5*time.Second, "the failed session torn down", func() bool { return h.srv.SessionCount() == 0 })
	if got := log.seen(); len(got) != 0 {
		t.Errorf("events of a failed offer: %q", got)
	}
}

// Admit sees every /start and every offer that would create a session
// (not a live session's restart); a refusal is a 503 with Retry-After
// that names no cause, and the server stays usable.
func TestAdmitRefusesNewSessionsWithA503ToRetry(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	refuse := true
	h := newHarness(t, Options{Admit: func(r *http.Request) error {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, r.URL.Path)
		if refuse {
			return errors.New("secret reason")
		}
		return nil
	}})
	ctx := testContext(t, 20*time.Second)
	for _, path := range []string{"/start", "/api/offer"} {
		body := `{}`
		if path == "/api/offer" {
			body = `{"sdp":"v=0","type":"offer"}`
		}
		status, hdr, got := do(t, "POST", h.url(path), body)
		if status != http.StatusServiceUnavailable || hdr.Get("Retry-After") != "2" {
			t.Errorf("POST %s refused by Admit: %d Retry-After %q, want 503 with Retry-After 2", path, status, hdr.Get("Retry-After"))
		}
		if strings.Contains(got, "secret") {
			t.Errorf("POST %s: the refusal tells the client Admit's error: %s", path, got)
		}
	}
	if n := h.srv.SessionCount(); n != 0 {
		t.Fatalf("%d sessions after refusals", n)
	}
	mu.Lock()
	refuse = false
	mu.Unlock()
	c := h.dial(ctx, webrtctest.Options{})
	if err := c.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if d := cmp.Diff([]string{"/start", "/api/offer", "/api/offer"}, asked); d != "" {
		t.Errorf("Admit was asked about (-want +got):\n%s", d)
	}
}
