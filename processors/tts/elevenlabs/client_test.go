package elevenlabs

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/tts/internal/ttstest"
	"github.com/framewire/framewire/processors/upstream"
)

var update = flag.Bool("update", false, "rewrite testdata/requests.golden")

func pcmFixture(t testing.TB) []byte { return ttstest.Fixture(t, "hello_world.pcm") }

func newClient(f *fakeElevenLabs, mod ...func(*Options)) *Client {
	o := Options{BaseURL: f.baseURL(), APIKey: "xi_test_key", VoiceID: voice, HTTP: upstream.HTTP{RetryBackoff: time.Millisecond}}
	for _, m := range mod {
		m(&o)
	}
	return New(o)
}

// run speaks text at 24 kHz in context ctxID.
func run(ctx context.Context, c *Client, text, ctxID string) ttstest.Result {
	return ttstest.Collect(ctx, c, tts.Request{Text: text, ContextID: ctxID, SampleRate: 24000})
}

// The words of hello.ws: "Hello" at 20 ms into the first chunk; "world."
// at 97 ms into the second, which starts after 6321 samples (263.375 ms)
// of audio, its last letters in the third chunk.
var helloWords = []tts.Word{
	{Text: "Hello", Start: 20 * time.Millisecond},
	{Text: "world.", Start: 263375*time.Microsecond + 97*time.Millisecond},
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
	if !bytes.Equal(r.Audio, pcmFixture(t)) || r.Rate != 24000 || r.Chunks != 3 {
		t.Errorf("got %d bytes in %d chunks at %d Hz, want the fixture's %d bytes in 3 at 24000 Hz", len(r.Audio), r.Chunks, r.Rate, len(pcmFixture(t)))
	}
	if diff := cmp.Diff(helloWords, r.Words); diff != "" {
		t.Errorf("words (-want +got):\n%s", diff)
	}
	want := []map[string]any{
		{"text": " ", "context_id": "ctx-1"},
		{"text": "Hello world. ", "context_id": "ctx-1", "flush": true},
		{"context_id": "ctx-1", "close_context": true},
	}
	if diff := cmp.Diff(want, f.messages(t)); diff != "" {
		t.Errorf("client messages (-want +got):\n%s", diff)
	}
	f.mu.Lock()
	q, key := f.query[0], f.keys[0]
	f.mu.Unlock()
	if q != "inactivity_timeout=180&model_id=eleven_flash_v2_5&output_format=pcm_24000&sync_alignment=true" {
		t.Errorf("handshake query %q", q)
	}
	if key != "xi_test_key" {
		t.Errorf("xi-api-key header %q", key)
	}
}

// The request messages over the websocket, with voice settings and a
// chunk schedule, and the same request's body over HTTP, are pinned in
// testdata/requests.golden.
func TestGoldenRequestMessages(t *testing.T) {
	f := newFake(t, "hello.ws")
	defer f.close()
	vs := DefaultVoiceSettings()
	vs.Style = 0.2
	c := newClient(f, func(o *Options) {
		o.VoiceSettings = &vs
		o.ChunkLengthSchedule = []int{50, 120}
		o.Model = "eleven_turbo_v2_5"
		o.LanguageCode = "en"
	})
	defer c.Close()
	if r := run(context.Background(), c, "  Hello world.\n", "ctx-golden"); r.Err != nil {
		t.Fatal(r.Err)
	}
	f.mu.Lock()
	got := "GET /v1/text-to-speech/" + voice + "/multi-stream-input?" + f.query[0] + "\n" + strings.Join(f.received, "\n") + "\n"
	f.mu.Unlock()
	// The same request over HTTP.
	lines := helloLines(t)
	h := newFakeHTTP(t, func(_ int, w http.ResponseWriter, _ *http.Request) { streamLines(w, lines) })
	hc := newHTTPClient(h, func(o *Options) {
		o.VoiceSettings = &vs
		o.Model = "eleven_turbo_v2_5"
		o.LanguageCode = "en"
	})
	if r := run(context.Background(), hc, "  Hello world.\n", "ctx-golden"); r.Err != nil {
		t.Fatal(r.Err)
	}
	call := h.calls()[0]
	got += "\n" + call.method + " " + call.path + "?" + call.query + "\n" + call.raw + "\n"
	const golden = "testdata/requests.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("request messages (-golden +got):\n%s", diff)
	}
}

func TestTheRequestedRateIsAskedFor(t *testing.T) {
	f := newFake(t, "hello.ws")
	defer f.close()
	c := newClient(f)
	defer c.Close()
	var rate int
	for ch, err := range c.Synthesize(context.Background(), tts.Request{Text: "Hello world.", ContextID: "a", SampleRate: 16000}) {
		if err != nil {
			t.Fatal(err)
		}
		if ch.SampleRate != 0 {
			rate = ch.SampleRate
		}
	}
	f.mu.Lock()
	q := f.query[0]
	f.mu.Unlock()
	if rate != 16000 || !strings.Contains(q, "output_format=pcm_16000") {
		t.Errorf("audio at %d Hz, query %q; want pcm_16000", rate, q)
	}
}

func TestUnsupportedRates(t *testing.T) {
	c := New(Options{APIKey: "k", VoiceID: voice, BaseURL: "http://127.0.0.1:1", SampleRate: 12345})
	if r := run(context.Background(), c, "Hi.", "x"); r.Err == nil || !strings.Contains(r.Err.Error(), "no PCM output at 12345 Hz") {
		t.Fatalf("err = %v", r.Err)
	}
	// A pipeline rate ElevenLabs does not have falls back to the default,
	// which the service resamples.
	f := newFake(t, "hello.ws")
	defer f.close()
	c = newClient(f)
	defer c.Close()
	for ch, err := range c.Synthesize(context.Background(), tts.Request{Text: "Hello world.", ContextID: "a", SampleRate: 32000}) {
		if err != nil {
			t.Fatal(err)
		}
		if ch.SampleRate != 0 && ch.SampleRate != DefaultSampleRate {
			t.Fatalf("audio at %d Hz", ch.SampleRate)
		}
	}
}

func TestTwoRequestsShareOneConnection(t *testing.T) {
	f := newFake(t, "two_requests.ws")
	defer f.close()
	c := newClient(f)
	defer c.Close()
	for i, id := range []string{"a", "b"} {
		if r := run(context.Background(), c, "Hello world.", id); r.Err != nil || !bytes.Equal(r.Audio, pcmFixture(t)) {
			t.Fatalf("request %d: %d bytes, err %v", i, len(r.Audio), r.Err)
		}
	}
	if n := f.connections(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// Without alignment the client cannot tell when the text is spoken: it
// closes the context after a quiet second, and ends at isFinal.
func TestWithoutAlignmentTheContextIsClosedWhenTheAudioStops(t *testing.T) {
	f := newFake(t, "no_alignment.ws")
	defer f.close()
	c := newClient(f)
	defer c.Close()
	began := time.Now()
	r := run(context.Background(), c, "Hello world.", "a")
	if r.Err != nil || !bytes.Equal(r.Audio, pcmFixture(t)) || len(r.Words) != 0 {
		t.Fatalf("%d bytes, %d words, err %v", len(r.Audio), len(r.Words), r.Err)
	}
	if d := time.Since(began); d < drainWait {
		t.Errorf("ended after %v, before the drain wait", d)
	}
	if msgs := f.messages(t); kind(msgs[len(msgs)-1]) != "close_context" {
		t.Errorf("last client message %v, want close_context", msgs[len(msgs)-1])
	}
}

func TestInterruptionClosesTheContextAndTheConnectionGoesOn(t *testing.T) {
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
	if got != len(audioPieces(t.Fatalf)[0]) {
		t.Errorf("got %d bytes before the interruption, want the first chunk", got)
	}
	// The audio still in flight for "long" must not leak into the next
	// request.
	r := run(context.Background(), c, "Hello world.", "next")
	if r.Err != nil || !bytes.Equal(r.Audio, pcmFixture(t)) {
		t.Fatalf("after the interruption: %d bytes, err %v", len(r.Audio), r.Err)
	}
	var kinds []string
	for _, m := range f.messages(t) {
		kinds = append(kinds, kind(m)+":"+m["context_id"].(string))
	}
	want := []string{"init:long", "text:long", "close_context:long", "init:next", "text:next", "close_context:next"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("client messages (-want +got):\n%s", diff)
	}
	if f.connections() != 1 {
		t.Errorf("%d connections, want 1", f.connections())
	}
}

func TestStoppingTheIterationClosesTheContext(t *testing.T) {
	f := newFake(t, "interrupted.ws")
	defer f.close()
	c := newClient(f)
	defer c.Close()
	for range c.Synthesize(context.Background(), tts.Request{Text: "A very long answer.", ContextID: "long"}) {
		break
	}
	if r := run(context.Background(), c, "Hello world.", "next"); r.Err != nil {
		t.Fatal(r.Err)
	}
	if msgs := f.messages(t); kind(msgs[2]) != "close_context" || msgs[2]["context_id"] != "long" {
		t.Errorf("third client message %v, want close_context for long", msgs[2])
	}
}

func TestDropMidGenerationFailsItThenReconnects(t *testing.T) {
	f := newFake(t, "close_midstream.ws", "hello.ws")
	defer f.close()
	c := newClient(f)
	defer c.Close()
	r := run(context.Background(), c, "Hello world.", "a")
	if r.Err == nil || r.Err.Error() != "elevenlabs: connection closed by the server with status 1011: internal error" {
		t.Fatalf("err = %v", r.Err)
	}
	if len(r.Audio) == 0 {
		t.Error("the audio before the drop was not delivered")
	}
	if frames.CategoryOf(r.Err) != frames.ErrorTransient {
		t.Errorf("a server failure should be transient, is %v", frames.CategoryOf(r.Err))
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

func TestErrorsOnTheWebsocket(t *testing.T) {
	tests := []struct {
		script, want string
		category     frames.ErrorCategory
	}{
		{"quota.ws", "elevenlabs: connection closed by the server with status 1008: This request exceeds your quota. You have 5 credits remaining, while 12 credits are required for this request.", frames.ErrorPermanent},
		{"invalid_message.ws", "elevenlabs: error in the stream: invalid_input_message: Could not parse input message, make sure it is a json and follows the schema outlined in protocol.", frames.ErrorPermanent},
		{"invalid_key.ws", "elevenlabs: error in the stream: invalid_api_key: Invalid API key", frames.ErrorPermanent},
	}
	for _, tc := range tests {
		t.Run(tc.script, func(t *testing.T) {
			f := newFake(t, tc.script)
			defer f.close()
			c := newClient(f)
			defer c.Close()
			r := run(context.Background(), c, "Hi.", "x")
			var ae *APIError
			if !errors.As(r.Err, &ae) || r.Err.Error() != tc.want {
				t.Fatalf("err = %v\nwant %s", r.Err, tc.want)
			}
			if ae.Category() != tc.category || f.connections() != 1 {
				t.Errorf("category %v, %d connections; want %v and no retry", ae.Category(), f.connections(), tc.category)
			}
		})
	}
}

func TestHandshakeRefusals(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		header   http.Header
		body     string
		conns    int
		want     string
		category frames.ErrorCategory
	}{
		{"bad key", 401, nil, `{"detail":{"status":"invalid_api_key","message":"Invalid API key"}}`, 1,
			"elevenlabs: HTTP 401 Unauthorized: invalid_api_key: Invalid API key", frames.ErrorPermanent},
		{"quota", 401, nil, `{"detail":{"status":"quota_exceeded","message":"This request exceeds your quota. You have 5 credits remaining, while 12 credits are required for this request."}}`, 1,
			"elevenlabs: HTTP 401 Unauthorized: quota_exceeded: This request exceeds your quota.", frames.ErrorPermanent},
		{"bad params", 422, nil, `{"detail":[{"loc":["query","output_format"],"msg":"value is not a valid enumeration member","type":"type_error.enum"}]}`, 1,
			"elevenlabs: HTTP 422 Unprocessable Entity: query.output_format: value is not a valid enumeration member", frames.ErrorPermanent},
		{"busy", 429, http.Header{"Retry-After": {"0.01"}}, `{"detail":{"status":"system_busy","message":"We are experiencing heavy traffic, please try again."}}`, 3,
			"elevenlabs: HTTP 429 Too Many Requests: system_busy: We are experiencing heavy traffic", frames.ErrorTransient},
		{"overloaded", 503, nil, `<html>upstream unavailable</html>`, 3,
			"elevenlabs: HTTP 503 Service Unavailable", frames.ErrorTransient},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, "hello.ws")
			f.reject = func(int) (int, http.Header, string) { return tc.status, tc.header, tc.body }
			defer f.close()
			c := newClient(f)
			defer c.Close()
			r := run(context.Background(), c, "Hi.", "x")
			if r.Err == nil || !strings.HasPrefix(r.Err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", r.Err, tc.want)
			}
			if frames.CategoryOf(r.Err) != tc.category {
				t.Errorf("category %v, want %v", frames.CategoryOf(r.Err), tc.category)
			}
			if f.connections() != tc.conns {
				t.Errorf("%d attempts, want %d", f.connections(), tc.conns)
			}
			var ae *APIError
			if errors.As(r.Err, &ae) && tc.status == 503 && (strings.Contains(r.Err.Error(), "html") || !strings.Contains(ae.Body, "upstream unavailable")) {
				t.Errorf("the body belongs on the error for the log, not in its text: %q, body %q", r.Err, ae.Body)
			}
		})
	}
}

func TestRateLimitedHandshakeIsRetriedAfterTheWait(t *testing.T) {
	f := newFake(t, "hello.ws")
	f.reject = func(n int) (int, http.Header, string) {
		if n == 0 {
			return 429, http.Header{"Retry-After": {"0.05"}}, `{"detail":{"status":"too_many_concurrent_requests","message":"Too many concurrent requests."}}`
		}
		return 0, nil, ""
	}
	defer f.close()
	c := newClient(f)
	defer c.Close()
	began := time.Now()
	r := run(context.Background(), c, "Hello world.", "a")
	if r.Err != nil || !bytes.Equal(r.Audio, pcmFixture(t)) {
		t.Fatalf("%d bytes, err %v", len(r.Audio), r.Err)
	}
	if d := time.Since(began); d < 50*time.Millisecond {
		t.Errorf("retried after %v, before the Retry-After of 50ms", d)
	}
	if f.connections() != 2 {
		t.Errorf("%d connections, want 2", f.connections())
	}
}

func TestTimeouts(t *testing.T) {
	tests := []struct {
		script string
		phase  llmhttp.Phase
	}{
		{"silent.ws", llmhttp.PhaseFirstByte},
		{"no_final.ws", llmhttp.PhaseIdle},
	}
	for _, tc := range tests {
		t.Run(tc.script, func(t *testing.T) {
			f := newFake(t, tc.script)
			defer f.close()
			c := newClient(f, func(o *Options) {
				o.Timeouts = upstream.Timeouts{FirstByte: 100 * time.Millisecond, Idle: 100 * time.Millisecond}
			})
			defer c.Close()
			r := run(context.Background(), c, "Hello world.", "a")
			var te *llmhttp.TimeoutError
			if !errors.As(r.Err, &te) || te.Phase != tc.phase || te.After != 100*time.Millisecond {
				t.Fatalf("err = %v, want a %v timeout after 100ms", r.Err, tc.phase)
			}
			if frames.CategoryOf(r.Err) != frames.ErrorTransient || f.connections() != 1 {
				t.Errorf("category %v, %d connections: a timeout is transient and not retried", frames.CategoryOf(r.Err), f.connections())
			}
		})
	}
}

func TestConnectTimeout(t *testing.T) {
	// A server that accepts the connection and never answers the
	// handshake.
	block := make(chan struct{})
	srv := newBlackhole(t, block)
	defer func() { close(block); srv.Close() }()
	c := New(Options{BaseURL: srv.URL, APIKey: "k", VoiceID: voice, HTTP: upstream.HTTP{Timeouts: upstream.Timeouts{Connect: 100 * time.Millisecond}}})
	defer c.Close()
	r := run(context.Background(), c, "Hi.", "x")
	var te *llmhttp.TimeoutError
	if !errors.As(r.Err, &te) || te.Phase != llmhttp.PhaseConnect {
		t.Fatalf("err = %v, want a connect timeout", r.Err)
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

func TestCloseSendsCloseSocket(t *testing.T) {
	f := newFake(t, "hello.ws")
	defer f.close()
	c := newClient(f)
	if r := run(context.Background(), c, "Hello world.", "a"); r.Err != nil {
		t.Fatal(r.Err)
	}
	c.Close()
	f.close() // waits for the session, which records until the client closes
	if msgs := f.messages(t); kind(msgs[len(msgs)-1]) != "close_socket" {
		t.Errorf("last client message %v, want close_socket", msgs[len(msgs)-1])
	}
}

func TestNeedsAVoice(t *testing.T) {
	t.Setenv("ELEVENLABS_VOICE_ID", "")
	r := run(context.Background(), New(Options{APIKey: "k"}), "Hi.", "x")
	if r.Err == nil || !strings.Contains(r.Err.Error(), "VoiceID") {
		t.Fatalf("err = %v", r.Err)
	}
}

func TestEmptyTextSpeaksNothing(t *testing.T) {
	c := New(Options{APIKey: "k", VoiceID: voice, BaseURL: "http://127.0.0.1:1"})
	if r := run(context.Background(), c, " \n ", "x"); r.Err != nil || len(r.Audio) != 0 {
		t.Fatalf("%d bytes, err %v", len(r.Audio), r.Err)
	}
	if r := run(context.Background(), c, strings.Repeat("a", maxTextBytes+1), "x"); r.Err == nil {
		t.Fatal("an oversized text was accepted")
	}
}

func TestOptionsFromTheEnvironment(t *testing.T) {
	t.Setenv("ELEVENLABS_API_KEY", "env-key")
	t.Setenv("ELEVENLABS_VOICE_ID", "env-voice")
	t.Setenv("ELEVENLABS_MODEL", "eleven_multilingual_v2")
	t.Setenv("ELEVENLABS_BASE_URL", "https://gateway.example/elevenlabs/")
	c := New(Options{})
	o := c.opts
	if o.APIKey != "env-key" || o.VoiceID != "env-voice" || o.Model != "eleven_multilingual_v2" || o.BaseURL != "https://gateway.example/elevenlabs" {
		t.Errorf("options %+v", o)
	}
	if got := c.wsURL(16000); got != "wss://gateway.example/elevenlabs/v1/text-to-speech/env-voice/multi-stream-input?inactivity_timeout=180&model_id=eleven_multilingual_v2&output_format=pcm_16000&sync_alignment=true" {
		t.Errorf("ws URL %q", got)
	}
	if got := c.httpURL(22050); got != "https://gateway.example/elevenlabs/v1/text-to-speech/env-voice/stream/with-timestamps?output_format=pcm_22050" {
		t.Errorf("HTTP URL %q", got)
	}
	// Options win over the environment.
	c = New(Options{APIKey: "k", VoiceID: "v", Model: "m", BaseURL: "http://localhost:8080"})
	if o := c.opts; o.APIKey != "k" || o.VoiceID != "v" || o.Model != "m" || !strings.HasPrefix(c.wsURL(24000), "ws://localhost:8080/v1/text-to-speech/v/") {
		t.Errorf("options %+v, ws URL %q", o, c.wsURL(24000))
	}
	if c.Model() != "m" || !c.WordTimestamps() {
		t.Error("Model or WordTimestamps")
	}
}
