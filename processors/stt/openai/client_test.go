package openai

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/openaiapi/openaiapitest"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/stt"
	"github.com/framewire/framewire/processors/upstream"
)

func utterance() stt.Utterance {
	return stt.Utterance{PCM: dsp.Sine(440, 0.3, 16000, 500*time.Millisecond), SampleRate: 16000, Channels: 1}
}

// upload is what the fake server received.
type upload struct {
	fields map[string]string
	file   dsp.WAV
	name   string
	ctype  string
	auth   string
}

// fakeServer answers every request with status, ctype and body, recording
// the uploads.
func fakeServer(t *testing.T, status int, ctype string, body []byte) (*httptest.Server, *[]upload) {
	t.Helper()
	var mu sync.Mutex
	var got []upload
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/audio/transcriptions" {
			http.Error(w, "wrong route", http.StatusNotFound)
			return
		}
		if err := r.ParseMultipartForm(10 << 20); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		up := upload{fields: map[string]string{}, auth: r.Header.Get("Authorization")}
		for k, v := range r.MultipartForm.Value {
			up.fields[k] = v[0]
		}
		if fhs := r.MultipartForm.File["file"]; len(fhs) == 1 {
			f, _ := fhs[0].Open()
			data, _ := io.ReadAll(f)
			f.Close()
			up.file, _ = dsp.DecodeWAV(data)
			up.name, up.ctype = fhs[0].Filename, fhs[0].Header.Get("Content-Type")
		}
		mu.Lock()
		got = append(got, up)
		mu.Unlock()
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

func TestTranscribesWithEachServerShape(t *testing.T) {
	tests := []struct {
		fixture, ctype, lang string
	}{
		{"openai_json.json", "application/json", ""},
		{"openai_gpt4o_usage.json", "application/json", ""},
		{"openai_verbose.json", "application/json", "en"},
		{"openai_text.txt", "text/plain; charset=utf-8", ""},
		{"groq_json.json", "application/json", ""},
		{"whispercpp_json.json", "application/json", ""},
	}
	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			srv, _ := fakeServer(t, 200, tc.ctype, openaiapitest.Fixture(t, tc.fixture))
			res, err := New(Options{BaseURL: srv.URL + "/v1"}).Transcribe(context.Background(), utterance())
			if err != nil {
				t.Fatal(err)
			}
			if res != (stt.Result{Text: "Hello from framewire.", Language: tc.lang}) {
				t.Errorf("result %+v", res)
			}
		})
	}
}

func TestUploadsAWAVForm(t *testing.T) {
	srv, got := fakeServer(t, 200, "application/json", openaiapitest.Fixture(t, "openai_json.json"))
	temp := 0.2
	c := New(Options{
		BaseURL: srv.URL + "/v1/", APIKey: "gsk_test", Model: "whisper-large-v3-turbo", Language: "en-US",
		Prompt: "framewire, Pipecat", Temperature: &temp, Extra: map[string]string{"timestamp_granularities[]": "word"},
	})
	u := utterance()
	if _, err := c.Transcribe(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	up := (*got)[0]
	want := map[string]string{
		"model": "whisper-large-v3-turbo", "response_format": "json", "language": "en",
		"prompt": "framewire, Pipecat", "temperature": "0.2", "timestamp_granularities[]": "word",
	}
	if diff := cmp.Diff(want, up.fields); diff != "" {
		t.Errorf("form fields (-want +got):\n%s", diff)
	}
	if up.auth != "Bearer gsk_test" || up.name != "audio.wav" || up.ctype != "audio/wav" {
		t.Errorf("auth %q, file %q (%s)", up.auth, up.name, up.ctype)
	}
	if up.file.SampleRate != 16000 || up.file.Channels != 1 || !bytes.Equal(up.file.PCM, u.PCM) {
		t.Errorf("uploaded WAV: %d Hz × %d, %d bytes; want the utterance", up.file.SampleRate, up.file.Channels, len(up.file.PCM))
	}
}

func TestUtteranceLanguageIsUsedWhenNoneIsConfigured(t *testing.T) {
	srv, got := fakeServer(t, 200, "application/json", openaiapitest.Fixture(t, "openai_json.json"))
	u := utterance()
	u.Language = "fr-CA"
	if _, err := New(Options{BaseURL: srv.URL + "/v1"}).Transcribe(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	if lang := (*got)[0].fields["language"]; lang != "fr" {
		t.Errorf("language %q, want fr", lang)
	}
}

func TestErrorAnswers(t *testing.T) {
	tests := []openaiapitest.ErrorCase{
		{Name: "bad key", Status: 401, ContentType: "application/json", Fixture: "error_401.json", Requests: 1, Want: "openai stt: HTTP 401 Unauthorized: Incorrect API key provided", Category: frames.ErrorPermanent},
		{Name: "bad audio", Status: 400, ContentType: "application/json", Fixture: "error_400_audio.json", Requests: 1, Want: "Audio file might be corrupted or unsupported (type invalid_request_error, code invalid_value, param file)", Category: frames.ErrorUnknown},
		{Name: "speaches validation", Status: 422, ContentType: "application/json", Fixture: "error_speaches_422.json", Requests: 1, Want: "HTTP 422 Unprocessable Entity: body.file: Field required", Category: frames.ErrorUnknown},
		{Name: "rate limited", Status: 429, ContentType: "application/json", Fixture: "error_429.json", Requests: 3, Want: "Rate limit reached for whisper-1", Category: frames.ErrorTransient},
		{Name: "server error", Status: 500, ContentType: "application/json", Fixture: "error_500.json", Requests: 3, Want: "The server had an error", Category: frames.ErrorTransient},
		{Name: "proxy page", Status: 502, ContentType: "text/html", Fixture: "error_502.html", Requests: 3, Want: "502 Bad Gateway", Category: frames.ErrorTransient},
	}
	openaiapitest.RunErrorCases(t, tests, func(baseURL string) error {
		_, err := New(Options{BaseURL: baseURL, HTTP: upstream.HTTP{RetryBackoff: time.Millisecond}}).Transcribe(context.Background(), utterance())
		return err
	})
}

func TestRetriesAfterADroppedConnection(t *testing.T) {
	srv := openaiapitest.New(t,
		openaiapitest.Answer{Drop: true},
		openaiapitest.Answer{ContentType: "application/json", Body: openaiapitest.Fixture(t, "openai_json.json")},
	)
	res, err := New(Options{BaseURL: srv.URL, HTTP: upstream.HTTP{RetryBackoff: time.Millisecond}}).Transcribe(context.Background(), utterance())
	if err != nil || res.Text != "Hello from framewire." || srv.Requests() != 2 {
		t.Fatalf("res %+v, err %v, %d requests", res, err, srv.Requests())
	}
}

func TestCancelAbandonsTheRequest(t *testing.T) {
	arrived, gone := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		close(arrived)
		<-r.Context().Done() // a slow model
		close(gone)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := New(Options{BaseURL: srv.URL}).Transcribe(ctx, utterance())
		done <- err
	}()
	<-arrived
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	<-gone
}

func TestBadAnswers(t *testing.T) {
	for _, tc := range []struct{ ctype, body, want string }{
		{"application/json", `{"txt":"typo"}`, "answer without text"},
		{"application/json", `{"text": 42}`, "bad answer"},
		{"application/json", `{"error":{"message":"quota"}}`, "HTTP 200 OK: quota"},
		{"application/octet-stream", "\xff\xfe\x00", "not UTF-8"},
	} {
		_, err := parseAnswer(tc.ctype, []byte(tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: err = %v, want %q", tc.ctype, tc.body, err, tc.want)
		}
	}
}

func TestOpenAIKeyOnlyGoesToOpenAI(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-env")
	if New(Options{}).opts.APIKey != "sk-env" {
		t.Error("the default server did not get the environment's key")
	}
	if k := New(Options{BaseURL: "https://api.groq.com/openai/v1"}).opts.APIKey; k != "" {
		t.Errorf("Groq got the OpenAI key %q", k)
	}
}

func TestThroughTheSegmentedService(t *testing.T) {
	srv, got := fakeServer(t, 200, "application/json", openaiapitest.Fixture(t, "openai_verbose.json"))
	s := stt.NewSegmented(New(Options{BaseURL: srv.URL + "/v1"}), stt.SegmentedOptions{})
	var send []frames.Frame
	send = append(send, &frames.VADUserStartedSpeaking{})
	tone := dsp.Tone{Freq: 300, Amplitude: 0.3, SampleRate: 16000}
	for range 25 {
		send = append(send, &frames.InputAudioRaw{Audio: frames.Audio{PCM: tone.Append(nil, 320), SampleRate: 16000, Channels: 1}, UserID: "u1"})
	}
	send = append(send, &frames.VADUserStoppedSpeaking{})
	res := pipelinetest.Run(t, s, pipelinetest.Options{Send: send})
	var texts []string
	for _, f := range res.Down() {
		if tc, ok := f.(*frames.Transcription); ok {
			texts = append(texts, tc.Text+"|"+tc.UserID+"|"+tc.Language)
		}
	}
	if len(texts) != 1 || texts[0] != "Hello from framewire.|u1|en" {
		t.Errorf("transcriptions %q", texts)
	}
	if d := (*got)[0].file.Duration(); d != 500*time.Millisecond {
		t.Errorf("uploaded %v of audio, want 500ms", d)
	}
}

// FuzzAnswer: any answer body gives a result or a clear error.
func FuzzAnswer(f *testing.F) {
	for _, name := range []string{"openai_json.json", "openai_gpt4o_usage.json", "openai_verbose.json", "groq_json.json", "whispercpp_json.json"} {
		f.Add("application/json", openaiapitest.Fixture(f, name))
	}
	f.Add("text/plain", openaiapitest.Fixture(f, "openai_text.txt"))
	f.Add("application/json", openaiapitest.Fixture(f, "error_speaches_422.json"))
	f.Fuzz(func(t *testing.T, ctype string, body []byte) {
		res, err := parseAnswer(ctype, body)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if res.Text != strings.TrimSpace(res.Text) {
			t.Fatalf("untrimmed text %q", res.Text)
		}
	})
}

// FuzzErrorBody: any error body gives a text naming the status.
func FuzzErrorBody(f *testing.F) {
	for _, name := range []string{"error_401.json", "error_400_audio.json", "error_429.json", "error_500.json", "error_502.html", "error_speaches_422.json"} {
		f.Add(openaiapitest.Fixture(f, name))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if e := parseAPIError(500, body); !strings.HasPrefix(e.Error(), "openai stt: HTTP 500 Internal Server Error") {
			t.Fatalf("error text %q", e.Error())
		}
	})
}

func BenchmarkTranscribeRequest(b *testing.B) {
	// Building and sending one 2 s utterance to a local server.
	srv := openaiapitest.New(b, openaiapitest.Answer{ContentType: "application/json", Body: []byte(`{"text":"ok"}`)})
	c := New(Options{BaseURL: srv.URL})
	u := stt.Utterance{PCM: make([]byte, 64000), SampleRate: 16000, Channels: 1}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Transcribe(context.Background(), u); err != nil {
			b.Fatal(err)
		}
	}
}
