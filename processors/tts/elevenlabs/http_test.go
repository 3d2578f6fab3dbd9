package elevenlabs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/upstream"
)

// fakeHTTP is ElevenLabs' /stream/with-timestamps endpoint on loopback.
// Each request is answered by answer(n, w, r), n counting from 0; it
// records what clients sent.
type fakeHTTP struct {
	srv    *httptest.Server
	answer func(n int, w http.ResponseWriter, r *http.Request)

	mu       sync.Mutex
	requests []recorded
}

type recorded struct {
	method, path, query, key, contentType string
	raw                                   string
	body                                  map[string]any
}

func newFakeHTTP(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *fakeHTTP {
	f := &fakeHTTP{answer: answer}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		rec := recorded{raw: string(raw), method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, key: r.Header.Get("xi-api-key"), contentType: r.Header.Get("Content-Type")}
		if err := json.Unmarshal(raw, &rec.body); err != nil {
			t.Errorf("client sent invalid JSON %q", raw)
		}
		f.mu.Lock()
		n := len(f.requests)
		f.requests = append(f.requests, rec)
		f.mu.Unlock()
		f.answer(n, w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeHTTP) calls() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

func newHTTPClient(f *fakeHTTP, mod ...func(*Options)) *Client {
	o := Options{BaseURL: f.srv.URL, APIKey: "xi_test_key", VoiceID: voice, Transport: HTTP, HTTP: upstream.HTTP{RetryBackoff: time.Millisecond}}
	for _, m := range mod {
		m(&o)
	}
	return New(o)
}

// helloLines is the answer of testdata/http_hello.ndjson with the audio
// filled in.
func helloLines(t testing.TB) []string {
	b, err := os.ReadFile("testdata/http_hello.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(expandScript(t, string(b))), "\n")
}

// streamLines writes lines as a streamed answer, flushing each.
func streamLines(w http.ResponseWriter, lines []string) {
	w.Header().Set("Content-Type", "application/json")
	for _, l := range lines {
		_, _ = io.WriteString(w, l+"\n")
		w.(http.Flusher).Flush()
	}
}

func TestHTTPGeneration(t *testing.T) {
	lines := helloLines(t)
	f := newFakeHTTP(t, func(_ int, w http.ResponseWriter, _ *http.Request) { streamLines(w, lines) })
	vs := DefaultVoiceSettings()
	c := newHTTPClient(f, func(o *Options) { o.VoiceSettings = &vs })
	r := run(context.Background(), c, "Hello world.", "a")
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if !bytes.Equal(r.Audio, pcmFixture(t)) || r.Rate != 24000 {
		t.Errorf("got %d bytes at %d Hz, want the fixture's %d at 24000 Hz", len(r.Audio), r.Rate, len(pcmFixture(t)))
	}
	// The HTTP stream's times count from the start of the request.
	wantWords := []tts.Word{{Text: "Hello", Start: 20 * time.Millisecond}, {Text: "world.", Start: 360 * time.Millisecond}}
	if diff := cmp.Diff(wantWords, r.Words); diff != "" {
		t.Errorf("words (-want +got):\n%s", diff)
	}
	calls := f.calls()
	if len(calls) != 1 {
		t.Fatalf("%d requests", len(calls))
	}
	got := calls[0]
	if got.method != "POST" || got.path != "/v1/text-to-speech/"+voice+"/stream/with-timestamps" || got.query != "output_format=pcm_24000" || got.key != "xi_test_key" || got.contentType != "application/json" {
		t.Errorf("request %+v", got)
	}
	wantBody := map[string]any{
		"text": "Hello world.", "model_id": DefaultModel,
		"voice_settings": map[string]any{"stability": 0.5, "similarity_boost": 0.75, "style": 0.0, "use_speaker_boost": true, "speed": 1.0},
	}
	if diff := cmp.Diff(wantBody, got.body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		header   http.Header
		body     string
		calls    int
		want     string
		category frames.ErrorCategory
	}{
		{"bad key", 401, nil, `{"detail":{"status":"invalid_api_key","message":"Invalid API key"}}`, 1,
			"elevenlabs: HTTP 401 Unauthorized: invalid_api_key: Invalid API key", frames.ErrorPermanent},
		{"quota", 401, nil, `{"detail":{"status":"quota_exceeded","message":"This request exceeds your quota. You have 5 credits remaining, while 12 credits are required for this request."}}`, 1,
			"elevenlabs: HTTP 401 Unauthorized: quota_exceeded: This request exceeds your quota. You have 5 credits remaining, while 12 credits are required for this request.", frames.ErrorPermanent},
		{"bad params", 422, nil, `{"detail":[{"loc":["body","text"],"msg":"field required","type":"value_error.missing"}]}`, 1,
			"elevenlabs: HTTP 422 Unprocessable Entity: body.text: field required", frames.ErrorPermanent},
		{"unknown voice", 404, nil, `{"detail":{"status":"voice_not_found","message":"A voice with the voice_id voice-1 was not found."}}`, 1,
			"elevenlabs: HTTP 404 Not Found: voice_not_found: A voice with the voice_id voice-1 was not found.", frames.ErrorPermanent},
		{"concurrency", 429, http.Header{"Retry-After": {"0"}}, `{"detail":{"status":"too_many_concurrent_requests","message":"Too many concurrent requests."}}`, 3,
			"elevenlabs: HTTP 429 Too Many Requests: too_many_concurrent_requests: Too many concurrent requests.", frames.ErrorTransient},
		{"server", 500, nil, `Internal Server Error: traceback (most recent call last) ...`, 3,
			"elevenlabs: HTTP 500 Internal Server Error", frames.ErrorTransient},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeHTTP(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				for k, v := range tc.header {
					w.Header()[k] = v
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			})
			r := run(context.Background(), newHTTPClient(f), "Hello world.", "a")
			var ae *APIError
			if !errors.As(r.Err, &ae) || r.Err.Error() != tc.want {
				t.Fatalf("err = %v\nwant %s", r.Err, tc.want)
			}
			if ae.Category() != tc.category || len(f.calls()) != tc.calls {
				t.Errorf("category %v after %d requests, want %v after %d", ae.Category(), len(f.calls()), tc.category, tc.calls)
			}
			if ae.Body == "" {
				t.Error("the body is kept on the error for the log")
			}
		})
	}
}

func TestHTTPRateLimitIsRetriedAfterTheWait(t *testing.T) {
	lines := helloLines(t)
	f := newFakeHTTP(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			w.Header().Set("Retry-After", "0.05")
			w.WriteHeader(429)
			_, _ = io.WriteString(w, `{"detail":{"status":"system_busy","message":"We are experiencing heavy traffic, please try again."}}`)
			return
		}
		streamLines(w, lines)
	})
	began := time.Now()
	r := run(context.Background(), newHTTPClient(f), "Hello world.", "a")
	if r.Err != nil || !bytes.Equal(r.Audio, pcmFixture(t)) {
		t.Fatalf("%d bytes, err %v", len(r.Audio), r.Err)
	}
	if d := time.Since(began); d < 50*time.Millisecond || len(f.calls()) != 2 {
		t.Errorf("%d requests, retried after %v; want 2 after the 50ms Retry-After", len(f.calls()), d)
	}
}

func TestHTTPStreamCutInTheMiddle(t *testing.T) {
	lines := helloLines(t)
	f := newFakeHTTP(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, lines[0]+"\n"+lines[1][:100])
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close() // the chunked body ends without its terminator
		}
	})
	r := run(context.Background(), newHTTPClient(f), "Hello world.", "a")
	if r.Err == nil || !strings.Contains(r.Err.Error(), "elevenlabs: reading the stream: unexpected EOF") {
		t.Fatalf("err = %v", r.Err)
	}
	if !bytes.Equal(r.Audio, audioPieces(t.Fatalf)[0]) || len(f.calls()) != 1 {
		t.Errorf("%d bytes after %d requests; want the first line's audio and no retry", len(r.Audio), len(f.calls()))
	}
}

func TestHTTPInterruptionClosesTheRequest(t *testing.T) {
	lines := helloLines(t)
	closed := make(chan struct{})
	f := newFakeHTTP(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		streamLines(w, lines[:1])
		select {
		case <-r.Context().Done():
			close(closed)
		case <-time.After(10 * time.Second):
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got int
	for ch, err := range newHTTPClient(f).Synthesize(ctx, tts.Request{Text: "Hello world.", SampleRate: 24000}) {
		if err != nil {
			t.Fatalf("an interruption is not an error: %v", err)
		}
		got += len(ch.Audio)
		cancel()
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not see the request closed")
	}
	if got != len(audioPieces(t.Fatalf)[0]) {
		t.Errorf("%d bytes before the interruption", got)
	}
}

func TestHTTPTimeouts(t *testing.T) {
	lines := helloLines(t)
	tests := []struct {
		name   string
		answer func(w http.ResponseWriter, r *http.Request)
		phase  llmhttp.Phase
	}{
		{"no first byte", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, llmhttp.PhaseFirstByte},
		{"stalled", func(w http.ResponseWriter, r *http.Request) {
			streamLines(w, lines[:1])
			<-r.Context().Done()
		}, llmhttp.PhaseIdle},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeHTTP(t, func(_ int, w http.ResponseWriter, r *http.Request) { tc.answer(w, r) })
			c := newHTTPClient(f, func(o *Options) {
				o.Timeouts = upstream.Timeouts{FirstByte: 100 * time.Millisecond, Idle: 100 * time.Millisecond}
			})
			r := run(context.Background(), c, "Hello world.", "a")
			var te *llmhttp.TimeoutError
			if !errors.As(r.Err, &te) || te.Phase != tc.phase {
				t.Fatalf("err = %v, want a %v timeout", r.Err, tc.phase)
			}
			if len(f.calls()) != 1 {
				t.Errorf("%d requests: a timeout is not retried", len(f.calls()))
			}
		})
	}
}

func TestHTTPEmptyAnswerIsRetried(t *testing.T) {
	lines := helloLines(t)
	f := newFakeHTTP(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			w.WriteHeader(200)
			return
		}
		streamLines(w, lines)
	})
	if r := run(context.Background(), newHTTPClient(f), "Hello world.", "a"); r.Err != nil || !bytes.Equal(r.Audio, pcmFixture(t)) || len(f.calls()) != 2 {
		t.Fatalf("%d bytes after %d requests, err %v", len(r.Audio), len(f.calls()), r.Err)
	}
}

// newBlackhole is a server that takes connections and never answers, until
// block is closed.
func newBlackhole(t *testing.T, block chan struct{}) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
}
