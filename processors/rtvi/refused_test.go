package rtvi

import (
	"testing"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline/pipelinetest"
)

// A transport refuses client messages without writing RTVI
// (frames.InputTransportRefused); the processor answers: the refused
// request by its id, nothing for a message without one, the notice as an
// error, the end as a fatal error, and the frame goes on behind them to
// the output transport, which ends the session on it.
func TestTransportRefusalsAreAnsweredInRTVI(t *testing.T) {
	const limit = "rate limit: at most 20 messages and 524288 bytes per second (bursts of 40); this request was refused, send it again later"
	end := &frames.InputTransportRefused{End: "the client stayed far over the message rate limit"}
	res := pipelinetest.Run(t, NewProcessor(Options{}), pipelinetest.Options{Send: []frames.Frame{
		&frames.InputTransportRefused{Message: []byte(`{"label":"rtvi-ai","type":"client-message","id":"abc","data":{"t":"echo"}}`),
			Answer: limit, Notice: "too many messages: 3 dropped"},
		&frames.InputTransportRefused{Message: []byte(`{"label":"rtvi-ai","type":"client-message","data":{"t":"echo"}}`), Answer: limit},
		end,
	}})
	want := []any{
		obj{"label": "rtvi-ai", "type": "error-response", "id": "abc", "data": obj{"error": limit}},
		msgData("error", obj{"error": "too many messages: 3 dropped", "fatal": false}),
		msgData("error", obj{"error": "session ended: the client stayed far over the message rate limit", "fatal": true}),
	}
	if d := diffJSON(want, sent(t, res.Down())); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
	down := res.Down()
	if len(down) == 0 || down[len(down)-1] != frames.Frame(end) {
		t.Errorf("the ending refusal does not come last, behind the fatal error: %v", down)
	}
}
