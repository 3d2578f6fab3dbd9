package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/openaiapi/openaiapitest"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/upstream"
)

// writeSlowly writes body in pieces of n bytes, flushing each, as a server
// streaming speech does.
func writeSlowly(w http.ResponseWriter, body []byte, n int) {
	for len(body) > 0 {
		k := min(n, len(body))
		if _, err := w.Write(body[:k]); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		body = body[k:]
	}
}

// collect runs one request and returns its audio, its chunk sizes, the
// rate and the error.
func collect(ctx context.Context, c *Client, text string) (pcm []byte, sizes []int, rate int, err error) {
	for ch, e := range c.Synthesize(ctx, tts.Request{Text: text}) {
		if e != nil {
			return pcm, sizes, rate, e
		}
		pcm = append(pcm, ch.Audio...)
		sizes = append(sizes, len(ch.Audio))
		rate = ch.SampleRate
	}
	return pcm, sizes, rate, nil
}

func TestStreamsPCM(t *testing.T) {
	want := openaiapitest.Fixture(t, "speech_hello.pcm")
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/audio/speech" {
			http.Error(w, "wrong route "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		if r.Header.Get("Authorization") != "Bearer sk-test" || r.Header.Get("X-Org") != "acme" {
			http.Error(w, "bad headers", http.StatusBadRequest)
			return
		}
		_ = json.NewDecoder(r.Body).Decode(&got)
		w.Header().Set("Content-Type", "audio/pcm")
		writeSlowly(w, want, 333) // odd pieces: samples split across reads
	}))
	defer srv.Close()
	c := New(Options{
		BaseURL: srv.URL + "/v1/", APIKey: "sk-test", Voice: "coral", Speed: 1.25,
		Instructions: "Speak cheerfully.", Header: http.Header{"X-Org": {"acme"}},
		Extra: map[string]any{"stream_format": "audio"},
	})
	pcm, sizes, rate, err := collect(context.Background(), c, "Hello from framewire.")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pcm, want) || rate != 24000 {
		t.Fatalf("got %d bytes at %d Hz, want the %d fixture bytes at 24000 Hz", len(pcm), rate, len(want))
	}
	for i, n := range sizes[:len(sizes)-1] {
		if n < minRead {
			t.Errorf("chunk %d is %d bytes: slivers should be gathered to at least %d", i, n, minRead)
		}
	}
	wantBody := map[string]any{
		"model": "gpt-4o-mini-tts", "input": "Hello from framewire.", "voice": "coral",
		"response_format": "pcm", "speed": 1.25, "instructions": "Speak cheerfully.", "stream_format": "audio",
	}
	if diff := cmp.Diff(wantBody, got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func TestFirstAudioArrivesBeforeTheBodyEnds(t *testing.T) {
	pcm := openaiapitest.Fixture(t, "speech_hello.pcm")
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/pcm")
		writeSlowly(w, pcm[:4800], 4800)
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		writeSlowly(w, pcm[4800:], 4800)
	}))
	defer srv.Close()
	c := New(Options{BaseURL: srv.URL})
	first := true
	var total int
	for ch, err := range c.Synthesize(context.Background(), tts.Request{Text: "x"}) {
		if err != nil {
			t.Fatal(err)
		}
		if first {
			first = false
			close(release) // the server holds the rest until the first audio is here
		}
		total += len(ch.Audio)
	}
	if total != len(pcm) {
		t.Errorf("%d bytes, want %d", total, len(pcm))
	}
}

func TestInterruptionClosesTheStream(t *testing.T) {
	pcm := openaiapitest.Fixture(t, "speech_hello.pcm")
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/pcm")
		writeSlowly(w, pcm[:9600], 9600)
		<-r.Context().Done() // a long synthesis still running
		close(gone)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var errs []error
	for ch, err := range New(Options{BaseURL: srv.URL}).Synthesize(ctx, tts.Request{Text: "long"}) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(ch.Audio) > 0 {
			cancel() // barge-in mid-stream
		}
	}
	if len(errs) > 0 {
		t.Errorf("an interruption is not a failure, got %v", errs)
	}
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the server never saw the client go away")
	}
}

func TestErrorAnswers(t *testing.T) {
	tests := []openaiapitest.ErrorCase{
		{Name: "bad key", Status: 401, ContentType: "application/json", Fixture: "error_401.json", Requests: 1, Want: "HTTP 401 Unauthorized: Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys. (type invalid_request_error, code invalid_api_key)", Category: frames.ErrorPermanent},
		{Name: "bad voice", Status: 400, ContentType: "application/json", Fixture: "error_400_voice.json", Requests: 1, Want: "(type invalid_request_error, code invalid_value, param voice)", Category: frames.ErrorUnknown},
		{Name: "rate limited", Status: 429, ContentType: "application/json", Fixture: "error_429.json", Requests: 3, Want: "Rate limit reached for tts-1", Category: frames.ErrorTransient},
		{Name: "server error", Status: 500, ContentType: "application/json", Fixture: "error_500.json", Requests: 3, Want: "HTTP 500 Internal Server Error: The server had an error", Category: frames.ErrorTransient},
		{Name: "proxy page", Status: 502, ContentType: "text/html", Fixture: "error_502.html", Requests: 3, Want: "502 Bad Gateway", Category: frames.ErrorTransient},
	}
	// Requests: the first request and the default MaxRetries (2) retries.
	openaiapitest.RunErrorCases(t, tests, func(baseURL string) error {
		_, _, _, err := collect(context.Background(), New(Options{BaseURL: baseURL, HTTP: upstream.HTTP{RetryBackoff: time.Millisecond}}), "hi")
		return err
	})
}

func TestRetriesThenStreams(t *testing.T) {
	pcm := openaiapitest.Fixture(t, "speech_hello.pcm")
	srv := openaiapitest.New(t,
		openaiapitest.Answer{Drop: true}, // the connection drops before any answer
		openaiapitest.Answer{Status: http.StatusTooManyRequests, ContentType: "application/json", Body: openaiapitest.Fixture(t, "error_429.json")},
		openaiapitest.Answer{ContentType: "audio/pcm", Body: pcm},
	)
	got, _, _, err := collect(context.Background(), New(Options{BaseURL: srv.URL, HTTP: upstream.HTTP{RetryBackoff: time.Millisecond}}), "hi")
	if err != nil || !bytes.Equal(got, pcm) {
		t.Fatalf("after a dropped connection and a 429: %d bytes, err %v", len(got), err)
	}
	if n := srv.Requests(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func TestStreamCutMidway(t *testing.T) {
	pcm := openaiapitest.Fixture(t, "speech_hello.pcm")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/pcm")
		writeSlowly(w, pcm[:4800], 4800)
		conn, buf, _ := w.(http.Hijacker).Hijack()
		_ = buf.Flush()
		conn.Close() // the chunked body never ends
	}))
	defer srv.Close()
	got, _, _, err := collect(context.Background(), New(Options{BaseURL: srv.URL}), "hi")
	if err == nil || !strings.Contains(err.Error(), "reading the audio stream") {
		t.Fatalf("err = %v; want a broken stream error", err)
	}
	if len(got) != 4800 {
		t.Errorf("%d bytes of audio before the break, want 4800", len(got))
	}
}

func TestWrongMediaTypes(t *testing.T) {
	tests := []struct {
		ctype, body, want string
	}{
		{"audio/mpeg", "ID3\x04...", `sent audio/mpeg, not raw PCM: it ignored response_format "pcm"`},
		{"application/json", `{"error":{"message":"pcm is not supported","type":"invalid_request_error"}}`, "answered application/json instead of audio: openai tts: HTTP 200 OK: pcm is not supported"},
		{"audio/wav", "not a wav at all", "no RIFF/WAVE header"},
	}
	for _, tc := range tests {
		srv := openaiapitest.New(t, openaiapitest.Answer{ContentType: tc.ctype, Body: []byte(tc.body)})
		_, _, _, err := collect(context.Background(), New(Options{BaseURL: srv.URL}), "hi")
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.ctype, err, tc.want)
		}
	}
}

func TestWAVAnswersAreRead(t *testing.T) {
	pcm := dsp.Sine(300, 0.3, 22050, 200*time.Millisecond)
	srv := openaiapitest.New(t, openaiapitest.Answer{ContentType: "audio/wav", Body: dsp.AppendWAV(nil, pcm, 22050, 1)})
	got, _, rate, err := collect(context.Background(), New(Options{BaseURL: srv.URL}), "hi")
	if err != nil || rate != 22050 || !bytes.Equal(got, pcm) {
		t.Fatalf("WAV answer: %d bytes at %d Hz, err %v", len(got), rate, err)
	}
}

func TestOpenAIKeyOnlyGoesToOpenAI(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-env")
	if got := New(Options{}).opts.APIKey; got != "sk-env" {
		t.Errorf("default server: key %q, want the environment's", got)
	}
	if got := New(Options{BaseURL: "http://localhost:8880/v1"}).opts.APIKey; got != "" {
		t.Errorf("a local server got the OpenAI key %q", got)
	}
}

func TestThroughTheService(t *testing.T) {
	pcm := openaiapitest.Fixture(t, "speech_hello.pcm")
	srv := openaiapitest.New(t, openaiapitest.Answer{ContentType: "audio/pcm", Body: pcm})
	res := pipelinetest.Run(t, tts.NewService(New(Options{BaseURL: srv.URL}), tts.Options{}), pipelinetest.Options{
		Send: []frames.Frame{&frames.TTSSpeak{Text: "Hello from framewire."}},
	})
	var out []byte
	for _, f := range res.Down() {
		if a, ok := f.(*frames.TTSAudioRaw); ok {
			out = append(out, a.PCM...)
		}
	}
	// 24 kHz in, 24 kHz out: the audio passes unchanged.
	if !bytes.Equal(out, pcm) {
		t.Errorf("%d bytes out, want the %d bytes the server sent", len(out), len(pcm))
	}
}

// bare is an answer read from memory.
type bare struct {
	io.Reader
	ctype string
}

func (b bare) ContentType() string { return b.ctype }
func (b bare) StatusCode() int     { return http.StatusOK }

// FuzzAudioAnswer feeds arbitrary bodies and media types through the
// answer reader: a clear error or audio, never a panic or a hang.
func FuzzAudioAnswer(f *testing.F) {
	f.Add("audio/pcm", openaiapitest.Fixture(f, "speech_hello.pcm")[:2000])
	f.Add("audio/wav", dsp.AppendWAV(nil, make([]byte, 100), 16000, 1))
	f.Add("application/json", openaiapitest.Fixture(f, "error_401.json"))
	f.Add("text/html", openaiapitest.Fixture(f, "error_502.html"))
	f.Add("audio/L16; rate=16000", []byte{1, 2, 3})
	c := New(Options{BaseURL: "http://unused.invalid"})
	f.Fuzz(func(t *testing.T, ctype string, body []byte) {
		rate, r, err := c.audioBody(bare{bytes.NewReader(body), ctype})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error text")
			}
			return
		}
		if rate <= 0 {
			t.Fatalf("rate %d", rate)
		}
		if _, err := io.ReadAll(r); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzErrorBody: any error body gives an error text that names the status.
func FuzzErrorBody(f *testing.F) {
	for _, name := range []string{"error_401.json", "error_400_voice.json", "error_429.json", "error_500.json", "error_502.html"} {
		f.Add(openaiapitest.Fixture(f, name))
	}
	f.Add([]byte(`{"detail":"Voice not found"}`))
	f.Add([]byte(`{"error":"plain"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		e := parseAPIError(503, body)
		if !strings.HasPrefix(e.Error(), "openai tts: HTTP 503 Service Unavailable") {
			t.Fatalf("error text %q", e.Error())
		}
	})
}

func BenchmarkStream(b *testing.B) {
	pcm := openaiapitest.Fixture(b, "speech_hello.pcm")
	srv := openaiapitest.New(b, openaiapitest.Answer{ContentType: "audio/pcm", Body: pcm})
	c := New(Options{BaseURL: srv.URL})
	b.SetBytes(int64(len(pcm)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := collect(context.Background(), c, "Hello from framewire."); err != nil {
			b.Fatal(err)
		}
	}
}
