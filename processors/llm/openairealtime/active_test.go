package openairealtime

import (
	"context"
	"encoding/json"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
)

// The refusal the fake sends for a response.create during a response is
// the service's error event, byte for byte as pinned, and refused.ws
// replays the same bytes.
func TestActiveResponseRefusalGolden(t *testing.T) {
	want, err := os.ReadFile("testdata/active_response_refusal.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	want = []byte(strings.TrimSpace(string(want)))
	if got := activeResponseRefusal("event_3", "fw_resp_1", "resp_v1"); string(got) != string(want) {
		t.Errorf("refusal:\n got %s\nwant %s", got, want)
	}
	script, err := os.ReadFile("testdata/refused.ws")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), "> "+string(want)+"\n") {
		t.Error("refused.ws does not send the pinned refusal")
	}
	var ev event
	if err := parseEvent(want, &ev); err != nil || ev.kind != evError {
		t.Fatalf("the refusal parses as %v, %v", ev.kind, err)
	}
}

// A function call's follow-up and a spoken answer (a TTSSpeak) that come
// while the server runs another response are not sent then, which the
// service would refuse (losing both): each waits for the response.done
// and they go one at a time. Fails before the queue: the follow-up's
// response.create reached the fake during resp_2 and was refused.
func TestResponsesAskedForDuringAResponseWaitForItsEnd(t *testing.T) {
	fake := newFake(t, "active.ws")
	core, logs := observer.New(zapcore.DebugLevel)
	waiting := func(verbatim bool) bool {
		for _, e := range logs.FilterMessage("realtime: a response waits for the server's active one to end").All() {
			if e.ContextMap()["verbatim"] == verbatim {
				return true
			}
		}
		return false
	}
	fake.until = map[string]func() bool{"both wait": func() bool { return waiting(true) && waiting(false) }}
	var r *rig
	started := make(chan struct{}) // r is set
	weather := llm.NewFunction("get_weather", "Weather in a city.", func(ctx context.Context, call llm.FunctionCallParams, a struct {
		City string `json:"city"`
	}) error {
		<-started
		// Once the session knows resp_2 runs (its first words came out):
		// the answer to speak, then the result that asks for the
		// follow-up.
		r.waitDown(t, "resp_2", func(f frames.Frame) bool {
			x, ok := f.(*frames.LLMText)
			return ok && x.Text == "One moment."
		})
		r.res.Task.QueueFrame(&frames.TTSSpeak{Text: "Second answer."})
		return call.Result("sunny in " + a.City)
	})
	r = startRigLog(t, fake, Options{Functions: []llm.Function{weather}}, nil, zap.New(core))
	close(started)
	t.Cleanup(func() {
		if t.Failed() {
			for _, f := range r.res.Down() {
				t.Log(describe(f))
			}
			for _, e := range logs.All() {
				t.Log(e.Message, e.ContextMap())
			}
		}
	})
	r.waitDown(t, "the second answer", func(f frames.Frame) bool {
		x, ok := f.(*frames.TTSText)
		return ok && x.Text == "Second answer."
	})
	r.end(t)

	if got := fake.refusedCreates(); len(got) != 0 {
		t.Errorf("refused response.create: %q", got)
	}
	var asked []string
	for _, e := range fake.sent("response.create") {
		var c responseCreate
		if err := json.Unmarshal(e.Raw, &c); err != nil {
			t.Fatal(err)
		}
		if c.Response == nil {
			asked = append(asked, "follow-up")
		} else {
			_, said, _ := strings.Cut(c.Response.Instructions, "\n\n")
			asked = append(asked, "say "+said)
		}
	}
	sort.Strings(asked)
	if d := cmp.Diff([]string{"follow-up", "say Second answer."}, asked); d != "" {
		t.Errorf("responses asked for (-want +got):\n%s", d)
	}
	var said []string
	for _, f := range r.res.Down() {
		if x, ok := f.(*frames.TTSText); ok {
			said = append(said, x.Text)
		}
	}
	if d := cmp.Diff([]string{"One moment.", "First answer.", "Second answer."}, said); d != "" {
		t.Errorf("spoken sentences (-want +got):\n%s", d)
	}
}

// A response.create the server refuses because it started a response by
// itself (server VAD) waits for that response's end and goes again, the
// refusal naming it by event id or not at all; no error reaches the
// pipeline and the answer is spoken. Fails before: the refusal became an
// error frame and the answer was lost.
func TestRefusedResponseGoesAgainAfterTheActiveOne(t *testing.T) {
	fake := newFake(t, "refused.ws")
	r := startRig(t, fake, Options{}, []frames.Frame{&frames.TTSSpeak{Text: "Hello there."}})
	r.waitDown(t, "the answer", func(f frames.Frame) bool {
		x, ok := f.(*frames.TTSText)
		return ok && x.Text == "Hello there."
	})
	r.end(t)
	var ids []string
	for _, e := range fake.sent("response.create") {
		var c responseCreate
		if err := json.Unmarshal(e.Raw, &c); err != nil {
			t.Fatal(err)
		}
		if c.Response == nil || !strings.HasSuffix(c.Response.Instructions, "\n\nHello there.") {
			t.Errorf("response.create %s does not ask for the answer", e.Raw)
		}
		ids = append(ids, c.EventID)
	}
	if d := cmp.Diff([]string{"fw_resp_1", "fw_resp_2", "fw_resp_3"}, ids); d != "" {
		t.Errorf("response.create event ids (-want +got):\n%s", d)
	}
	for _, f := range r.res.Up() {
		if isType[*frames.Error](f) {
			t.Errorf("error upstream: %s", describe(f))
		}
	}
}

// At most maxQueuedResponses requests wait, the oldest dropped past it;
// plain requests in a row wait as one (one response answers all).
func TestWaitingResponsesAreBounded(t *testing.T) {
	st := inputState()
	for i := range maxQueuedResponses + 8 {
		st.enqueue(&responseParams{Instructions: strconv.Itoa(i)})
	}
	if len(st.queued) != maxQueuedResponses || st.queued[0].Instructions != "8" {
		t.Errorf("%d waiting, first %q; want %d, the 8 oldest dropped", len(st.queued), st.queued[0].Instructions, maxQueuedResponses)
	}
	st = inputState()
	st.enqueue(nil)
	st.enqueue(nil)
	st.enqueue(&responseParams{Instructions: "say"})
	st.enqueue(nil)
	if len(st.queued) != 3 {
		t.Errorf("%d waiting, want 3 (two plain requests in a row are one)", len(st.queued))
	}
}
