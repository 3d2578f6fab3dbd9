package rtvi

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

var testAbout = obj{"library": "framewire", "library_version": LibraryVersion}

func botReady(id, version string) obj {
	return obj{"label": "rtvi-ai", "type": "bot-ready", "id": id, "data": obj{"version": version, "about": testAbout}}
}

func errorResponse(id, text string) obj {
	return obj{"label": "rtvi-ai", "type": "error-response", "id": id, "data": obj{"error": text}}
}

func TestHandshake(t *testing.T) {
	const (
		unknown = "Client version unknown. Compatibility issues may occur."
		aboutOK = `{"library":"@pipecat-ai/client-js","library_version":"1.13.0"}`
	)
	ready := func(data string) string {
		return `{"label":"rtvi-ai","type":"client-ready","id":"R","data":` + data + `}`
	}
	withVersion := func(v string) string { return ready(`{"version":"` + v + `","about":` + aboutOK + `}`) }
	tests := []struct {
		name    string
		message string
		want    []any
		parsed  wire.ClientVersion
		vocab   wire.Vocabulary
	}{
		{"2.1.0 is current", withVersion("2.1.0"), []any{botReady("R", "2.1.0")}, wire.ClientVersion{Major: 2, Minor: 1, Patch: 0}, wire.VocabularyJobGroup},
		{"2.0.0 is compatible", withVersion("2.0.0"), []any{botReady("R", "2.1.0")}, wire.ClientVersion{Major: 2, Minor: 0, Patch: 0}, wire.VocabularyJobGroup},
		{"1.4.0 is legacy: version echoed", withVersion("1.4.0"), []any{botReady("R", "1.4.0")}, wire.ClientVersion{Major: 1, Minor: 4, Patch: 0}, wire.VocabularyJobGroup},
		{"1.3.0 is legacy with the task vocabulary", withVersion("1.3.0"), []any{botReady("R", "1.3.0")}, wire.ClientVersion{Major: 1, Minor: 3, Patch: 0}, wire.VocabularyTask},
		{"1.3.7 also gets the task vocabulary", withVersion("1.3.7"), []any{botReady("R", "1.3.7")}, wire.ClientVersion{Major: 1, Minor: 3, Patch: 7}, wire.VocabularyTask},
		{"missing version", ready(`{"about":` + aboutOK + `}`),
			[]any{errorResponse("R", unknown), botReady("R", "2.1.0")}, wire.ClientVersion{}, wire.VocabularyJobGroup},
		{"missing data", `{"label":"rtvi-ai","type":"client-ready","id":"R"}`,
			[]any{errorResponse("R", unknown), botReady("R", "2.1.0")}, wire.ClientVersion{}, wire.VocabularyJobGroup},
		{"version that is not a string", ready(`{"version":2,"about":` + aboutOK + `}`),
			[]any{errorResponse("R", unknown), botReady("R", "2.1.0")}, wire.ClientVersion{}, wire.VocabularyJobGroup},
		{"1.2 has two parts", withVersion("1.2"),
			[]any{errorResponse("R", "Invalid client version format (1.2). Compatibility issues may occur."), botReady("R", "2.1.0")}, wire.ClientVersion{}, wire.VocabularyJobGroup},
		{"2.1.0-beta is not a number", withVersion("2.1.0-beta"),
			[]any{errorResponse("R", "Invalid client version format (2.1.0-beta). Compatibility issues may occur."), botReady("R", "2.1.0")}, wire.ClientVersion{}, wire.VocabularyJobGroup},
		{"3.0.0 is too new", withVersion("3.0.0"),
			[]any{errorResponse("R", "RTVI version 3.0.0 is not compatible with server protocol 2.1.0. Compatibility issues may occur."), botReady("R", "2.1.0")}, wire.ClientVersion{Major: 3, Minor: 0, Patch: 0}, wire.VocabularyJobGroup},
		{"0.3.0 is too old", withVersion("0.3.0"),
			[]any{errorResponse("R", "RTVI version 0.3.0 is not compatible with server protocol 2.1.0. Compatibility issues may occur."), botReady("R", "2.1.0")}, wire.ClientVersion{Major: 0, Minor: 3, Patch: 0}, wire.VocabularyJobGroup},
		{"bad about is ignored, never an error", ready(`{"version":"2.1.0","about":{"library_version":5}}`),
			[]any{botReady("R", "2.1.0")}, wire.ClientVersion{Major: 2, Minor: 1, Patch: 0}, wire.VocabularyJobGroup},
		{"about that is not an object is ignored", ready(`{"version":"1.4.0","about":"me"}`),
			[]any{botReady("R", "1.4.0")}, wire.ClientVersion{Major: 1, Minor: 4, Patch: 0}, wire.VocabularyJobGroup},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewProcessor(Options{})
			var got *ClientReadyFrame
			p.OnClientReady(func(_ context.Context, r *ClientReadyFrame) { got = r })
			res := runProcessor(t, p, tc.message)
			if d := cmp.Diff(tc.want, sent(t, res.Down())); d != "" {
				t.Errorf("replies (-want +got):\n%s", d)
			}
			if p.ClientVersion() != tc.parsed || p.ClientVersion().Vocabulary() != tc.vocab {
				t.Errorf("client version %v (%v), want %v (%v)", p.ClientVersion(), p.ClientVersion().Vocabulary(), tc.parsed, tc.vocab)
			}
			if got == nil || got.MsgID != "R" || got.Parsed != tc.parsed {
				t.Errorf("OnClientReady got %+v", got)
			}
			if !p.ClientReadyReceived() || !p.BotReadySent() {
				t.Error("client-ready or bot-ready not recorded")
			}
			ready := notSent(res.Down())
			if len(ready) != 1 {
				t.Fatalf("frames pushed downstream: %v", ready)
			}
			if f, ok := ready[0].(*ClientReadyFrame); !ok || f.MsgID != "R" || f.Parsed != tc.parsed || f != got {
				t.Errorf("pushed %#v, want a ClientReadyFrame", ready[0])
			}
		})
	}
}

func TestHandshakeAboutDefaultsToUnknown(t *testing.T) {
	p := NewProcessor(Options{})
	var got []*ClientReadyFrame
	p.OnClientReady(func(_ context.Context, r *ClientReadyFrame) { got = append(got, r) })
	runProcessor(t, p,
		`{"label":"rtvi-ai","type":"client-ready","id":"1","data":{"version":"2.1.0"}}`,
		`{"label":"rtvi-ai","type":"client-ready","id":"2","data":{"version":"2.1.0","about":{"library":"x","platform":null}}}`)
	if len(got) != 2 || got[0].About.Library != "unknown" || got[1].About.Library != "x" {
		t.Errorf("about = %+v", got)
	}
}

func TestManualBotReady(t *testing.T) {
	p := NewProcessor(Options{ManualBotReady: true})
	p.OnClientReady(func(context.Context, *ClientReadyFrame) {
		p.SendServerMessage(wire.RawJSON(`"warming up"`))
		p.SetBotReady(wire.RawJSON(`{"library":"mine"}`))
	})
	res := runProcessor(t, p, `{"label":"rtvi-ai","type":"client-ready","id":"X","data":{"version":"1.4.0","about":{"library":"c"}}}`)
	want := []any{
		obj{"label": "rtvi-ai", "type": "server-message", "data": "warming up"},
		obj{"label": "rtvi-ai", "type": "bot-ready", "id": "X", "data": obj{"version": "1.4.0", "about": obj{"library": "mine"}}},
	}
	if d := cmp.Diff(want, sent(t, res.Down())); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestBotReadyBeforeClientReadyHasEmptyID(t *testing.T) {
	p, rec := testProcessor("")
	p.SetBotReady(nil)
	if d := cmp.Diff([]any{botReady("", "2.1.0")}, rec.messages(t)); d != "" {
		t.Error(d)
	}
}

func TestSendBeforeTheTaskRunsGoesOutAfterStart(t *testing.T) {
	p := NewProcessor(Options{})
	p.SendError("early")
	res := runProcessor(t, p)
	want := []any{obj{"label": "rtvi-ai", "type": "error", "data": obj{"error": "early", "fatal": false}}}
	if d := cmp.Diff(want, sent(t, res.Down())); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	if len(res.Down()) == 0 {
		t.Fatal("nothing went downstream")
	}
}

// TestInboundErrors checks §5.1: what gets an error, an error-response, or
// nothing at all.
func TestInboundErrors(t *testing.T) {
	tests := []struct {
		name    string
		message string
		want    []any // nil: no reply
		prefix  string
	}{
		{"invalid JSON is dropped", `{this is not json`, nil, ""},
		{"a ping is dropped", `ping: 1721035200000`, nil, ""},
		{"a JSON array is not RTVI", `[1,2]`, nil, ""},
		{"a wrong label is ignored", `{"label":"other","type":"send-text","id":"1","data":{"content":"x"}}`, nil, ""},
		{"a missing label is ignored", `{"type":"signalling","message":{"type":"trackStatus"}}`, nil, ""},
		{"a missing id is an error message", `{"label":"rtvi-ai","type":"send-text","data":{"content":"hi"}}`,
			[]any{obj{"label": "rtvi-ai", "type": "error", "data": obj{"fatal": false}}}, "Invalid RTVI transport message: "},
		{"a numeric id is an error message", `{"label":"rtvi-ai","type":"send-text","id":7,"data":{"content":"hi"}}`,
			[]any{obj{"label": "rtvi-ai", "type": "error", "data": obj{"fatal": false}}}, "Invalid RTVI transport message: "},
		{"data that is an array is an error message", `{"label":"rtvi-ai","type":"send-text","id":"1","data":[]}`,
			[]any{obj{"label": "rtvi-ai", "type": "error", "data": obj{"fatal": false}}}, "Invalid RTVI transport message: "},
		{"an unknown type gets Unsupported", `{"label":"rtvi-ai","type":"frobnicate","id":"hfrob001"}`,
			[]any{errorResponse("hfrob001", "Unsupported type frobnicate")}, ""},
		{"append-to-context is no longer supported", `{"label":"rtvi-ai","type":"append-to-context","id":"c","data":{"role":"user","content":"hello"}}`,
			[]any{errorResponse("c", "Unsupported type append-to-context")}, ""},
		{"ui-event without event is an invalid message", `{"label":"rtvi-ai","type":"ui-event","id":"hevt0001","data":{"payload":1}}`,
			[]any{obj{"label": "rtvi-ai", "type": "error-response", "id": "hevt0001", "data": obj{}}}, "Invalid message: "},
		{"client-message without data is an invalid message", `{"label":"rtvi-ai","type":"client-message","id":"m"}`,
			[]any{obj{"label": "rtvi-ai", "type": "error-response", "id": "m", "data": obj{}}}, "Invalid message: "},
		{"an invalid DTMF key is an invalid message", `{"label":"rtvi-ai","type":"dtmf","id":"d","data":{"buttons":["1","x"]}}`,
			[]any{obj{"label": "rtvi-ai", "type": "error-response", "id": "d", "data": obj{}}}, "Invalid message: "},
		{"function result missing a field", `{"label":"rtvi-ai","type":"llm-function-call-result","id":"f","data":{"function_name":"a","tool_call_id":"b","arguments":{}}}`,
			[]any{obj{"label": "rtvi-ai", "type": "error-response", "id": "f", "data": obj{}}}, "Invalid message: "},
		{"raw audio problems are only logged", `{"label":"rtvi-ai","type":"raw-audio","id":"a","data":{"base64Audio":"AAAA"}}`, nil, ""},
		{"undecodable base64 audio is only logged", `{"label":"rtvi-ai","type":"raw-audio","id":"a","data":{"base64Audio":"!!","sampleRate":16000,"numChannels":1}}`, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewProcessor(Options{})
			res := runProcessor(t, p, tc.message)
			got := sent(t, res.Down())
			if tc.prefix != "" {
				for _, m := range got {
					d := m.(obj)["data"].(obj)
					text, _ := d["error"].(string)
					if len(text) < len(tc.prefix) || text[:len(tc.prefix)] != tc.prefix {
						t.Errorf("error %q lacks prefix %q", text, tc.prefix)
					}
					delete(d, "error")
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("replies (-want +got):\n%s", d)
			}
			if others := notSent(res.Down()); len(others) != 0 {
				t.Errorf("unexpected frames: %v", others)
			}
		})
	}
}

func TestInboundFrames(t *testing.T) {
	msg := func(typ, id, data string) string {
		return `{"label":"rtvi-ai","type":"` + typ + `","id":"` + id + `","data":` + data + `}`
	}
	tests := []struct {
		name    string
		message string
		down    []frames.Frame
		up      []frames.Frame
	}{
		{"ui-event", msg("ui-event", "m1", `{"event":"nav_click","payload":{"view":"home"}}`),
			[]frames.Frame{&UIEventFrame{MsgID: "m1", Event: "nav_click", Payload: wire.RawJSON(`{"view":"home"}`)}}, nil},
		{"ui-event without payload", msg("ui-event", "e1", `{"event":"hello"}`),
			[]frames.Frame{&UIEventFrame{MsgID: "e1", Event: "hello"}}, nil},
		{"ui-cancel-job-group", msg("ui-cancel-job-group", "m3", `{"job_id":"t-99","reason":"user"}`),
			[]frames.Frame{&UICancelTaskFrame{MsgID: "m3", TaskID: "t-99", Reason: "user"}}, nil},
		{"ui-cancel-task from a 1.3.0 client", msg("ui-cancel-task", "m4", `{"task_id":"t-98"}`),
			[]frames.Frame{&UICancelTaskFrame{MsgID: "m4", TaskID: "t-98", Vocabulary: wire.VocabularyTask}}, nil},
		{"client-message", msg("client-message", "c1", `{"t":"get-location","d":{"precise":true}}`),
			[]frames.Frame{&ClientMessageFrame{ClientMessage: ClientMessage{ID: "c1", Type: "get-location", Data: wire.RawJSON(`{"precise":true}`)}}}, nil},
		{"dtmf buttons, one frame per key in order", msg("dtmf", "d1", `{"buttons":["1","2","3","#"]}`),
			[]frames.Frame{&frames.InputDTMF{Button: "1"}, &frames.InputDTMF{Button: "2"}, &frames.InputDTMF{Button: "3"}, &frames.InputDTMF{Button: "#"}}, nil},
		{"dtmf single button (2.0.x form)", msg("dtmf", "d2", `{"button":"*"}`),
			[]frames.Frame{&frames.InputDTMF{Button: "*"}}, nil},
		{"raw-audio", msg("raw-audio", "a1", `{"base64Audio":"AAAA","sampleRate":16000,"numChannels":1}`),
			[]frames.Frame{&frames.InputAudioRaw{Audio: frames.Audio{PCM: []byte{0, 0, 0}, SampleRate: 16000, Channels: 1}}}, nil},
		{"raw-audio-batch", msg("raw-audio-batch", "a2", `{"base64AudioBatch":["AQI=","AwQ"],"sampleRate":8000,"numChannels":2}`),
			[]frames.Frame{
				&frames.InputAudioRaw{Audio: frames.Audio{PCM: []byte{1, 2}, SampleRate: 8000, Channels: 2}},
				&frames.InputAudioRaw{Audio: frames.Audio{PCM: []byte{3, 4}, SampleRate: 8000, Channels: 2}},
			}, nil},
		{"disconnect-bot ends the task", msg("disconnect-bot", "x", `{}`),
			nil, []frames.Frame{&frames.EndTask{Reason: "client sent disconnect-bot"}}},
		{"send-text without running keeps the bot talking", msg("send-text", "s1", `{"content":"note this","options":{"run_immediately":false}}`),
			[]frames.Frame{&frames.LLMMessagesAppend{Messages: []frames.LLMMessage{{Role: "user", Content: "note this"}}}}, nil},
		{"send-text text-only toggles skip_tts around the append", msg("send-text", "s2", `{"content":"Summarize.","options":{"run_immediately":false,"audio_response":false}}`),
			[]frames.Frame{
				&frames.LLMConfigureOutput{SkipTTS: true},
				&frames.LLMMessagesAppend{Messages: []frames.LLMMessage{{Role: "user", Content: "Summarize."}}},
				&frames.LLMConfigureOutput{SkipTTS: false},
			}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewProcessor(Options{})
			res := runProcessor(t, p, tc.message)
			// The processor's own observer reports the function call result
			// it pushes (llm-function-call-stopped); the processor replies
			// nothing.
			if msgs := sent(t, res.Down()); len(msgs) != 0 && len(ofType(msgs, wire.TypeLLMFunctionCallStopped)) != len(msgs) {
				t.Errorf("unexpected replies: %v", msgs)
			}
			if d := pipelinetest.Diff(tc.down, notSent(res.Down())); d != "" {
				t.Errorf("downstream (-want +got):\n%s", d)
			}
			if d := pipelinetest.Diff(tc.up, res.Up()); d != "" {
				t.Errorf("upstream (-want +got):\n%s", d)
			}
		})
	}
}

// TestSendTextRunImmediately checks the default send-text: interrupt the
// bot both ways, wait until the flush probe has been back up through the
// processor, then append and run.
func TestSendTextRunImmediately(t *testing.T) {
	p := NewProcessor(Options{})
	res := runProcessor(t, p, `{"label":"rtvi-ai","type":"send-text","id":"1","data":{"content":"hi","options":{}}}`)
	down := notSent(res.Down())
	var token uint64
	if len(down) > 1 {
		if f, ok := down[1].(*frames.Flush); ok {
			token = f.Token
		}
	}
	if token == 0 {
		t.Error("the flush probe has no token")
	}
	want := []frames.Frame{
		&frames.Interruption{},
		&frames.Flush{Token: token},
		&frames.LLMMessagesAppend{Messages: []frames.LLMMessage{{Role: "user", Content: "hi"}}, RunLLM: true},
	}
	if d := pipelinetest.Diff(want, down); d != "" {
		t.Fatalf("downstream (-want +got):\n%s", d)
	}
	if d := pipelinetest.Diff([]frames.Frame{&frames.Interruption{}}, res.Up()); d != "" {
		t.Errorf("upstream (-want +got):\n%s", d)
	}
	if down[0].FrameBase().SiblingID != res.Up()[0].FrameBase().ID() {
		t.Error("the two interruptions are not a broadcast pair")
	}
}

// TestSendTextWaitsForTheFlush holds the flush probe below the processor
// and checks that nothing is appended until it returns.
func TestSendTextWaitsForTheFlush(t *testing.T) {
	p := NewProcessor(Options{})
	release := make(chan struct{})
	var mu sync.Mutex
	var order []string
	gate := pipeline.ProcessorFunc(func(ctx context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
		switch f := f.(type) {
		case *frames.Flush:
			if dir == frames.Upstream {
				h.Consume()
				h.GoBackground(func(ctx context.Context, out pipeline.Pusher) error {
					<-release
					mu.Lock()
					order = append(order, "flush returned")
					mu.Unlock()
					out.Push(f, frames.Upstream)
					return nil
				})
			}
		case *frames.LLMMessagesAppend:
			mu.Lock()
			order = append(order, "append "+f.Messages[0].Content)
			mu.Unlock()
		}
		return nil
	})
	res := pipelinetest.Start(t, pipeline.New(p, gate), pipelinetest.Options{Send: []frames.Frame{
		inbound(`{"label":"rtvi-ai","type":"send-text","id":"1","data":{"content":"first"}}`),
		inbound(`{"label":"rtvi-ai","type":"send-text","id":"2","data":{"content":"second","options":{"run_immediately":false}}}`),
	}, NoEnd: true})
	defer func() {
		res.Task.Cancel("test over")
		res.Wait()
	}()
	// Give the worker ample time to misbehave: nothing may be appended.
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	if len(order) != 0 {
		t.Errorf("appended before the flush returned: %v", order)
	}
	mu.Unlock()
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(order)
		mu.Unlock()
		if n == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if d := cmp.Diff([]string{"flush returned", "append first", "append second"}, order); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
}

func TestSendTextFlushTimesOut(t *testing.T) {
	p := NewProcessor(Options{FlushTimeout: 10 * time.Millisecond})
	swallow := pipeline.ProcessorFunc(func(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
		if _, ok := f.(*frames.Flush); ok {
			h.Consume()
		}
		return nil
	})
	res := pipelinetest.Run(t, pipeline.New(p, swallow), pipelinetest.Options{Send: []frames.Frame{
		inbound(`{"label":"rtvi-ai","type":"send-text","id":"1","data":{"content":"hi"}}`),
	}})
	want := []frames.Frame{
		&frames.Interruption{},
		&frames.LLMMessagesAppend{Messages: []frames.LLMMessage{{Role: "user", Content: "hi"}}, RunLLM: true},
	}
	if d := pipelinetest.Diff(want, notSent(res.Down())); d != "" {
		t.Errorf("downstream (-want +got):\n%s", d)
	}
}

func TestSkipTTSFollowsConfigureOutputFrames(t *testing.T) {
	p := NewProcessor(Options{})
	res := pipelinetest.Start(t, p, pipelinetest.Options{Send: []frames.Frame{&frames.LLMConfigureOutput{SkipTTS: true}}, NoEnd: true})
	// The configure frame is ordered and the message urgent: let the frame
	// pass first.
	deadline := time.Now().Add(10 * time.Second)
	for len(res.Down()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	res.Task.QueueFrame(inbound(`{"label":"rtvi-ai","type":"send-text","id":"1","data":{"content":"speak","options":{"run_immediately":false,"audio_response":true}}}`))
	res.Task.EndWhenDone()
	res.Wait()
	want := []frames.Frame{
		&frames.LLMConfigureOutput{SkipTTS: true},
		&frames.LLMConfigureOutput{SkipTTS: false},
		&frames.LLMMessagesAppend{Messages: []frames.LLMMessage{{Role: "user", Content: "speak"}}},
		&frames.LLMConfigureOutput{SkipTTS: true},
	}
	if d := pipelinetest.Diff(want, notSent(res.Down())); d != "" {
		t.Errorf("downstream (-want +got):\n%s", d)
	}
}

func TestCallbacks(t *testing.T) {
	p := NewProcessor(Options{})
	var (
		msgs []ClientMessage
		ui   []UIMessage
	)
	p.OnClientMessage(func(_ context.Context, m ClientMessage) {
		msgs = append(msgs, m)
		p.SendServerResponse(m, wire.RawJSON(`{"ok":true}`))
	})
	p.OnUIMessage(func(_ context.Context, m UIMessage) { ui = append(ui, m) })
	res := runProcessor(t, p,
		`{"label":"rtvi-ai","type":"client-message","id":"c1","data":{"t":"echo","d":{"x":1,"s":"héllo"}}}`,
		`{"label":"rtvi-ai","type":"ui-event","id":"u1","data":{"event":"click"}}`,
		`{"label":"rtvi-ai","type":"ui-snapshot","id":"u2","data":{"tree":{"root":{"ref":"e1","role":"generic"},"captured_at":1}}}`,
		`{"label":"rtvi-ai","type":"ui-cancel-job-group","id":"u3","data":{"job_id":"j"}}`,
	)
	if len(msgs) != 1 || msgs[0].ID != "c1" || msgs[0].Type != "echo" || string(msgs[0].Data) != `{"x":1,"s":"héllo"}` {
		t.Errorf("client messages: %+v", msgs)
	}
	want := []any{obj{"label": "rtvi-ai", "type": "server-response", "id": "c1", "data": obj{"t": "echo", "d": obj{"ok": true}}}}
	if d := cmp.Diff(want, sent(t, res.Down())); d != "" {
		t.Errorf("replies (-want +got):\n%s", d)
	}
	if len(ui) != 3 {
		t.Fatalf("ui messages: %v", ui)
	}
	if e, ok := ui[0].(*UIEventFrame); !ok || e.Event != "click" || e.MessageID() != "u1" {
		t.Errorf("ui[0] = %#v", ui[0])
	}
	if s, ok := ui[1].(*UISnapshotFrame); !ok || s.Tree.Root.Ref != "e1" || s.MessageID() != "u2" {
		t.Errorf("ui[1] = %#v", ui[1])
	}
	if c, ok := ui[2].(*UICancelTaskFrame); !ok || c.TaskID != "j" || c.MessageID() != "u3" {
		t.Errorf("ui[2] = %#v", ui[2])
	}
	// Each callback saw the same frame that went downstream.
	down := notSent(res.Down())
	if len(down) != 4 || down[1] != frames.Frame(ui[0]) || down[2] != frames.Frame(ui[1]) {
		t.Errorf("downstream frames: %v", down)
	}
}

// A panic in a handler answers the request with Pipecat's "Exception
// processing message" and an error id, never the panic's own text, which
// goes to the log under the same id; the next message is handled.
func TestHandlerPanicBecomesErrorResponse(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	p := NewProcessor(Options{Logger: zap.New(core)})
	p.OnClientMessage(func(context.Context, ClientMessage) { panic("boom at 10.0.0.7") })
	res := runProcessor(t, p,
		`{"label":"rtvi-ai","type":"client-message","id":"c1","data":{"t":"x"}}`,
		`{"label":"rtvi-ai","type":"frobnicate","id":"after"}`)
	got := sent(t, res.Down())
	if len(got) != 2 {
		t.Fatalf("replies: %v", got)
	}
	text, _ := got[0].(obj)["data"].(obj)["error"].(string)
	id, ok := strings.CutPrefix(text, "Exception processing message (error id ")
	id, closed := strings.CutSuffix(id, ")")
	if !ok || !closed || len(id) != 12 {
		t.Errorf("panic reply text %q, want Exception processing message (error id <12 hex>)", text)
	}
	if d := cmp.Diff(errorResponse("after", "Unsupported type frobnicate"), got[1]); d != "" {
		t.Errorf("the next message's reply (-want +got):\n%s", d)
	}
	logged := logs.FilterField(zap.String("error_id", id)).FilterMessage("panic while handling RTVI message").All()
	if len(logged) != 1 || fmt.Sprint(logged[0].ContextMap()["panic"]) != "boom at 10.0.0.7" {
		t.Errorf("log lines with the error id: %v", logged)
	}
}

// Table row 10 of issue 17: an error frame reaches the client as a short
// generic text with an error id, fatal when permanent; what the error
// says (an upstream body, an address, a key fragment) is only in the
// server log, under the same id.
func TestErrorFramesReachTheClientAsGenericTextWithAnErrorID(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	p := NewProcessor(Options{Logger: zap.New(core)})
	upstream := `openai: 401: <html>Incorrect API key provided: sk-ab***yz at gateway 10.1.2.3</html>`
	res := pipelinetest.Run(t, p, pipelinetest.Options{SendUpstream: []frames.Frame{
		&frames.Error{Err: errTest("tts quota exceeded"), Processor: "TTSService#2", Subject: "Speech output", Category: frames.ErrorTransient},
		&frames.Error{Err: errTest(upstream), Processor: "LLMService#1", Subject: "The language model", Category: frames.ErrorPermanent},
		&frames.Error{Err: errTest("boom")},
	}})
	got := sent(t, res.Down())
	wants := []struct {
		prefix string
		fatal  bool
	}{
		{"Speech output is unavailable for the moment (error id ", false},
		{"The language model is unavailable (error id ", true},
		{"The bot ran into a problem (error id ", false},
	}
	if len(got) != len(wants) {
		t.Fatalf("messages: %v", got)
	}
	for i, w := range wants {
		d := got[i].(obj)["data"].(obj)
		text, _ := d["error"].(string)
		id, ok := strings.CutPrefix(text, w.prefix)
		id = strings.TrimSuffix(id, ")")
		if !ok || len(id) != 12 || d["fatal"] != w.fatal {
			t.Errorf("error %d: %v, want %q<id>) fatal %v", i, d, w.prefix, w.fatal)
			continue
		}
		if strings.Contains(text, "sk-") || strings.Contains(text, "10.1.2.3") || strings.Contains(text, "quota") {
			t.Errorf("error %d carries the upstream text: %q", i, text)
		}
		if n := logs.FilterField(zap.String("error_id", id)).Len(); n != 1 {
			t.Errorf("error %d: %d log lines with its id %s, want 1", i, n, id)
		}
	}
	if logs.FilterMessage("error reported to the client").FilterFieldKey("error").Len() != 3 ||
		!strings.Contains(fmt.Sprint(logs.All()[len(logs.All())-2].ContextMap()["error"]), "sk-ab***yz") {
		t.Errorf("the server log does not hold the errors: %v", logs.All())
	}
	if n := len(res.Up()); n != 3 {
		t.Errorf("error frames forwarded upstream: %d, want 3", n)
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }

func TestMessagesAreHandledInOrderBeforeEnd(t *testing.T) {
	p := NewProcessor(Options{})
	var msgs []string
	for i := 0; i < 50; i++ {
		msgs = append(msgs, `{"label":"rtvi-ai","type":"nope","id":"`+string(rune('A'+i%26))+`"}`)
	}
	res := runProcessor(t, p, msgs...)
	got := sent(t, res.Down())
	if len(got) != 50 {
		t.Fatalf("%d replies, want 50", len(got))
	}
	for i, m := range got {
		if id := m.(obj)["id"]; id != string(rune('A'+i%26)) {
			t.Fatalf("reply %d has id %v", i, id)
		}
	}
}

func TestZeroProcessorWorks(t *testing.T) {
	var p Processor
	res := runProcessor(t, &p, `{"label":"rtvi-ai","type":"client-ready","id":"z","data":{"version":"2.1.0","about":{"library":"x"}}}`)
	if d := cmp.Diff([]any{botReady("z", "2.1.0")}, sent(t, res.Down())); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if name := p.Name(); name != p.Name() || name == "RTVIProcessor#0" {
		t.Errorf("name %q is not stable and set", name)
	}
}
