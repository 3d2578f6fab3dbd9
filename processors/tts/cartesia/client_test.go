package cartesia

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/wsfake"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/tts/internal/ttstest"
	"github.com/framewire/framewire/processors/upstream"
)

func pcmFixture(t testing.TB) []byte { return ttstest.Fixture(t, "hello_world.pcm") }

func newClient(f *fakeCartesia) *Client {
	return New(Options{URL: f.url(), APIKey: "sk_car_test", VoiceID: "voice-1", HTTP: upstream.HTTP{RetryBackoff: time.Millisecond}})
}

// run speaks text at 24 kHz in context ctxID.
func run(ctx context.Context, c *Client, text, ctxID string) ttstest.Result {
	return ttstest.Collect(ctx, c, tts.Request{Text: text, ContextID: ctxID, SampleRate: 24000})
}

func TestGeneration(t *testing.T) {
	f := newFake(t, "hello.ws")
	defer f.close()
	c := newClient(f)
	defer c.Close()
	r := run(context.Background(), c, "Hello world.", "ctx-1")
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if !bytes.Equal(r.Audio, pcmFixture(t)) || r.Rate != 24000 {
		t.Errorf("got %d bytes at %d Hz, want the fixture's %d bytes at 24000 Hz", len(r.Audio), r.Rate, len(pcmFixture(t)))
	}
	wantWords := []tts.Word{{Text: "Hello", Start: 20 * time.Millisecond}, {Text: "world.", Start: 360 * time.Millisecond}}
	if diff := cmp.Diff(wantWords, r.Words); diff != "" {
		t.Errorf("words (-want +got):\n%s", diff)
	}
	msgs := f.messages()
	if len(msgs) != 1 {
		t.Fatalf("server got %d messages, want the request", len(msgs))
	}
	want := map[string]any{
		"model_id": "sonic-3.5", "transcript": "Hello world.", "language": "en", "context_id": "ctx-1",
		"voice":          map[string]any{"mode": "id", "id": "voice-1"},
		"output_format":  map[string]any{"container": "raw", "encoding": "pcm_s16le", "sample_rate": float64(24000)},
		"add_timestamps": true, "continue": false,
	}
	if diff := cmp.Diff(want, msgs[0]); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	f.mu.Lock()
	q := f.query[0]
	f.mu.Unlock()
	if !strings.Contains(q, "api_key=sk_car_test") || !strings.Contains(q, "cartesia_version=2026-03-01") {
		t.Errorf("handshake query %q lacks the key or version", q)
	}
}

func TestWordsArriveWithTheirAudioThroughTheService(t *testing.T) {
	f := newFake(t, "hello.ws")
	defer f.close()
	res := pipelinetest.Run(t, tts.NewService(newClient(f), tts.Options{}), pipelinetest.Options{
		Send: []frames.Frame{&frames.TTSSpeak{Text: "Hello world."}},
	})
	var audio []byte
	var texts []string
	for _, fr := range res.Down() {
		switch fr := fr.(type) {
		case *frames.TTSAudioRaw:
			audio = append(audio, fr.PCM...)
		case *frames.TTSText:
			if fr.AggregatedBy != tts.AggregatedByWord {
				t.Errorf("text %q aggregated by %q", fr.Text, fr.AggregatedBy)
			}
			// Each word follows at least the audio up to its start.
			texts = append(texts, fr.Text+"@"+strings.Repeat("|", len(audio)/(24000*2*100/1000)))
		}
	}
	if !bytes.Equal(audio, pcmFixture(t)) {
		t.Errorf("%d bytes of audio, want %d", len(audio), len(pcmFixture(t)))
	}
	// "Hello" starts at 20 ms, "world." at 360 ms: released after at least
	// 0 and 3 tenths of a second of audio.
	if len(texts) != 2 || !strings.HasPrefix(texts[0], "Hello@") || !strings.HasPrefix(texts[1], "world.@|||") {
		t.Errorf("word releases %q", texts)
	}
}

func TestTwoRequestsShareOneConnection(t *testing.T) {
	f := newFake(t, "two_requests.ws")
	defer f.close()
	c := newClient(f)
	defer c.Close()
	for i, id := range []string{"a", "b"} {
		if r := run(context.Background(), c, "Sentence.", id); r.Err != nil || len(r.Audio) == 0 {
			t.Fatalf("request %d: %d bytes, err %v", i, len(r.Audio), r.Err)
		}
	}
	if n := f.connections(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

func TestErrorMessages(t *testing.T) {
	tests := []struct{ script, want string }{
		{"error_model.ws", "cartesia: status 400: Invalid model: The model is not valid, make sure it is a valid model ID. (code model_not_found)"},
		{"error_legacy.ws", "cartesia: status 400: Invalid voice: voice not found"},
	}
	for _, tc := range tests {
		t.Run(tc.script, func(t *testing.T) {
			f := newFake(t, tc.script)
			defer f.close()
			c := newClient(f)
			defer c.Close()
			r := run(context.Background(), c, "Hi.", "x")
			var apiErr *APIError
			if !errors.As(r.Err, &apiErr) || r.Err.Error() != tc.want {
				t.Fatalf("err = %v\nwant %s", r.Err, tc.want)
			}
			if apiErr.Category() != frames.ErrorUnknown || f.connections() != 1 {
				t.Errorf("a request error is not retried (category %v, %d connections)", apiErr.Category(), f.connections())
			}
		})
	}
}

func TestInterruptionSendsCancelAndTheConnectionGoesOn(t *testing.T) {
	f := newFake(t, "interrupted.ws")
	defer f.close()
	c := newClient(f)
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var got int
	for ch, err := range c.Synthesize(ctx, tts.Request{Text: "A very long answer.", ContextID: "long"}) {
		if err != nil {
			t.Fatalf("an interruption is not an error: %v", err)
		}
		got += len(ch.Audio)
		cancel() // barge-in after the first chunk
	}
	cancel()
	if got == 0 {
		t.Fatal("no audio before the interruption")
	}
	// The next request runs on the same connection; audio the server had
	// already sent for the cancelled context does not leak into it.
	r := run(context.Background(), c, "Next.", "next")
	pcm := pcmFixture(t)
	if r.Err != nil || !bytes.Equal(r.Audio, pcm[2*len(pcm)/3:]) {
		t.Fatalf("after the interruption: %d bytes (want the third chunk, %d), err %v", len(r.Audio), len(pcm)/3, r.Err)
	}
	msgs := f.messages()
	if len(msgs) != 3 || msgs[1]["cancel"] != true || msgs[1]["context_id"] != "long" {
		t.Errorf("server got %v; want request, cancel for \"long\", request", msgs)
	}
	if f.connections() != 1 {
		t.Errorf("%d connections, want 1", f.connections())
	}
}

func TestDropMidGenerationFailsItThenReconnects(t *testing.T) {
	f := newFake(t, "close_midstream.ws", "hello.ws")
	defer f.close()
	c := newClient(f)
	defer c.Close()
	r := run(context.Background(), c, "Hello world.", "a")
	if r.Err == nil || !strings.Contains(r.Err.Error(), "connection lost during the generation: closed by the server with status 1011 (internal server error)") {
		t.Fatalf("err = %v", r.Err)
	}
	if len(r.Audio) == 0 {
		t.Error("the audio before the drop was not delivered")
	}
	var c2 frames.Categorizer
	if !errors.As(r.Err, &c2) || c2.Category() != frames.ErrorTransient {
		t.Errorf("a dropped connection should be transient")
	}
	// Audio had been delivered, so the request was not replayed; the next
	// one opens a new connection.
	if r := run(context.Background(), c, "Hello world.", "b"); r.Err != nil || !bytes.Equal(r.Audio, pcmFixture(t)) {
		t.Fatalf("after reconnecting: %d bytes, err %v", len(r.Audio), r.Err)
	}
	if f.connections() != 2 {
		t.Errorf("%d connections, want 2", f.connections())
	}
}

func TestDropBeforeAudioIsRetriedOnANewConnection(t *testing.T) {
	f := newFake(t, "drop_before_audio.ws", "hello.ws")
	defer f.close()
	c := newClient(f)
	defer c.Close()
	r := run(context.Background(), c, "Hello world.", "a")
	if r.Err != nil || !bytes.Equal(r.Audio, pcmFixture(t)) {
		t.Fatalf("%d bytes, err %v; want the whole generation from the second connection", len(r.Audio), r.Err)
	}
	if f.connections() != 2 {
		t.Errorf("%d connections, want 2", f.connections())
	}
}

func TestIdleCloseReconnectsOnTheNextRequest(t *testing.T) {
	f := newFake(t, "idle_close.ws", "hello.ws")
	defer f.close()
	c := newClient(f)
	defer c.Close()
	if r := run(context.Background(), c, "First.", "a"); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := run(context.Background(), c, "Hello world.", "b"); r.Err != nil || !bytes.Equal(r.Audio, pcmFixture(t)) {
		t.Fatalf("after the idle close: %d bytes, err %v", len(r.Audio), r.Err)
	}
	if f.connections() != 2 {
		t.Errorf("%d connections, want 2", f.connections())
	}
}

func TestHandshakeRefusals(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		body     string
		conns    int
		want     string
		category frames.ErrorCategory
	}{
		{"bad key", 401, `{"error":"Invalid API key"}`, 1, "cartesia: handshake refused: HTTP 401 Unauthorized: Invalid API key", frames.ErrorPermanent},
		{"overloaded", 503, `{"message":"Service temporarily unavailable"}`, 3, "HTTP 503 Service Unavailable: Service temporarily unavailable", frames.ErrorTransient},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, "hello.ws")
			f.reject = func(int) (int, string) { return tc.status, tc.body }
			defer f.close()
			c := newClient(f)
			defer c.Close()
			r := run(context.Background(), c, "Hi.", "x")
			if r.Err == nil || !strings.Contains(r.Err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", r.Err, tc.want)
			}
			var cat frames.Categorizer
			if !errors.As(r.Err, &cat) || cat.Category() != tc.category {
				t.Errorf("category %v, want %v", cat, tc.category)
			}
			if f.connections() != tc.conns {
				t.Errorf("%d attempts, want %d", f.connections(), tc.conns)
			}
		})
	}
}

func TestWarmConnectsAhead(t *testing.T) {
	f := newFake(t, "hello.ws")
	defer f.close()
	c := newClient(f)
	defer c.Close()
	if err := c.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.connections() != 1 {
		t.Fatalf("%d connections after Warm", f.connections())
	}
	if r := run(context.Background(), c, "Hello world.", "a"); r.Err != nil {
		t.Fatal(r.Err)
	}
	if f.connections() != 1 {
		t.Errorf("the request opened another connection")
	}
}

func TestNeedsAVoice(t *testing.T) {
	r := run(context.Background(), New(Options{APIKey: "k"}), "Hi.", "x")
	if r.Err == nil || !strings.Contains(r.Err.Error(), "VoiceID") {
		t.Fatalf("err = %v", r.Err)
	}
}

// FuzzMessage: any server message parses to an error or a sane message,
// and its audio, words and error text never panic.
func FuzzMessage(f *testing.F) {
	for _, name := range []string{"hello.ws", "error_model.ws", "error_legacy.ws"} {
		for _, st := range wsfake.Load(f, "testdata/"+name).Steps {
			if st.Kind == wsfake.Send {
				f.Add([]byte(strings.ReplaceAll(st.Text, "$CTX", "ctx")))
			}
		}
	}
	f.Add([]byte(`{"type":"timestamps","word_timestamps":{"words":["a","b"],"start":[0.1]}}`))
	f.Add([]byte(`{"type":"chunk","data":"!!!"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseMessage(data)
		if err != nil {
			return
		}
		if _, err := m.appendAudio(nil); err != nil && !strings.Contains(err.Error(), "base64") {
			t.Fatalf("audio error %v", err)
		}
		for _, w := range m.words() {
			if w.Start < 0 || w.Text == "" {
				t.Fatalf("bad word %+v", w)
			}
		}
		if m.apiError().Error() == "" {
			t.Fatal("empty error text")
		}
	})
}

func BenchmarkParseChunk(b *testing.B) {
	var msg []byte
	for _, st := range wsfake.Load(b, "testdata/hello.ws").Steps {
		if st.Kind == wsfake.Send && strings.Contains(st.Text, `"chunk"`) {
			msg = []byte(st.Text)
			break
		}
	}
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	var audio []byte
	for b.Loop() {
		m, err := parseMessage(msg)
		if err != nil {
			b.Fatal(err)
		}
		if audio, err = m.appendAudio(audio[:0]); err != nil {
			b.Fatal(err)
		}
	}
}
