package main

import (
	"context"
	"iter"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/audio/silero"
	"github.com/framewire/framewire/processors/stt"
	"github.com/framewire/framewire/processors/tts"
)

type silentTranscriber struct{}

func (silentTranscriber) Transcribe(context.Context, stt.Utterance) (stt.Result, error) {
	return stt.Result{}, nil
}

// recordingSynth is a TTS engine that records what it was asked to say
// and answers with 100 ms of silence.
type recordingSynth struct {
	mu    sync.Mutex
	texts []string
}

func (s *recordingSynth) Synthesize(_ context.Context, req tts.Request) iter.Seq2[tts.Chunk, error] {
	s.mu.Lock()
	s.texts = append(s.texts, req.Text)
	s.mu.Unlock()
	return func(yield func(tts.Chunk, error) bool) {
		yield(tts.Chunk{Audio: make([]byte, req.SampleRate/10*2), SampleRate: req.SampleRate}, nil)
	}
}

func (s *recordingSynth) said() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.texts, " ")
}

func engines(sttOK, ttsOK bool, synth tts.Synthesizer) ([]sttEngine, []ttsEngine) {
	return []sttEngine{{
			available: func(func(string) string) (string, bool) { return "fake STT", sttOK },
			build: func(func(string) string) pipeline.Processor {
				return stt.NewSegmented(silentTranscriber{}, stt.SegmentedOptions{})
			},
		}}, []ttsEngine{{
			available: func(func(string) string) (string, bool) { return "fake TTS", ttsOK },
			build:     func(func(string) string) tts.Synthesizer { return synth },
		}}
}

// speechServer is an OpenAI-compatible server on loopback: with audio it
// has the speech endpoints (and refuses the empty probe as a bad
// request); without, like a chat-only model server, it answers 404.
func speechServer(t *testing.T, audio bool) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if audio && (r.URL.Path == "/v1/audio/transcriptions" || r.URL.Path == "/v1/audio/speech") {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// The real engines are chosen by their environment variables, and a
// configured speech server is used only when it does speech: the base URL
// of OPENAI_BASE_URL applies to the speech clients too.
//
// With nothing configured, the offline PocketSphinx hears and espeak-ng
// speaks when the binary has them (the pocketsphinx tag and the models);
// otherwise the demo is a text chat that says what is missing.
func TestVoiceEnginesFromTheEnvironment(t *testing.T) {
	withAudio, chatOnly := speechServer(t, true), speechServer(t, false)
	offline := offlineSTTMissing() == ""
	_, espeakErr := exec.LookPath("espeak-ng")
	nothing := "Voice is off: no speech-to-text service is configured and "
	if offline {
		nothing = "Voice is on: speech-to-text by " + offlineSTTName
		if espeakErr == nil {
			nothing += ", answers spoken by espeak-ng (offline)"
		}
	}
	tests := []struct {
		name     string
		env      func(string) string
		stt, tts bool
		note     string
	}{
		{"nothing", env(), offline, espeakErr == nil, nothing},
		{"turned off", env("UI_AGENT_VOICE", "off"), false, false, "Voice is off (UI_AGENT_VOICE=off)"},
		{"Deepgram", env("DEEPGRAM_API_KEY", "k"), true, true, "speech-to-text by Deepgram"},
		{"a local whisper server", env("STT_BASE_URL", withAudio), true, true, "the transcription server at " + withAudio},
		{"OpenAI for everything", env("OPENAI_API_KEY", "k"), true, true, "speech-to-text by OpenAI transcription, answers spoken by OpenAI speech"},
		{"Cartesia voice", env("DEEPGRAM_API_KEY", "k", "CARTESIA_API_KEY", "k", "CARTESIA_VOICE_ID", "v"), true, true, "answers spoken by Cartesia"},
		{"an OpenAI-compatible server that does speech", env("OPENAI_API_KEY", "k", "OPENAI_BASE_URL", withAudio), true, true,
			"speech-to-text by the transcription server at " + withAudio + ", answers spoken by the speech server at " + withAudio},
		// A configured service that fails its check is not replaced by the
		// offline one: the page says what is wrong with it.
		{"a chat-only model server", env("OPENAI_API_KEY", "k", "OPENAI_BASE_URL", chatOnly), false, false,
			"Voice is off: speech-to-text by the transcription server at " + chatOnly + " is configured, but " + chatOnly +
				" has no /audio/transcriptions endpoint (it answered 404), so the demo is a text chat"},
		{"AssemblyAI and ElevenLabs", env("ASSEMBLYAI_API_KEY", "k", "ELEVENLABS_API_KEY", "k", "ELEVENLABS_VOICE_ID", "v"), true, true,
			"speech-to-text by AssemblyAI, answers spoken by ElevenLabs"},
		{"a speech server that is down", env("STT_BASE_URL", "http://127.0.0.1:1/v1"), false, false, "http://127.0.0.1:1/v1 cannot be reached"},
	}
	for _, tc := range tests {
		v := chooseVoice(t.Context(), tc.env)
		if v.STT != tc.stt || (tc.stt && v.TTS != tc.tts) || !strings.Contains(v.Note, tc.note) {
			t.Errorf("%s: stt %v tts %v note %q, want stt %v tts %v and %q", tc.name, v.STT, v.TTS, v.Note, tc.stt, tc.tts, tc.note)
		}
		if v.STT {
			procs := v.newSTT()
			want := 3 // VAD, STT and turn tracker
			if _, ok := procs[0].(*pageGrammar); ok {
				want = 5 // the page's grammar before them, the log of what was heard after the STT
			}
			if len(procs) != want {
				t.Errorf("%s: speech input has %d processors, want %d: %v", tc.name, len(procs), want, procs)
			}
		}
	}
}

func TestChooseVoice(t *testing.T) {
	noEnv := func(string) string { return "" }
	tests := []struct {
		name           string
		env            func(string) string
		sttOK, ttsOK   bool
		wantSTT, wantT bool
		note           string
	}{
		{"no speech-to-text: a text chat", noEnv, false, true, false, false, "no speech-to-text service"},
		{"speech in and out", noEnv, true, true, true, true, "speech-to-text by fake STT, answers spoken by fake TTS"},
		{"speech in, text out", noEnv, true, false, true, false, "answers stay text"},
		{"turned off", func(k string) string {
			if k == "UI_AGENT_VOICE" {
				return "off"
			}
			return ""
		}, true, true, false, false, "UI_AGENT_VOICE=off"},
	}
	for _, tc := range tests {
		s, o := engines(tc.sttOK, tc.ttsOK, &recordingSynth{})
		v := chooseVoiceFrom(t.Context(), tc.env, s, o)
		if v.STT != tc.wantSTT || v.TTS != tc.wantT || !strings.Contains(v.Note, tc.note) {
			t.Errorf("%s: voice = %+v, want stt=%v tts=%v and a note with %q", tc.name, v, tc.wantSTT, tc.wantT, tc.note)
		}
		if (v.newSTT != nil) != v.STT || (v.newTTS != nil) != v.TTS {
			t.Errorf("%s: builders do not match the flags", tc.name)
		}
	}
}

// With a TTS the answer is spoken verbatim: the reply's answer goes to the
// TTS engine, and its text comes out as TTSText in step with the audio.
func TestVoiceSessionSpeaksTheAnswer(t *testing.T) {
	synth := &recordingSynth{}
	s, o := engines(true, true, synth)
	b := &bot{brain: chooseBrain(func(string) string { return "" }), voice: chooseVoiceFrom(t.Context(), func(string) string { return "" }, s, o),
		log: zap.NewNop(), researchStep: time.Second}
	out := &textSink{sink: sink{news: make(chan struct{}, 1)}}
	task := mustBuild(t, b, out)
	done := make(chan error, 1)
	go func() { done <- task.Run(t.Context()) }()
	defer func() { task.EndWhenDone(); <-done }()

	from := 0
	task.QueueFrame(clientMessage(t, "client-ready", map[string]any{"version": "2.1.0"}))
	out.waitFor(t, &from, "bot-ready", typed("bot-ready"))
	// The greeting is spoken first (a typed message would interrupt it).
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(out.spoken(), "Hi! I can see this page.") {
		if time.Now().After(deadline) {
			t.Fatalf("no greeting spoken; the engine was asked for %q", synth.said())
		}
		time.Sleep(20 * time.Millisecond)
	}
	task.QueueFrame(clientMessage(t, "ui-snapshot", map[string]any{"tree": snapshot(t, "top")}))
	task.QueueFrame(clientMessage(t, "send-text", map[string]any{"content": "where is the iPhone 17?"}))
	out.waitFor(t, &from, "scroll_to", command("scroll_to"))
	for !strings.Contains(out.spoken(), "scrolled down to it") {
		if time.Now().After(deadline) {
			t.Fatalf("TTSText = %q, engine asked for %q", out.spoken(), synth.said())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(synth.said(), "The iPhone 17 is in row 5") {
		t.Errorf("the engine said %q, want the answer", synth.said())
	}
}

// textSink is a sink that also records the spoken text (TTSText).
type textSink struct {
	sink
	mu   sync.Mutex
	text strings.Builder
}

func (s *textSink) ProcessFrame(ctx context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	if t, ok := f.(*frames.TTSText); ok {
		s.mu.Lock()
		s.text.WriteString(t.Text + " ")
		s.mu.Unlock()
		return nil
	}
	return s.sink.ProcessFrame(ctx, h, f, dir)
}

func (s *textSink) spoken() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text.String()
}

// Voice activity comes from Silero VAD when its model loads, else from the
// energy VAD, and the note says which.
func TestVoiceActivityIsSileroWhenItsModelLoads(t *testing.T) {
	t.Run("no model", func(t *testing.T) {
		t.Setenv(silero.ModelEnv, filepath.Join(t.TempDir(), "missing.onnx"))
		newVAD, name := chooseVAD()
		if newVAD() != nil || !strings.Contains(name, "energy VAD") || !strings.Contains(name, "make silero-model") {
			t.Errorf("without a model: %q, %v; want the energy VAD and how to get the model", name, newVAD())
		}
	})
	t.Run("model", func(t *testing.T) {
		if _, err := silero.LoadModel(""); err != nil {
			t.Skipf("no Silero model here (make silero-model): %v", err)
		}
		newVAD, name := chooseVAD()
		if _, ok := newVAD().(*silero.VAD); !ok || name != "Silero VAD" {
			t.Errorf("with the model: %q, %T; want Silero VAD", name, newVAD())
		}
	})
}
