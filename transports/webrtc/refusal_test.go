package webrtc

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// answeredIDs returns the ids of the server-responses and error-responses
// among msgs whose id starts with prefix, and how many of the
// error-responses were rate-limit refusals.
func answeredIDs(msgs []string, prefix string) (ids map[string]bool, refused int) {
	ids = make(map[string]bool)
	for _, m := range msgs {
		var v struct {
			Type string `json:"type"`
			ID   string `json:"id"`
			Data struct {
				Error string `json:"error"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(m), &v) != nil || !strings.HasPrefix(v.ID, prefix) {
			continue
		}
		switch v.Type {
		case "server-response":
			ids[v.ID] = true
		case "error-response":
			ids[v.ID] = true
			if strings.HasPrefix(v.Data.Error, "rate limit: at most 20 messages") {
				refused++
			}
		}
	}
	return ids, refused
}

// Issue 26 row 5: of 5,000 echo requests sent in one burst, 18 were
// answered and the rest dropped without an answer, so the client's
// promises never settled. Now 2,000 requests sent back to back are each
// answered: a server-response for those the rate admits, an
// error-response naming the limit for the others. The session lives on.
func TestEveryRequestOfABurstIsAnsweredOrRefused(t *testing.T) {
	h, _ := echoHarness(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	c, col := floodSession(t, ctx, h, &wg)
	const n = 2000
	for i := range n {
		msg := fmt.Sprintf(`{"label":"rtvi-ai","type":"client-message","data":{"t":"echo","d":{"n":%d}},"id":"burst%d"}`, i, i)
		if err := c.Send(msg); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	deadline := time.Now().Add(45 * time.Second)
	var (
		ids     map[string]bool
		refused int
	)
	for {
		col.mu.Lock()
		ids, refused = answeredIDs(col.msgs, "burst")
		col.mu.Unlock()
		if len(ids) == n || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(ids) != n {
		missing := 0
		for i := range n {
			if !ids[fmt.Sprintf("burst%d", i)] {
				missing++
			}
		}
		t.Fatalf("%d of %d requests answered (%d refused by the rate limit); %d got no answer", len(ids), n, refused, missing)
	}
	if refused == 0 || refused == n {
		t.Errorf("%d of %d refused: want the burst admitted and the rest refused", refused, n)
	}
	t.Logf("%d answered by the bot, %d refused with an error-response", n-refused, refused)
	if fatal := col.count(func(m string) bool { return isType("error")(m) && strings.Contains(m, `"fatal":true`) }); fatal != 0 {
		t.Errorf("%d fatal errors: the session should live on", fatal)
	}
	// A request once the bucket has refilled is answered by the bot.
	if d := echoDelay(t, ctx, c, col, "after003"); d > 5*time.Second {
		t.Errorf("the echo after the burst took %v", d)
	}
}

// A request refused for the rate with an id is answered with an
// error-response naming the limit; one without an id gets none; once the
// refusal budget is spent, the session ends with a reason.
func TestRefusalsAreAnsweredWithinABudgetThenTheSessionEnds(t *testing.T) {
	t0 := time.Unix(1000, 0)
	l := newInboundLimiter(InboundLimits{MessagesPerSecond: 10, RefusalBurst: 3, RefusalsPerSecond: 1}.withDefaults(0), t0)
	withID := []byte(`{"label":"rtvi-ai","type":"client-message","data":{"t":"echo"},"id":"abc"}`)
	r := l.refuse(withID, t0)
	var m struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Data struct {
			Error string `json:"error"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.answer, &m); err != nil || r.end != "" {
		t.Fatalf("refusal %+v (%v)", r, err)
	}
	if m.Type != "error-response" || m.ID != "abc" || !strings.Contains(m.Data.Error, "at most 10 messages and 524288 bytes per second (bursts of 20)") {
		t.Fatalf("answer %s", r.answer)
	}
	if r := l.refuse([]byte(`{"label":"rtvi-ai","type":"x"}`), t0); r.answer != nil || r.end != "" {
		t.Fatalf("a message without an id: %+v", r)
	}
	l.refuse(withID, t0)
	l.refuse(withID, t0)
	// The budget of 3 is spent; a second later one more is answered.
	if r := l.refuse(withID, t0.Add(time.Second)); r.answer == nil {
		t.Fatalf("after a second: %+v", r)
	}
	r = l.refuse(withID, t0.Add(time.Second))
	if r.answer != nil || !strings.Contains(r.end, "far over the message rate limit (10 messages") {
		t.Fatalf("past the budget: %+v, want the end of the session", r)
	}
	if r := l.refuse(withID, t0.Add(time.Second)); r.answer != nil || r.end != "" {
		t.Fatalf("after the end: %+v, want nothing more", r)
	}
}

// Reading refused messages for their ids is bounded in bytes too: a
// client sending big messages far over the byte rate ends its session.
func TestRefusedBytesAreBounded(t *testing.T) {
	t0 := time.Unix(1000, 0)
	l := newInboundLimiter(InboundLimits{}.withDefaults(256<<10), t0)
	big := []byte(`{"label":"rtvi-ai","type":"send-text","data":{"content":"` + strings.Repeat("x", 200<<10) + `"},"id":"b"}`)
	for i := range 1000 {
		if r := l.refuse(big, t0); r.end != "" {
			if i*len(big) < 4*l.lim.RefusalBytesPerSecond-len(big) {
				t.Fatalf("ended after %d bytes, before the burst of %d", i*len(big), 4*l.lim.RefusalBytesPerSecond)
			}
			return
		}
	}
	t.Fatal("200 MB of refused messages at once did not end the session")
}

// The session's end for a client far over the limit tells the client why
// with a fatal RTVI error.
func TestAClientFarOverTheLimitIsToldWhyItsSessionEnds(t *testing.T) {
	h, _ := echoHarness(t, Options{Inbound: InboundLimits{RefusalBurst: 10, RefusalsPerSecond: 1}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	c, col := floodSession(t, ctx, h, &wg)
	s, _, _ := h.session(c)
	for i := range 200 {
		if err := c.Send(fmt.Sprintf(`{"label":"rtvi-ai","type":"client-message","data":{"t":"echo"},"id":"far%d"}`, i)); err != nil {
			break
		}
	}
	m, err := col.wait(ctx, func(m string) bool { return isType("error")(m) && strings.Contains(m, `"fatal":true`) })
	if err != nil {
		t.Fatal("no fatal error:", err)
	}
	if !strings.Contains(m, "session ended: the client stayed far over the message rate limit") {
		t.Errorf("the client was told %s", m)
	}
	select {
	case <-s.Done():
	case <-ctx.Done():
		t.Fatal("the session did not end")
	}
	if !strings.Contains(s.Reason(), "far over the message rate limit") {
		t.Errorf("the session ended for %q", s.Reason())
	}
}
