package openairealtime

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
)

func TestServerVADTurnWithAudioAndTranscripts(t *testing.T) {
	fake := newFake(t, "happy.ws")
	r := startRig(t, fake, Options{Voice: "marin", Instructions: "Be brief."}, userAudio(10))
	r.waitDown(t, "the end of the response", isType[*frames.LLMFullResponseEnd])
	r.end(t)

	ordered, system := lanes(r.res.Down())
	wantOrdered := []string{
		"LLMFullResponseStart",
		"TTSStarted item_b1",
		`LLMText "Hel"`,
		"TTSAudioRaw item_b1 2400 samples at 24000 Hz",
		`LLMText "lo there,"`,
		"TTSAudioRaw item_b1 2400 samples at 24000 Hz",
		`InterimTranscription "Hi"`,
		`Transcription "Hi!" finalized=true`,
		"LLMContext user: Hi!",
		`LLMText " friend."`,
		`TTSText "Hello there, friend." by sentence for item_b1`,
		"TTSStopped item_b1",
		"LLMFullResponseEnd",
	}
	if d := cmp.Diff(wantOrdered, ordered); d != "" {
		t.Errorf("ordered frames downstream (-want +got):\n%s", d)
	}
	wantSystem := []string{
		"UserStartedSpeaking",
		"Interruption",
		"UserStoppedSpeaking",
		"Metrics usage gpt-realtime in=100 out=20 total=120 cached=64",
	}
	if d := cmp.Diff(wantSystem, system); d != "" {
		t.Errorf("system frames downstream (-want +got):\n%s", d)
	}
	if got := fake.audioBytes(0); got != 9600 {
		t.Errorf("server got %d bytes of 24 kHz audio for 200 ms of 16 kHz input, want 9600", got)
	}
	if got := fake.auth[0]; got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
	if got := fake.urls[0]; got != "/v1/realtime?model=gpt-realtime" {
		t.Errorf("handshake URL = %q", got)
	}
	// Server VAD without a BeforeResponse hook: the server starts the
	// response itself, so the client asks for none.
	if got := fake.sent("response.create"); len(got) != 0 {
		t.Errorf("client sent %d response.create, want none", len(got))
	}
}

func TestBetaEventNames(t *testing.T) {
	fake := newFake(t, "beta.ws")
	r := startRig(t, fake, Options{}, nil)
	r.waitDown(t, "the end of the response", isType[*frames.LLMFullResponseEnd])
	r.end(t)
	ordered, _ := lanes(r.res.Down())
	want := []string{
		"LLMFullResponseStart",
		"TTSStarted item_b1",
		`LLMText "Hi."`,
		"TTSAudioRaw item_b1 2400 samples at 24000 Hz",
		`TTSText "Hi." by sentence for item_b1`,
		"TTSStopped item_b1",
		"LLMFullResponseEnd",
	}
	if d := cmp.Diff(want, ordered); d != "" {
		t.Errorf("ordered frames downstream (-want +got):\n%s", d)
	}
}

func TestOutputAudioIsResampledToThePipelineRate(t *testing.T) {
	fake := newFake(t, "beta.ws")
	o := Options{BaseURL: fake.baseURL(), APIKey: "k"}
	svc := New(o)
	res := startTask(t, svc, 48000)
	waitFor(t, "audio", func() bool {
		for _, f := range res.Down() {
			if isType[*frames.LLMFullResponseEnd](f) {
				return true
			}
		}
		return false
	})
	res.Task.EndWhenDone()
	res.Wait()
	var samples int
	for _, f := range res.Down() {
		if a, ok := f.(*frames.TTSAudioRaw); ok {
			if a.SampleRate != 48000 {
				t.Errorf("audio at %d Hz, want 48000", a.SampleRate)
			}
			samples += a.NumFrames()
		}
	}
	if samples != 4800 {
		t.Errorf("100 ms at 48 kHz came out as %d samples, want 4800", samples)
	}
}

func TestFunctionCallsSettleOnceAndRunOneFollowUp(t *testing.T) {
	fake := newFake(t, "functions.ws")
	var weatherCalls, timeCalls atomic.Int32
	type weatherArgs struct {
		City string `json:"city"`
	}
	type timeArgs struct {
		Zone string `json:"zone"`
	}
	weather := llm.NewFunction("get_weather", "Weather in a city.", func(ctx context.Context, call llm.FunctionCallParams, a weatherArgs) error {
		weatherCalls.Add(1)
		time.Sleep(40 * time.Millisecond) // the slower of the two
		if err := call.Result(map[string]string{"city": a.City, "sky": "sunny"}); err != nil {
			return err
		}
		if err := call.Result("again"); err == nil {
			t.Error("a second result was accepted")
		}
		return nil
	})
	clock := llm.NewFunction("get_time", "Time in a zone.", func(ctx context.Context, call llm.FunctionCallParams, a timeArgs) error {
		timeCalls.Add(1)
		return call.Result("12:00 in " + a.Zone)
	})
	r := startRig(t, fake, Options{Functions: []llm.Function{weather, clock}}, nil)
	waitFor(t, "the follow-up response", func() bool {
		n := 0
		for _, f := range r.res.Down() {
			if isType[*frames.LLMFullResponseEnd](f) {
				n++
			}
		}
		return n >= 2
	})
	r.end(t)

	if weatherCalls.Load() != 1 || timeCalls.Load() != 1 {
		t.Errorf("handlers ran %d and %d times, want once each", weatherCalls.Load(), timeCalls.Load())
	}
	// What the server saw after the calls: both outputs, then one
	// response.create.
	var outputs []string
	var afterOutputs []string
	for _, e := range fake.sent("conversation.item.create", "response.create") {
		if e.Type == "response.create" {
			afterOutputs = append(afterOutputs, string(e.Raw))
			if len(outputs) != 2 {
				t.Errorf("response.create sent after %d of 2 outputs", len(outputs))
			}
			continue
		}
		outputs = append(outputs, string(e.Raw))
	}
	sort.Strings(outputs)
	wantOutputs := []string{
		`{"type":"conversation.item.create","item":{"type":"function_call_output","call_id":"call_t1","output":"12:00 in Europe/Paris"}}`,
		`{"type":"conversation.item.create","item":{"type":"function_call_output","call_id":"call_w1","output":"{\"city\":\"Paris\",\"sky\":\"sunny\"}"}}`,
	}
	if d := cmp.Diff(wantOutputs, outputs); d != "" {
		t.Errorf("function_call_output items (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{`{"type":"response.create","event_id":"fw_resp_1"}`}, afterOutputs); d != "" {
		t.Errorf("response.create events (-want +got):\n%s", d)
	}

	// The pipeline sees the calls as with any LLM: announced, in
	// progress, settled.
	var inProgress, results []string
	for _, f := range r.res.Down() {
		switch f.(type) {
		case *frames.FunctionCallInProgress:
			inProgress = append(inProgress, describe(f))
		case *frames.FunctionCallResult:
			results = append(results, describe(f))
		}
	}
	sort.Strings(results)
	wantInProgress := []string{
		`FunctionCallInProgress get_weather call_w1 {"city":"Paris"}`,
		`FunctionCallInProgress get_time call_t1 {"zone":"Europe/Paris"}`,
	}
	if d := cmp.Diff(wantInProgress, inProgress); d != "" {
		t.Errorf("in-progress frames (-want +got):\n%s", d)
	}
	wantResults := []string{
		`FunctionCallResult get_time call_t1 "12:00 in Europe/Paris"`,
		`FunctionCallResult get_weather call_w1 {"city":"Paris","sky":"sunny"}`,
	}
	if d := cmp.Diff(wantResults, results); d != "" {
		t.Errorf("result frames (-want +got):\n%s", d)
	}
	if n := r.countUp(isType[*frames.FunctionCallsStarted]); n != 1 {
		t.Errorf("%d FunctionCallsStarted upstream, want 1", n)
	}
}

func TestInterruptionTruncatesAtThePlayedPosition(t *testing.T) {
	fake := newFake(t, "interrupt.ws")
	g := &gate{limit: 300 * time.Millisecond}
	r := startRig(t, fake, Options{}, nil, g)
	r.waitDown(t, "the end of the cut response", isType[*frames.LLMFullResponseEnd])
	waitFor(t, "response.cancel", func() bool { return len(fake.sent("response.cancel")) == 1 })
	// The late delta of the cancelled response comes after the cancel;
	// give it time to arrive before looking at what was played.
	waitFor(t, "the script's end", func() bool { return len(fake.sent()) >= 3 })
	time.Sleep(50 * time.Millisecond)
	r.end(t)

	got := fake.sent("conversation.item.truncate", "response.cancel")
	var raw []string
	for _, e := range got {
		raw = append(raw, string(e.Raw))
	}
	want := []string{
		`{"type":"conversation.item.truncate","item_id":"item_b1","content_index":0,"audio_end_ms":300}`,
		`{"type":"response.cancel"}`,
	}
	if d := cmp.Diff(want, raw); d != "" {
		t.Errorf("client events on interruption (-want +got):\n%s", d)
	}
	if n := g.lateAudio(); n != 0 {
		t.Errorf("the output got %d audio frames after the interruption, want none", n)
	}
	// The interruption goes both ways; the response is closed after it.
	down := r.res.Down()
	var tail []string
	for i, f := range down {
		if isType[*frames.Interruption](f) {
			for _, g := range down[i:] {
				if g.Lane() != frames.LaneSystem || isType[*frames.Interruption](g) {
					tail = append(tail, describe(g))
				}
			}
			break
		}
	}
	wantTail := []string{"Interruption", "TTSStopped item_b1", "LLMFullResponseEnd"}
	if d := cmp.Diff(wantTail, tail); d != "" {
		t.Errorf("frames from the interruption on (-want +got):\n%s", d)
	}
	if n := r.countUp(isType[*frames.Interruption]); n != 1 {
		t.Errorf("%d interruptions upstream, want 1", n)
	}
}

func TestServerErrorsBecomeErrorFrames(t *testing.T) {
	fake := newFake(t, "errors.ws")
	r := startRig(t, fake, Options{}, nil)
	waitFor(t, "four errors", func() bool { return r.countUp(isType[*frames.Error]) >= 4 })
	r.end(t)
	var got []string
	for _, f := range r.res.Up() {
		if e, ok := f.(*frames.Error); ok {
			got = append(got, describe(e))
			if strings.Contains(e.Error(), "Rate limit reached") || strings.Contains(e.Error(), "Sorry") {
				t.Errorf("error text carries the server's message: %v", e)
			}
		}
	}
	want := []string{
		"Error openairealtime: invalid_request_error (invalid_value) [unknown]",
		"Error openairealtime: rate limited (rate_limit_exceeded) [transient]",
		"Error openairealtime: server_error [transient]",
		"Error openairealtime: server_error (internal_error) [transient]",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("errors upstream (-want +got):\n%s", d)
	}
	var e *Error
	for _, f := range r.res.Up() {
		if ef, ok := f.(*frames.Error); ok && e == nil {
			e, _ = ef.Err.(*Error)
		}
	}
	if e == nil || e.Param != "session.audio.output.voice" || e.EventID != "evt_client_1" || !strings.HasPrefix(e.Message, "Invalid value") {
		t.Errorf("the first error keeps the server's details for the log: %+v", e)
	}
}

func TestRefusedHandshakes(t *testing.T) {
	t.Run("401 is permanent", func(t *testing.T) {
		fake := newFake(t, "reconnected.ws")
		fake.reject = func(int) (int, http.Header, string) {
			return http.StatusUnauthorized, nil, `{"error":{"message":"Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
		}
		r := startRig(t, fake, Options{}, nil)
		waitFor(t, "an error", func() bool { return r.countUp(isType[*frames.Error]) >= 1 })
		time.Sleep(300 * time.Millisecond) // a retry would have happened by now
		r.end(t)
		var got []string
		for _, f := range r.res.Up() {
			if isType[*frames.Error](f) {
				got = append(got, describe(f))
			}
		}
		if d := cmp.Diff([]string{"Error openairealtime: connection refused with HTTP 401 (invalid_api_key) [permanent]"}, got); d != "" {
			t.Errorf("errors (-want +got):\n%s", d)
		}
		if n := fake.srv.Connections(); n != 1 {
			t.Errorf("%d handshakes, want 1: a refused key is not retried", n)
		}
	})
	t.Run("429 is retried", func(t *testing.T) {
		fake := newFake(t, "reconnected.ws")
		fake.reject = func(n int) (int, http.Header, string) {
			if n > 0 {
				return 0, nil, ""
			}
			return http.StatusTooManyRequests, http.Header{"Retry-After": {"1"}}, `{"error":{"message":"Too many sessions.","type":"requests","code":"rate_limit_exceeded"}}`
		}
		began := time.Now()
		r := startRig(t, fake, Options{}, nil)
		waitFor(t, "the second session", func() bool { return len(fake.sent("session.update")) == 1 })
		if waited := time.Since(began); waited < 900*time.Millisecond {
			t.Errorf("retried after %v, before the 1 s Retry-After", waited)
		}
		r.end(t)
		var got []string
		for _, f := range r.res.Up() {
			if isType[*frames.Error](f) {
				got = append(got, describe(f))
			}
		}
		if d := cmp.Diff([]string{"Error openairealtime: connection refused with HTTP 429 (rate_limit_exceeded) [transient]"}, got); d != "" {
			t.Errorf("errors (-want +got):\n%s", d)
		}
		for _, f := range r.res.Up() {
			if e, ok := f.(*frames.Error); ok {
				if ae, ok := e.Err.(*Error); !ok || ae.RetryAfter != time.Second || ae.Message != "Too many sessions." {
					t.Errorf("the error keeps the server's details: %+v", e.Err)
				}
			}
		}
		if n := fake.srv.Connections(); n != 2 {
			t.Errorf("%d handshakes, want 2", n)
		}
	})
}

func TestSocketCutMidResponseClosesItAndReconnects(t *testing.T) {
	fake := newFake(t, "cut.ws", "reconnected.ws")
	r := startRig(t, fake, Options{}, nil)
	waitFor(t, "the second session", func() bool { return len(fake.sent("session.update")) == 2 })
	r.waitDown(t, "the end of the cut response", isType[*frames.LLMFullResponseEnd])
	r.end(t)
	ordered, _ := lanes(r.res.Down())
	want := []string{
		"LLMFullResponseStart",
		"TTSStarted item_b1",
		`LLMText "Let me"`,
		"TTSAudioRaw item_b1 2400 samples at 24000 Hz",
		"TTSStopped item_b1",
		"LLMFullResponseEnd",
	}
	if d := cmp.Diff(want, ordered); d != "" {
		t.Errorf("ordered frames (-want +got):\n%s", d)
	}
	var errs []frames.ErrorCategory
	for _, f := range r.res.Up() {
		if e, ok := f.(*frames.Error); ok {
			errs = append(errs, e.Category)
		}
	}
	if d := cmp.Diff([]frames.ErrorCategory{frames.ErrorTransient}, errs); d != "" {
		t.Errorf("error categories (-want +got):\n%s", d)
	}
}

func TestFrameworkTurnsCommitAndAskForTheResponse(t *testing.T) {
	fake := newFake(t, "framework.ws")
	send := []frames.Frame{&frames.UserStartedSpeaking{}}
	send = append(send, userAudio(10)...)
	send = append(send, &frames.UserStoppedSpeaking{})
	r := startRig(t, fake, Options{TurnDetection: FrameworkTurns}, send)
	r.waitDown(t, "the end of the response", isType[*frames.LLMFullResponseEnd])
	r.end(t)
	var types []string
	for _, e := range fake.sent() {
		types = append(types, e.Type)
	}
	if d := cmp.Diff([]string{"session.update", "input_audio_buffer.commit", "response.create"}, types); d != "" {
		t.Errorf("client events (-want +got):\n%s", d)
	}
	if got := fake.audioBytes(0); got != 9600 {
		t.Errorf("server got %d bytes of audio, want 9600", got)
	}
	var su sessionUpdate
	if err := json.Unmarshal(fake.sent("session.update")[0].Raw, &su); err != nil {
		t.Fatal(err)
	}
	if su.Session.Audio.Input.TurnDetection != nil {
		t.Errorf("turn_detection = %+v, want null", su.Session.Audio.Input.TurnDetection)
	}
}

func TestIdleServerMidResponse(t *testing.T) {
	fake := newFake(t, "stall.ws")
	r := startRig(t, fake, Options{Timeouts: Timeouts{Idle: 150 * time.Millisecond}}, nil)
	r.waitDown(t, "the response closed", isType[*frames.LLMFullResponseEnd])
	waitFor(t, "response.cancel", func() bool { return len(fake.sent("response.cancel")) == 1 })
	r.end(t)
	ordered, _ := lanes(r.res.Down())
	want := []string{"LLMFullResponseStart", "TTSStarted item_b1", `LLMText "Well,"`, "TTSStopped item_b1", "LLMFullResponseEnd"}
	if d := cmp.Diff(want, ordered); d != "" {
		t.Errorf("ordered frames (-want +got):\n%s", d)
	}
	var errs []string
	for _, f := range r.res.Up() {
		if isType[*frames.Error](f) {
			errs = append(errs, describe(f))
		}
	}
	if d := cmp.Diff([]string{"Error openairealtime: the stream stalled: nothing received for 150ms [transient]"}, errs); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
}

func TestGivesUpAfterMaxReconnects(t *testing.T) {
	fake := newFake(t, "reconnected.ws")
	fake.reject = func(int) (int, http.Header, string) {
		return http.StatusServiceUnavailable, nil, `{"error":{"message":"Overloaded","type":"server_error"}}`
	}
	r := startRig(t, fake, Options{MaxReconnects: 1}, nil)
	waitFor(t, "three errors", func() bool { return r.countUp(isType[*frames.Error]) >= 3 })
	r.end(t)
	var errs []string
	for _, f := range r.res.Up() {
		if isType[*frames.Error](f) {
			errs = append(errs, describe(f))
		}
	}
	want := []string{
		"Error openairealtime: connection refused with HTTP 503 [transient]",
		"Error openairealtime: connection refused with HTTP 503 [transient]",
		"Error openairealtime: no session after 2 attempts (permanent failure) [permanent]",
	}
	if d := cmp.Diff(want, errs); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
	if n := fake.srv.Connections(); n != 2 {
		t.Errorf("%d handshakes, want 2", n)
	}
}

func TestToolsUpdateMidSession(t *testing.T) {
	fake := newFake(t, "reconnected.ws")
	hang := llm.Function{Name: "hang_up", Handler: func(context.Context, llm.FunctionCallParams) error { return nil }}
	r := startRig(t, fake, Options{Functions: []llm.Function{hang}}, nil)
	waitFor(t, "the session", func() bool { return len(fake.sent("session.update")) == 1 })
	r.res.Task.QueueFrame(&frames.LLMSetTools{Tools: []frames.LLMTool{{Name: "transfer", Description: "Transfer the call."}}})
	waitFor(t, "the tools update", func() bool { return len(fake.sent("session.update")) == 2 })
	r.end(t)
	got := string(fake.sent("session.update")[1].Raw)
	want := `{"type":"session.update","session":{"type":"realtime","tools":[{"type":"function","name":"transfer","description":"Transfer the call.","parameters":{"type":"object","properties":{}}}]}}`
	if got != want {
		t.Errorf("tools update\n got %s\nwant %s", got, want)
	}
}

func TestInterruptionCancelsARunningCall(t *testing.T) {
	fake := newFake(t, "cancelcall.ws")
	started := make(chan struct{})
	late := make(chan error, 1)
	book := llm.Function{Name: "book_table", Handler: func(ctx context.Context, call llm.FunctionCallParams) error {
		close(started)
		<-ctx.Done()
		late <- call.Result("booked")
		return ctx.Err()
	}}
	fake.until = map[string]func() bool{"started": func() bool {
		select {
		case <-started:
			return true
		default:
			return false
		}
	}}
	r := startRig(t, fake, Options{Functions: []llm.Function{book}}, nil)
	var lateErr error
	select {
	case lateErr = <-late:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler's context was never cancelled")
	}
	waitFor(t, "the output", func() bool { return len(fake.sent("conversation.item.create")) == 1 })
	time.Sleep(50 * time.Millisecond) // room for a response.create that must not come
	r.end(t)
	if !errors.Is(lateErr, llm.ErrSettled) {
		t.Errorf("a result after the cancel: %v, want ErrSettled", lateErr)
	}
	got := string(fake.sent("conversation.item.create")[0].Raw)
	if want := `{"type":"conversation.item.create","item":{"type":"function_call_output","call_id":"call_b1","output":"CANCELLED"}}`; got != want {
		t.Errorf("output\n got %s\nwant %s", got, want)
	}
	if n := len(fake.sent("response.create")); n != 0 {
		t.Errorf("%d response.create after a cancelled call, want none", n)
	}
	if n := r.countUp(isType[*frames.FunctionCallCancel]); n != 1 {
		t.Errorf("%d FunctionCallCancel upstream, want 1", n)
	}
}

func TestFrameworkTurnStartInterruptsTheBot(t *testing.T) {
	fake := newFake(t, "framework_barge_in.ws")
	r := startRig(t, fake, Options{TurnDetection: FrameworkTurns}, nil)
	waitFor(t, "200 ms played", func() bool { return r.svc.tap.current() == 200*time.Millisecond })
	r.res.Task.QueueFrame(&frames.UserStartedSpeaking{})
	waitFor(t, "response.cancel", func() bool { return len(fake.sent("response.cancel")) == 1 })
	r.waitDown(t, "the end of the cut response", isType[*frames.LLMFullResponseEnd])
	r.end(t)
	var raw []string
	for _, e := range fake.sent("conversation.item.truncate", "response.cancel") {
		raw = append(raw, string(e.Raw))
	}
	want := []string{
		`{"type":"conversation.item.truncate","item_id":"item_b1","content_index":0,"audio_end_ms":200}`,
		`{"type":"response.cancel"}`,
	}
	if d := cmp.Diff(want, raw); d != "" {
		t.Errorf("client events (-want +got):\n%s", d)
	}
	if n := r.countUp(isType[*frames.Interruption]); n != 1 {
		t.Errorf("%d interruptions upstream, want 1", n)
	}
}

// A text response's sentences go out as unspoken AggregatedText (RTVI
// bot-output with spoken false), its deltas as LLMText.
func TestTextResponseSentences(t *testing.T) {
	fake := newFake(t, "text.ws")
	r := startRig(t, fake, Options{}, nil)
	r.waitDown(t, "the end of the response", isType[*frames.LLMFullResponseEnd])
	r.end(t)
	var got []string
	for _, f := range r.res.Down() {
		switch x := f.(type) {
		case *frames.AggregatedText:
			got = append(got, "AggregatedText "+x.Text+" by "+x.AggregatedBy)
		case *frames.LLMText:
			got = append(got, "LLMText "+x.Text)
		case *frames.TTSText:
			got = append(got, "TTSText "+x.Text)
		}
	}
	want := []string{"LLMText Two sentences. And", "AggregatedText Two sentences. by sentence", "LLMText  the second.", "AggregatedText And the second. by sentence"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("text frames (-want +got):\n%s", d)
	}
}
