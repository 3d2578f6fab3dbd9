package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/audio"
	"github.com/framewire/framewire/processors/audio/silero"
	"github.com/framewire/framewire/processors/stt"
	"github.com/framewire/framewire/processors/stt/assemblyai"
	"github.com/framewire/framewire/processors/stt/deepgram"
	sttopenai "github.com/framewire/framewire/processors/stt/openai"
	"github.com/framewire/framewire/processors/stt/pocketsphinx"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/tts/cartesia"
	"github.com/framewire/framewire/processors/tts/elevenlabs"
	"github.com/framewire/framewire/processors/tts/espeak"
	ttsopenai "github.com/framewire/framewire/processors/tts/openai"
)

// voice is the speech side of the demo: which services run and what the
// page tells the user about it.
type voice struct {
	// STT and TTS say whether speech-to-text and text-to-speech run.
	STT bool `json:"stt"`
	TTS bool `json:"tts"`
	// Note is shown next to the microphone button.
	Note string `json:"note"`

	// newSTT builds a session's speech input (VAD, STT, turn tracker);
	// newTTS its speech output. nil when off.
	newSTT func() []pipeline.Processor
	newTTS func() pipeline.Processor
}

// sttEngine and ttsEngine are candidates for a speech service: available
// reports whether the environment configures it (and names it), check
// (when set) whether it can be reached and does speech, build makes one
// per session (the STT processor; the TTS engine). An sttEngine that
// builds more than the STT processor has buildWith instead: the session's
// processors from the VAD (given) to the STT. A fallback candidate is
// used only when no service is configured at all: a configured one that
// fails its check leaves the text chat, and the page says why.
type sttEngine struct {
	available func(getenv func(string) string) (name string, ok bool)
	check     func(ctx context.Context, getenv func(string) string) error
	build     func(getenv func(string) string) pipeline.Processor
	buildWith func(vad pipeline.Processor) []pipeline.Processor
	fallback  bool
}

type ttsEngine struct {
	available func(getenv func(string) string) (name string, ok bool)
	check     func(ctx context.Context, getenv func(string) string) error
	build     func(getenv func(string) string) tts.Synthesizer
}

// openAIBase is the base URL of an OpenAI-compatible speech service: its
// own variable, else OPENAI_BASE_URL (which applies to every OpenAI
// client that has no base URL of its own), else "" for OpenAI's.
func openAIBase(getenv func(string) string, own string) string {
	if b := getenv(own); b != "" {
		return b
	}
	return getenv("OPENAI_BASE_URL")
}

// probeTimeout bounds each start-up check of a speech server.
const probeTimeout = 3 * time.Second

// probeEndpoint checks that the OpenAI-compatible server at base serves
// path: it posts an empty request, which a server with the endpoint
// refuses as a bad request (or lets through), and one without it answers
// with 404 or 405. OpenAI's own host is not probed: it has every endpoint,
// and the demo does not reach out to the internet before it is used.
func probeEndpoint(ctx context.Context, base, path, contentType string) error {
	if base == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	url := strings.TrimRight(base, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader("{}"))
	if err != nil {
		return fmt.Errorf("%s is not a valid URL", base)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%s did not answer within %v", base, probeTimeout)
		}
		return fmt.Errorf("%s cannot be reached", base)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
		return fmt.Errorf("%s has no %s endpoint (it answered %d)", base, path, resp.StatusCode)
	}
	return nil
}

// sttEngines are the speech-to-text candidates, in order of preference:
// Deepgram live (DEEPGRAM_API_KEY), AssemblyAI streaming
// (ASSEMBLYAI_API_KEY, ASSEMBLYAI_BASE_URL), an OpenAI-compatible
// transcription server (STT_BASE_URL for a local one such as
// faster-whisper or whisper.cpp, else OpenAI with OPENAI_API_KEY;
// STT_MODEL names the model), then, with none of them configured,
// PocketSphinx offline when the binary has it (the pocketsphinx build
// tag, which make sets when the packages are installed) and its models
// are installed: offline.go.
var sttEngines = []sttEngine{
	{
		available: func(getenv func(string) string) (string, bool) {
			return "Deepgram", getenv("DEEPGRAM_API_KEY") != ""
		},
		build: func(getenv func(string) string) pipeline.Processor {
			return stt.NewStreaming(deepgram.New(deepgram.Options{APIKey: getenv("DEEPGRAM_API_KEY")}), stt.StreamingOptions{})
		},
	},
	{
		available: func(getenv func(string) string) (string, bool) {
			return "AssemblyAI", getenv("ASSEMBLYAI_API_KEY") != ""
		},
		build: func(getenv func(string) string) pipeline.Processor {
			c := assemblyai.New(assemblyai.Options{APIKey: getenv("ASSEMBLYAI_API_KEY"), BaseURL: getenv("ASSEMBLYAI_BASE_URL")})
			return stt.NewStreaming(c, stt.StreamingOptions{})
		},
	},
	{
		available: func(getenv func(string) string) (string, bool) {
			if base := openAIBase(getenv, "STT_BASE_URL"); base != "" {
				return "the transcription server at " + base, true
			}
			return "OpenAI transcription", getenv("OPENAI_API_KEY") != ""
		},
		check: func(ctx context.Context, getenv func(string) string) error {
			return probeEndpoint(ctx, openAIBase(getenv, "STT_BASE_URL"), "/audio/transcriptions", "multipart/form-data; boundary=x")
		},
		build: func(getenv func(string) string) pipeline.Processor {
			c := sttopenai.New(sttopenai.Options{BaseURL: openAIBase(getenv, "STT_BASE_URL"), APIKey: getenv("OPENAI_API_KEY"), Model: getenv("STT_MODEL")})
			return stt.NewSegmented(c, stt.SegmentedOptions{})
		},
	},
	{
		available: func(func(string) string) (string, bool) {
			_, err := pocketsphinx.New(pocketsphinx.Options{})
			return offlineSTTName, err == nil
		},
		check: func(ctx context.Context, _ func(string) string) error { return checkOfflineSTT(ctx) },
		buildWith: func(vad pipeline.Processor) []pipeline.Processor {
			procs, err := offlineSTT(vad)
			if err != nil {
				// The models were there at start-up: the session is deaf
				// rather than failing, and the page still works by text.
				return []pipeline.Processor{vad}
			}
			return procs
		},
		fallback: true,
	},
}

// offlineSTTName names the offline speech-to-text on the page.
const offlineSTTName = "PocketSphinx (offline; it listens for what the page shows)"

// offlineSTTMissing says why the offline speech-to-text is not there.
func offlineSTTMissing() string {
	_, err := pocketsphinx.New(pocketsphinx.Options{})
	switch {
	case err == nil:
		return ""
	case errors.Is(err, pocketsphinx.ErrUnavailable):
		return "this build has no offline speech-to-text (make run builds it in once libpocketsphinx-dev and pocketsphinx-en-us are installed)"
	}
	return "the offline speech-to-text models are not installed (pocketsphinx-en-us)"
}

// ttsEngines are the text-to-speech candidates, in order of preference:
// Cartesia (CARTESIA_API_KEY and CARTESIA_VOICE_ID), ElevenLabs
// (ELEVENLABS_API_KEY and ELEVENLABS_VOICE_ID), an OpenAI-compatible
// speech server (OPENAI_API_KEY, or TTS_BASE_URL for a local one such as
// Kokoro-FastAPI), then espeak-ng when it is installed (offline).
var ttsEngines = []ttsEngine{
	{
		available: func(getenv func(string) string) (string, bool) {
			return "Cartesia", getenv("CARTESIA_API_KEY") != "" && getenv("CARTESIA_VOICE_ID") != ""
		},
		build: func(getenv func(string) string) tts.Synthesizer {
			return cartesia.New(cartesia.Options{APIKey: getenv("CARTESIA_API_KEY"), VoiceID: getenv("CARTESIA_VOICE_ID")})
		},
	},
	{
		available: func(getenv func(string) string) (string, bool) {
			return "ElevenLabs", getenv("ELEVENLABS_API_KEY") != "" && getenv("ELEVENLABS_VOICE_ID") != ""
		},
		build: func(getenv func(string) string) tts.Synthesizer {
			return elevenlabs.New(elevenlabs.Options{APIKey: getenv("ELEVENLABS_API_KEY"), VoiceID: getenv("ELEVENLABS_VOICE_ID"),
				Model: getenv("ELEVENLABS_MODEL"), BaseURL: getenv("ELEVENLABS_BASE_URL")})
		},
	},
	{
		available: func(getenv func(string) string) (string, bool) {
			if base := openAIBase(getenv, "TTS_BASE_URL"); base != "" {
				return "the speech server at " + base, true
			}
			return "OpenAI speech", getenv("OPENAI_API_KEY") != ""
		},
		check: func(ctx context.Context, getenv func(string) string) error {
			return probeEndpoint(ctx, openAIBase(getenv, "TTS_BASE_URL"), "/audio/speech", "application/json")
		},
		build: func(getenv func(string) string) tts.Synthesizer {
			return ttsopenai.New(ttsopenai.Options{BaseURL: openAIBase(getenv, "TTS_BASE_URL"), APIKey: getenv("OPENAI_API_KEY"), Voice: getenv("TTS_VOICE")})
		},
	},
	{
		available: func(func(string) string) (string, bool) {
			_, err := exec.LookPath(espeak.DefaultCommand)
			return "espeak-ng (offline)", err == nil
		},
		build: func(func(string) string) tts.Synthesizer { return espeak.New(espeak.Options{}) },
	},
}

// chooseVoice picks the speech services from the environment. Voice is on
// when a speech-to-text service is configured and answers its start-up
// check, or, with none configured, when the offline PocketSphinx is built
// in (docs/decisions/demo-offline-voice.md); answers are then spoken by
// the first text-to-speech service available that answers its check
// (espeak-ng offline). Without speech-to-text the demo is a text chat and
// says why: a text chat that answers in a voice surprises more than it
// helps (docs/decisions/demo-text-mode.md).
// UI_AGENT_VOICE=off turns voice off whatever is configured.
func chooseVoice(ctx context.Context, getenv func(string) string) voice {
	return chooseVoiceFrom(ctx, getenv, sttEngines, ttsEngines)
}

func chooseVoiceFrom(ctx context.Context, getenv func(string) string, sttCandidates []sttEngine, ttsCandidates []ttsEngine) voice {
	if strings.EqualFold(getenv("UI_AGENT_VOICE"), "off") {
		return voice{Note: "Voice is off (UI_AGENT_VOICE=off): the demo is a text chat. Type below."}
	}
	var (
		in      *sttEngine
		inName  string
		refused []string
	)
	for i := range sttCandidates {
		if sttCandidates[i].fallback && len(refused) > 0 {
			break // a configured service was refused: the page says why
		}
		name, ok := sttCandidates[i].available(getenv)
		if !ok {
			continue
		}
		if c := sttCandidates[i].check; c != nil {
			if err := c(ctx, getenv); err != nil {
				refused = append(refused, "speech-to-text by "+name+" is configured, but "+err.Error())
				continue
			}
		}
		in, inName = &sttCandidates[i], name
		break
	}
	if in == nil {
		why := "no speech-to-text service is configured"
		if len(refused) > 0 {
			why = strings.Join(refused, "; ")
		} else if missing := offlineSTTMissing(); missing != "" {
			why += " and " + missing
		}
		return voice{Note: "Voice is off: " + why + ", so the demo is a text chat. Type below."}
	}
	v := voice{STT: true}
	newVAD, vadName := chooseVAD()
	v.newSTT = func() []pipeline.Processor {
		vad := audio.NewVADProcessor(audio.VADProcessorOptions{Analyzer: newVAD()})
		var procs []pipeline.Processor
		if in.buildWith != nil {
			procs = in.buildWith(vad)
		} else {
			procs = []pipeline.Processor{vad, in.build(getenv)}
		}
		return append(procs, audio.NewTurnTracker(audio.TurnTrackerOptions{}))
	}
	for i := range ttsCandidates {
		name, ok := ttsCandidates[i].available(getenv)
		if !ok {
			continue
		}
		if c := ttsCandidates[i].check; c != nil {
			if err := c(ctx, getenv); err != nil {
				refused = append(refused, "speech by "+name+" is configured, but "+err.Error())
				continue
			}
		}
		out := &ttsCandidates[i]
		v.TTS = true
		// UI_AGENT_SPEECH_TIMEOUT bounds the wait for a sentence's audio
		// (tts.Options.AudioTimeout); past it the text is shown unspoken.
		wait, _ := time.ParseDuration(getenv("UI_AGENT_SPEECH_TIMEOUT"))
		v.newTTS = func() pipeline.Processor {
			return tts.NewService(out.build(getenv), tts.Options{AudioTimeout: wait})
		}
		v.Note = "Voice is on: speech-to-text by " + inName + ", answers spoken by " + name + "; voice activity by " + vadName + "."
		if len(refused) > 0 {
			v.Note += " (" + strings.Join(refused, "; ") + ".)"
		}
		return v
	}
	v.Note = "Voice is on: speech-to-text by " + inName + "; answers stay text (no text-to-speech service is available); voice activity by " + vadName + "."
	if len(refused) > 0 {
		v.Note += " (" + strings.Join(refused, "; ") + ".)"
	}
	return v
}

// chooseVAD picks the voice activity detector (nil: the energy VAD, the
// VAD processor's default): Silero VAD, the better of
// the two in docs/decisions/audio-silero.md, when its model file loads
// (make silero-model fetches it; FRAMEWIRE_SILERO_MODEL overrides where it
// is looked for), else the energy VAD. Sessions share the loaded model.
func chooseVAD() (newVAD func() audio.VADAnalyzer, name string) {
	energy := func() audio.VADAnalyzer { return nil } // the VAD processor's default
	m, err := silero.LoadModel("")
	if err != nil {
		return energy, "the energy VAD (no Silero model: run make silero-model)"
	}
	return func() audio.VADAnalyzer {
		v, err := silero.NewVAD(silero.Options{Model: m})
		if err != nil { // only an unsupported rate, which the default is not
			return nil
		}
		return v
	}, "Silero VAD"
}
