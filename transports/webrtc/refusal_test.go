package webrtc

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/transports"
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

// The transport writes no RTVI: a refused message reaches the pipeline as
// a frames.InputTransportRefused carrying the message and the answer, the
// client's notice rides on the first one, and the end of the budget is a
// refusal frame with the reason.
func TestARefusedMessageReachesThePipelineAsAFrame(t *testing.T) {
	s := offlineSession(t)
	s.limiter = transports.NewMessageLimiter(transports.InboundLimits{MessagesPerSecond: 1, MessageBurst: 1, RefusalBurst: 2, RefusalsPerSecond: 0.001}, 0, time.Now())
	var mu sync.Mutex
	var got []*frames.InputTransportRefused
	s.attachInput(pusherFunc(func(f frames.Frame, _ frames.Direction) {
		if r, ok := f.(*frames.InputTransportRefused); ok {
			mu.Lock()
			got = append(got, r)
			mu.Unlock()
		}
	}))
	msg := []byte(`{"label":"rtvi-ai","type":"client-message","data":{"t":"echo"},"id":"r1"}`)
	for range 4 { // one admitted, two refused within the budget, one past it
		s.onMessage(msg)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 {
		t.Fatalf("%d refusal frames, want 3: %+v", len(got), got)
	}
	if string(got[0].Message) != string(msg) || !strings.HasPrefix(got[0].Answer, "rate limit: at most 1 messages") ||
		!strings.HasPrefix(got[0].Notice, "too many messages: 1 dropped") || got[0].End != "" {
		t.Errorf("first refusal %+v", got[0])
	}
	if got[1].Message == nil || got[1].Notice != "" || got[1].End != "" {
		t.Errorf("second refusal %+v", got[1])
	}
	if got[2].Message != nil || !strings.Contains(got[2].End, "far over the message rate limit") {
		t.Errorf("last refusal %+v, want the end of the session", got[2])
	}
	// Nothing in the pipeline passes the frame to an output here: the
	// session ends within the bound anyway.
	select {
	case <-s.Context().Done():
	case <-time.After(refuseEndBound + 10*time.Second):
		t.Fatal("the session did not end")
	}
}

// The session's end for a client far over the limit tells the client why
// with a fatal RTVI error.
func TestAClientFarOverTheLimitIsToldWhyItsSessionEnds(t *testing.T) {
	h, _ := echoHarness(t, Options{Inbound: transports.InboundLimits{RefusalBurst: 10, RefusalsPerSecond: 1}})
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
