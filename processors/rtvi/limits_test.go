package rtvi

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/framewire/framewire/frames"
)

// Table row 3 of issue 17: a client that sends faster than the bot handles
// its messages cannot grow the processor's queue past its bounds. What does
// not fit is dropped, and the client is told, at most once a second.
func TestAFloodOfClientMessagesStaysWithinTheQueueBounds(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	p.opts.MaxQueuedMessages = 10
	msg := `{"label":"rtvi-ai","type":"send-text","id":"x","data":{"content":"hi"}}`
	for range 1000 { // the worker is not running: nothing is handled
		p.enqueue(&frames.InputTransportMessage{Message: []byte(msg)}, frames.Downstream)
	}
	if n := p.pending.Load(); n != 10 {
		t.Errorf("%d messages queued, want the bound of 10", n)
	}
	if n := p.inbox.Len(); n != 10 {
		t.Errorf("inbox holds %d, want 10", n)
	}
	errs := ofType(rec.messages(t), "error")
	if len(errs) != 1 {
		t.Fatalf("%d error messages for the flood, want 1 (at most one a second): %v", len(errs), errs)
	}
	d := errs[0].(obj)["data"].(obj)
	if text, _ := d["error"].(string); !strings.HasPrefix(text, "too many messages: 1 dropped") || d["fatal"] != false {
		t.Errorf("the client was told %v, want a non-fatal too many messages", d)
	}
}

func TestClientMessagesAreBoundedInBytesToo(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	p.opts.MaxQueuedBytes = 1 << 20
	big := []byte(`{"label":"rtvi-ai","type":"send-text","id":"x","data":{"content":"` + strings.Repeat("a", 200<<10) + `"}}`)
	for range 20 {
		p.enqueue(&frames.InputTransportMessage{Message: big}, frames.Downstream)
	}
	if n, b := p.pending.Load(), p.queuedBytes.Load(); n != 5 || b > 1<<20 {
		t.Errorf("%d messages (%d bytes) queued, want 5 within 1 MiB", n, b)
	}
	if len(ofType(rec.messages(t), "error")) != 1 {
		t.Error("the client was not told once")
	}
	// The worker takes one: its bytes leave the count.
	f, _, _ := p.inbox.Pop()
	p.queuedBytes.Add(-int64(len(f.(*queuedMessage).msg)))
	p.pending.Add(-1)
	p.enqueue(&frames.InputTransportMessage{Message: big}, frames.Downstream)
	if n := p.pending.Load(); n != 5 {
		t.Errorf("after one was handled, %d queued, want 5 again", n)
	}
}

// Table row 8 of issue 17: thousands of bad messages give a handful of log
// lines, not one each.
func TestWarningsAboutSingleMessagesAreSampled(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	p := NewProcessor(Options{Logger: zap.New(core)})
	rec := &pusher{}
	p.sink = rec
	for range 3000 {
		p.handleRaw(t.Context(), rec, []byte(`{"label":"other","type":"x"}`))
	}
	if n := logs.FilterMessage("ignoring transport message that is not RTVI").Len(); n < 1 || n > 40 {
		t.Errorf("%d log lines for 3000 bad messages, want a sample (5 a second, then 1 in 100)", n)
	}
}

// Issue 26 row 5 at the processor: a request dropped because the queue is
// full is answered by its id, not dropped silently.
func TestARequestDroppedForAFullQueueIsAnswered(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	p.opts.MaxQueuedMessages = 2
	for i := range 5 {
		p.enqueue(&frames.InputTransportMessage{Message: []byte(
			`{"label":"rtvi-ai","type":"client-message","data":{"t":"echo"},"id":"q` + strconv.Itoa(i) + `"}`)}, frames.Downstream)
	}
	var ids []string
	for _, m := range ofType(rec.messages(t), "error-response") {
		ids = append(ids, m.(obj)["id"].(string))
		if text := m.(obj)["data"].(obj)["error"].(string); !strings.HasPrefix(text, "busy: at most 2 messages or 4194304 bytes") {
			t.Errorf("refusal %q", text)
		}
	}
	if strings.Join(ids, ",") != "q2,q3,q4" {
		t.Fatalf("error-responses to %v, want the three dropped requests q2,q3,q4", ids)
	}
}

// Issue 26 row 9: 256 queued messages, each a send-text that waits out
// its flush, made a backlog of 256 × FlushTimeout (21 min at the
// defaults). A message now waits at most MaxQueueDelay before it is taken
// up; older ones are refused with an error-response, so the whole queue
// clears within MaxQueueDelay + FlushTimeout.
func TestTheQueueBacklogIsBoundedInTime(t *testing.T) {
	const (
		flush = 50 * time.Millisecond
		delay = 200 * time.Millisecond
		n     = 256
	)
	p, rec := testProcessor("2.1.0")
	p.opts.FlushTimeout, p.opts.MaxQueueDelay = flush, delay
	// The flushes never come back (nothing loops them upstream): each
	// send-text waits out FlushTimeout, 12.8 s for the queue without the
	// bound.
	for i := range n {
		p.enqueue(&frames.InputTransportMessage{Message: []byte(
			`{"label":"rtvi-ai","type":"send-text","data":{"content":"hi"},"id":"s` + strconv.Itoa(i) + `"}`)}, frames.Downstream)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	start := time.Now()
	go func() { defer close(done); _ = p.work(ctx, rec) }()
	defer func() { cancel(); <-done }()
	deadline := time.After(10 * time.Second)
	for p.pending.Load() > 0 {
		select {
		case <-p.drainedCh():
		case <-deadline:
			t.Fatalf("%d messages still queued after 10 s", p.pending.Load())
		}
	}
	took := time.Since(start)
	expired := 0
	for _, m := range ofType(rec.messages(t), "error-response") {
		if strings.HasPrefix(m.(obj)["data"].(obj)["error"].(string), "expired: the request waited") {
			expired++
		}
	}
	t.Logf("the queue of %d cleared in %v; %d expired", n, took, expired)
	if took > 3*time.Second {
		t.Errorf("the queue took %v to clear, want about MaxQueueDelay + FlushTimeout (%v)", took, delay+flush)
	}
	if handled := n - expired; handled < 1 || handled > int(delay/flush)+2 {
		t.Errorf("%d handled and %d expired, want about %d handled (MaxQueueDelay / FlushTimeout)", handled, expired, delay/flush)
	}
}

// A message taken up within MaxQueueDelay is handled; one that waited
// longer is refused by its id (a message without an id is just dropped).
func TestAMessageOlderThanMaxQueueDelayIsRefused(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	p.opts.MaxQueueDelay = 20 * time.Millisecond
	p.enqueue(&frames.InputTransportMessage{Message: []byte(`{"label":"rtvi-ai","type":"client-message","data":{"t":"echo"},"id":"old1"}`)}, frames.Downstream)
	time.Sleep(30 * time.Millisecond) // older than MaxQueueDelay before the worker runs
	p.enqueue(&frames.InputTransportMessage{Message: []byte(`{"label":"rtvi-ai","type":"dtmf","data":{"buttons":["1"]},"id":"new1"}`)}, frames.Downstream)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = p.work(ctx, rec) }()
	defer func() { cancel(); <-done }()
	for p.pending.Load() > 0 {
		<-p.drainedCh()
	}
	// new1 (the last to arrive) was handled: its key press went down.
	rec.mu.Lock()
	pressed := false
	for _, f := range rec.frames {
		if d, ok := f.(*frames.InputDTMF); ok && d.Button == "1" {
			pressed = true
		}
	}
	rec.mu.Unlock()
	if !pressed {
		t.Error("the message within MaxQueueDelay was not handled")
	}
	got := ofType(rec.messages(t), "error-response")
	if len(got) != 1 || got[0].(obj)["id"] != "old1" {
		t.Fatalf("error-responses %v, want one to old1", got)
	}
}
