package rtvi

import (
	"strings"
	"testing"

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
	p.queuedBytes.Add(-int64(len(f.(*frames.InputTransportMessage).Message)))
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
