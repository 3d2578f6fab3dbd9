package transports

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestInboundLimiterAdmitsABurstThenTheSustainedRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	l := NewMessageLimiter(InboundLimits{MessagesPerSecond: 10, MessageBurst: 5}, 0, t0)
	admitted := 0
	for range 100 { // all at once: the burst only
		if ok, _ := l.Admit(10, t0); ok {
			admitted++
		}
	}
	if admitted != 5 {
		t.Fatalf("admitted %d of 100 sent at once, want the burst of 5", admitted)
	}
	// One message every millisecond for two seconds: 10 per second pass.
	admitted = 0
	for i := 1; i <= 2000; i++ {
		if ok, _ := l.Admit(10, t0.Add(time.Duration(i)*time.Millisecond)); ok {
			admitted++
		}
	}
	if admitted < 19 || admitted > 21 {
		t.Errorf("admitted %d in 2 s at 1000/s, want 20 (10/s)", admitted)
	}
	if got := l.Dropped(); got != uint64(2100-5-admitted) {
		t.Errorf("Dropped = %d, want %d", got, 2100-5-admitted)
	}
}

func TestInboundLimiterBoundsBytes(t *testing.T) {
	t0 := time.Unix(1000, 0)
	l := NewMessageLimiter(InboundLimits{BytesPerSecond: 1000, ByteBurst: 3000}, 2000, t0)
	var got []bool
	for _, n := range []int{2000, 1000, 1} {
		ok, _ := l.Admit(n, t0)
		got = append(got, ok)
	}
	if fmt.Sprint(got) != "[true true false]" {
		t.Errorf("2000, 1000, 1 bytes at once against a 3000-byte burst: admitted %v", got)
	}
	if ok, _ := l.Admit(1000, t0.Add(time.Second)); !ok {
		t.Error("1000 bytes a second later (1000 B/s) were refused")
	}
	// The burst is raised to the largest message: one always fits.
	l = NewMessageLimiter(InboundLimits{ByteBurst: 10}, 256<<10, t0)
	if ok, _ := l.Admit(256<<10, t0); !ok {
		t.Error("a message of MaxMessageBytes was refused by a smaller ByteBurst")
	}
}

func TestInboundLimiterReportsDropsAtMostOncePerInterval(t *testing.T) {
	t0 := time.Unix(1000, 0)
	l := NewMessageLimiter(InboundLimits{MessagesPerSecond: 1, MessageBurst: 1}, 0, t0)
	var reports []uint64
	for i := range 3000 { // 3 s at 1000/s
		if _, r := l.Admit(1, t0.Add(time.Duration(i)*time.Millisecond)); r > 0 {
			reports = append(reports, r)
		}
	}
	if len(reports) < 2 || len(reports) > 4 {
		t.Fatalf("%d reports in 3 s of drops (%v), want one a second", len(reports), reports)
	}
	var sum uint64
	for _, r := range reports {
		sum += r
	}
	if sum > l.Dropped() || reports[0] != 1 {
		t.Errorf("reports %v: the first must come at the first drop, and they count at most the %d dropped", reports, l.Dropped())
	}
}

func TestNegativeMessagesPerSecondDisablesTheLimit(t *testing.T) {
	l := NewMessageLimiter(InboundLimits{MessagesPerSecond: -1}, 0, time.Now())
	for i := range 10000 {
		if ok, _ := l.Admit(1<<20, time.Now()); !ok {
			t.Fatalf("message %d refused with the limit disabled", i)
		}
	}
}

// A message refused for the rate is passed on to the pipeline with an
// answer naming the limit (the RTVI processor answers a request by its
// id and nothing else: processors/rtvi's
// TestTransportRefusalsAreAnsweredInRTVI); once the refusal budget is
// spent, the session ends with a reason.
func TestRefusalsArePassedOnWithinABudgetThenTheSessionEnds(t *testing.T) {
	t0 := time.Unix(1000, 0)
	l := NewMessageLimiter(InboundLimits{MessagesPerSecond: 10, RefusalBurst: 3, RefusalsPerSecond: 1}, 0, t0)
	withID := []byte(`{"label":"rtvi-ai","type":"client-message","data":{"t":"echo"},"id":"abc"}`)
	if r := l.refuse(withID, t0); !r.pass || r.end != "" {
		t.Fatalf("refusal %+v, want it passed on", r)
	}
	if text := l.refusalText(); !strings.Contains(text, "at most 10 messages and 524288 bytes per second (bursts of 20)") {
		t.Fatalf("answer %q", text)
	}
	l.refuse(withID, t0)
	l.refuse(withID, t0)
	// The budget of 3 is spent; a second later one more is passed on.
	if r := l.refuse(withID, t0.Add(time.Second)); !r.pass {
		t.Fatalf("after a second: %+v", r)
	}
	r := l.refuse(withID, t0.Add(time.Second))
	if r.pass || !strings.Contains(r.end, "far over the message rate limit (10 messages") {
		t.Fatalf("past the budget: %+v, want the end of the session", r)
	}
	if r := l.refuse(withID, t0.Add(time.Second)); r.pass || r.end != "" {
		t.Fatalf("after the end: %+v, want nothing more", r)
	}
}

// Reading refused messages for their ids is bounded in bytes too: a
// client sending big messages far over the byte rate ends its session.
func TestRefusedBytesAreBounded(t *testing.T) {
	t0 := time.Unix(1000, 0)
	l := NewMessageLimiter(InboundLimits{}, 256<<10, t0)
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
