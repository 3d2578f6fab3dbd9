package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestServicesFromTheEnvironment(t *testing.T) {
	tests := []struct {
		name          string
		env           func(string) string
		stt, tts, llm string
	}{
		{"offline", env(), "none", "espeak-ng (offline)", "offline echo"},
		{"deepgram first", env("DEEPGRAM_API_KEY", "dg", "OPENAI_API_KEY", "sk"), "Deepgram live", "OpenAI speech", "OpenAI-compatible chat at https://api.openai.com/v1"},
		{"local servers", env("STT_BASE_URL", "http://localhost:8000/v1", "TTS_BASE_URL", "http://localhost:8880/v1", "OPENAI_BASE_URL", "http://localhost:11434/v1"),
			"the transcription server at http://localhost:8000/v1", "the speech server at http://localhost:8880/v1", "OpenAI-compatible chat at http://localhost:11434/v1"},
		{"cartesia needs a voice", env("CARTESIA_API_KEY", "ck"), "none", "espeak-ng (offline)", "offline echo"},
		{"cartesia", env("CARTESIA_API_KEY", "ck", "CARTESIA_VOICE_ID", "v"), "none", "Cartesia", "offline echo"},
		{"forced", env("OPENAI_API_KEY", "sk", "VOICE_STT", "none", "VOICE_TTS", "espeak", "VOICE_LLM", "echo"), "none (VOICE_STT=none)", "espeak-ng (offline)", "offline echo"},
		{"one OpenAI-compatible base URL for all", env("OPENAI_API_KEY", "sk", "OPENAI_BASE_URL", "http://localhost:9000/v1"),
			"the transcription server at http://localhost:9000/v1", "the speech server at http://localhost:9000/v1", "OpenAI-compatible chat at http://localhost:9000/v1"},
		{"anthropic", env("ANTHROPIC_API_KEY", "ak", "ANTHROPIC_MODEL", "claude-test"), "none", "espeak-ng (offline)", "Anthropic claude-test"},
		{"gemini", env("GEMINI_API_KEY", "gk", "GEMINI_MODEL", "gemini-test"), "none", "espeak-ng (offline)", "Gemini gemini-test"},
		{"assemblyai and elevenlabs", env("ASSEMBLYAI_API_KEY", "aa", "ELEVENLABS_API_KEY", "el", "ELEVENLABS_VOICE_ID", "v"),
			"AssemblyAI streaming", "ElevenLabs", "offline echo"},
		{"elevenlabs needs a voice", env("ELEVENLABS_API_KEY", "el"), "none", "espeak-ng (offline)", "offline echo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := configure(tc.env)
			if c.STT.Name != tc.stt || c.TTS.Name != tc.tts || !strings.HasPrefix(c.LLM.Name, tc.llm) {
				t.Errorf("STT %q, TTS %q, LLM %q; want %q, %q, %q", c.STT.Name, c.TTS.Name, c.LLM.Name, tc.stt, tc.tts, tc.llm)
			}
			if (c.STT.build == nil) != strings.HasPrefix(tc.stt, "none") {
				t.Errorf("STT builder present: %v", c.STT.build != nil)
			}
			if c.STT.build != nil {
				_ = c.STT.build() // builds without network
			}
			_ = c.TTS.build()
			_ = c.LLM.build()
		})
	}
}

// sink stands in for the output transport: it records what reaches it.
type sink struct {
	mu       sync.Mutex
	audio    int
	messages []string
	texts    []string
}

func (s *sink) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch f := f.(type) {
	case *frames.TTSAudioRaw:
		s.audio += len(f.PCM)
	case *frames.OutputTransportMessageUrgent:
		s.messages = append(s.messages, string(f.Message))
	case *frames.TTSText:
		s.texts = append(s.texts, f.Text)
	}
	return nil
}

func (s *sink) snapshot() (audio int, messages, texts []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.audio, append([]string(nil), s.messages...), append([]string(nil), s.texts...)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestOfflineBotGreetsAndAnswersTypedText(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng is not installed (apt-get install -y espeak-ng); skipping the offline voice test")
	}
	b := &bot{cfg: configure(env()), log: zap.NewNop()}
	out := &sink{}
	task := b.task(pipeline.PassThrough{}, out)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- task.Run(ctx) }()

	task.QueueFrame(&frames.InputTransportMessage{Message: []byte(`{"label":"rtvi-ai","type":"client-ready","id":"c1","data":{"version":"2.1.0","about":{"library":"test"}}}`)})
	waitUntil(t, "the spoken greeting", func() bool {
		_, _, texts := out.snapshot()
		return len(texts) > 0
	})
	_, msgs, texts := out.snapshot()
	if !strings.Contains(strings.Join(texts, " "), "no speech-to-text service is configured") {
		t.Errorf("greeting %q does not say the bot cannot hear", texts)
	}
	if !strings.Contains(strings.Join(msgs, "\n"), `"type":"bot-ready"`) {
		t.Errorf("no bot-ready among %q", msgs)
	}
	before, _, _ := out.snapshot()

	task.QueueFrame(&frames.InputTransportMessage{Message: []byte(`{"label":"rtvi-ai","type":"send-text","id":"c2","data":{"content":"what time is it"}}`)})
	waitUntil(t, "the spoken answer", func() bool {
		_, _, texts := out.snapshot()
		return strings.Contains(strings.Join(texts, " "), "You said: what time is it.")
	})
	after, msgs, _ := out.snapshot()
	if after <= before {
		t.Error("the answer was not spoken")
	}
	var types []string
	for _, m := range msgs {
		var env struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(m), &env)
		types = append(types, env.Type)
	}
	for _, want := range []string{"bot-llm-started", "bot-llm-text", "bot-tts-started", "bot-tts-stopped"} {
		if !strings.Contains(strings.Join(types, ","), want) {
			t.Errorf("no %s message among %v", want, types)
		}
	}
	task.EndWhenDone()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestServeAnswersAndShutsDown(t *testing.T) {
	cfg := configure(env("ADDR", "127.0.0.1:0"))
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, zap.NewNop(), ready) }()
	addr := <-ready
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "/api/offer") || !strings.Contains(string(body), "STT: none") {
		t.Errorf("index says %q", body)
	}
	resp, err = http.Post("http://"+addr+"/api/offer", "application/json", strings.NewReader(`{"nope":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad offer got %d, want 400 from the signalling server", resp.StatusCode)
	}
	http.DefaultClient.CloseIdleConnections()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestSpokenTurnThroughVADSTTAndTTS(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng is not installed (apt-get install -y espeak-ng); skipping the offline voice test")
	}
	// The user's speech, synthesized: 16 kHz mono between silences. No
	// comma: Silero VAD hears espeak-ng's pause at one as the end of an
	// utterance, and this test is about one.
	wav, err := exec.Command("espeak-ng", "--stdout", "hello there how are you").Output()
	if err != nil {
		t.Fatal(err)
	}
	w, err := dsp.DecodeWAV(wav)
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := dsp.NewResampler(w.SampleRate, 16000, 1, dsp.ResamplerOptions{})
	speech := rs.Flush(rs.Resample(nil, w.PCM))
	pcm := append(make([]byte, 16000), speech...) // 0.5 s of silence first
	pcm = append(pcm, make([]byte, 64000)...)     // 2 s after

	var uploaded atomic.Int64
	stt := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(8 << 20); err == nil {
			if fh := r.MultipartForm.File["file"]; len(fh) == 1 {
				uploaded.Store(fh[0].Size)
			}
		}
		rw.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(rw, `{"text":" Hello there, how are you?"}`)
	}))
	defer stt.Close()

	b := &bot{cfg: configure(env("STT_BASE_URL", stt.URL+"/v1")), log: zap.NewNop()}
	out := &sink{}
	task := b.task(pipeline.PassThrough{}, out)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- task.Run(ctx) }()
	for len(pcm) >= 640 {
		task.QueueFrame(&frames.InputAudioRaw{Audio: frames.Audio{PCM: pcm[:640:640], SampleRate: 16000, Channels: 1}})
		pcm = pcm[640:]
	}
	waitUntil(t, "the spoken answer", func() bool {
		_, _, texts := out.snapshot()
		return strings.Contains(strings.Join(texts, " "), "You said: Hello there, how are you.")
	})
	// The utterance sent was the speech plus the pre-speech window and the
	// VAD's stop delay: more than the speech, well under the whole input.
	if n := uploaded.Load(); n < int64(len(speech)) || n > int64(len(speech))+2*32000 {
		t.Errorf("uploaded %d bytes for %d bytes of speech", n, len(speech))
	}
	task.EndWhenDone()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestWithoutAnyVoiceTheGreetingIsText(t *testing.T) {
	cfg := configure(env())
	cfg.TTS.missing = "espeak-ng is not installed"
	b := &bot{cfg: cfg, log: zap.NewNop()}
	out := &sink{}
	task := b.task(pipeline.PassThrough{}, out)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- task.Run(ctx) }()
	task.QueueFrame(&frames.InputTransportMessage{Message: []byte(`{"label":"rtvi-ai","type":"client-ready","id":"c1","data":{"version":"2.1.0"}}`)})
	waitUntil(t, "the greeting as bot text", func() bool {
		_, msgs, _ := out.snapshot()
		return strings.Contains(strings.Join(msgs, "\n"), `"type":"bot-llm-text","data":{"text":"Hello! I can neither hear nor speak here`)
	})
	task.EndWhenDone()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
