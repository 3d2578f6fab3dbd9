package rtvi

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/framewire/framewire/processors/rtvi/wire"
)

// seedMessages adds every client vector, the tree of every snapshot
// vector, and a few hostile inputs.
func seedMessages(f *testing.F) {
	for _, v := range loadVectors(f) {
		if v.Direction == "client->server" {
			f.Add([]byte(v.JSON))
		}
	}
	for _, s := range []string{
		`{this is not json`, `ping: 123`, `[]`, `null`, `"rtvi-ai"`, `{}`,
		`{"label":"rtvi-ai"}`, `{"label":"rtvi-ai","type":1,"id":"1"}`,
		`{"label":"rtvi-ai","type":"ui-snapshot","id":"1","data":{"tree":{"root":{"ref":"","role":"text","children":[{"ref":"\ud83d\ude00","role":"x"}]},"captured_at":1e3}}}`,
		`{"label":"rtvi-ai","type":"dtmf","id":"1","data":{"buttons":["\u0031"]}}`,
		`{"label":"rtvi-ai","type":"send-text","id":"1","data":{"content":"\ud800","options":null}}`,
		strings.Repeat("[", 600) + strings.Repeat("]", 600),
	} {
		f.Add([]byte(s))
	}
}

// FuzzProcessorInbound feeds inputs to the processor's message handler:
// each yields handled frames or messages, an error reply, or a logged
// drop, and never a panic.
func FuzzProcessorInbound(f *testing.F) {
	seedMessages(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		p := NewProcessor(Options{FlushTimeout: time.Millisecond})
		rec := &pusher{}
		p.sink = rec
		p.handleRaw(context.Background(), rec, b)
		msgs := rec.messages(t)
		_, err := wire.Decode(b)
		var (
			envErr  *wire.EnvelopeError
			dataErr *wire.DataError
		)
		switch {
		case errors.Is(err, wire.ErrInvalidJSON), errors.Is(err, wire.ErrNotRTVI):
			if len(msgs) != 0 {
				t.Fatalf("replied %v to a dropped input", msgs)
			}
		case errors.As(err, &envErr):
			if len(msgs) != 1 || msgs[0].(obj)["type"] != wire.TypeError {
				t.Fatalf("replies %v, want one error", msgs)
			}
		case errors.As(err, &dataErr):
			if (dataErr.Type == wire.TypeRawAudio || dataErr.Type == wire.TypeRawAudioBatch) && !errors.Is(err, wire.ErrAudioFormat) {
				if len(msgs) != 0 {
					t.Fatalf("replied %v to bad audio", msgs)
				}
			} else if len(msgs) != 1 || msgs[0].(obj)["type"] != wire.TypeErrorResponse {
				t.Fatalf("replies %v, want one error-response", msgs)
			}
		}
	})
}
