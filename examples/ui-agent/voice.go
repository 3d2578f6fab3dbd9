package main

import (
	"os/exec"
	"strings"

	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/audio"
	"github.com/framewire/framewire/processors/stt"
	"github.com/framewire/framewire/processors/stt/deepgram"
	sttopenai "github.com/framewire/framewire/processors/stt/openai"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/tts/cartesia"
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
// reports whether the environment configures it (and names it), build
// makes one per session (the STT processor; the TTS engine).
type sttEngine struct {
	available func(getenv func(string) string) (name string, ok bool)
	build     func(getenv func(string) string) pipeline.Processor
}

type ttsEngine struct {
	available func(getenv func(string) string) (name string, ok bool)
	build     func(getenv func(string) string) tts.Synthesizer
}

// sttEngines are the speech-to-text candidates, in order of preference:
// Deepgram live (DEEPGRAM_API_KEY), then an OpenAI-compatible
// transcription server (STT_BASE_URL for a local one such as
// faster-whisper or whisper.cpp, else OpenAI with OPENAI_API_KEY;
// STT_MODEL names the model).
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
			if base := getenv("STT_BASE_URL"); base != "" {
				return "the transcription server at " + base, true
			}
			return "OpenAI transcription", getenv("OPENAI_API_KEY") != ""
		},
		build: func(getenv func(string) string) pipeline.Processor {
			c := sttopenai.New(sttopenai.Options{BaseURL: getenv("STT_BASE_URL"), Model: getenv("STT_MODEL")})
			return stt.NewSegmented(c, stt.SegmentedOptions{})
		},
	},
}

// ttsEngines are the text-to-speech candidates, in order of preference:
// Cartesia (CARTESIA_API_KEY and CARTESIA_VOICE_ID), an OpenAI-compatible
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
			if getenv("TTS_BASE_URL") != "" {
				return "the speech server at " + getenv("TTS_BASE_URL"), true
			}
			return "OpenAI speech", getenv("OPENAI_API_KEY") != ""
		},
		build: func(getenv func(string) string) tts.Synthesizer {
			return ttsopenai.New(ttsopenai.Options{BaseURL: getenv("TTS_BASE_URL"), Voice: getenv("TTS_VOICE")})
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
// when a speech-to-text service is configured; answers are then spoken by
// the first text-to-speech service available. Without speech-to-text the
// demo is a text chat and says so: a text chat that answers in a voice
// surprises more than it helps (docs/decisions/demo-text-mode.md).
// UI_AGENT_VOICE=off turns voice off whatever is configured.
func chooseVoice(getenv func(string) string) voice {
	return chooseVoiceFrom(getenv, sttEngines, ttsEngines)
}

func chooseVoiceFrom(getenv func(string) string, sttCandidates []sttEngine, ttsCandidates []ttsEngine) voice {
	if strings.EqualFold(getenv("UI_AGENT_VOICE"), "off") {
		return voice{Note: "Voice is off (UI_AGENT_VOICE=off): the demo is a text chat. Type below."}
	}
	var in *sttEngine
	inName := ""
	for i := range sttCandidates {
		if name, ok := sttCandidates[i].available(getenv); ok {
			in, inName = &sttCandidates[i], name
			break
		}
	}
	if in == nil {
		return voice{Note: "Voice is off: no speech-to-text service is configured, so the demo is a text chat. Type below."}
	}
	v := voice{STT: true}
	v.newSTT = func() []pipeline.Processor {
		return []pipeline.Processor{
			audio.NewVADProcessor(audio.VADProcessorOptions{}),
			in.build(getenv),
			audio.NewTurnTracker(audio.TurnTrackerOptions{}),
		}
	}
	for i := range ttsCandidates {
		if name, ok := ttsCandidates[i].available(getenv); ok {
			out := &ttsCandidates[i]
			v.TTS = true
			v.newTTS = func() pipeline.Processor { return tts.NewService(out.build(getenv), tts.Options{}) }
			v.Note = "Voice is on: speech-to-text by " + inName + ", answers spoken by " + name + "."
			return v
		}
	}
	v.Note = "Voice is on: speech-to-text by " + inName + "; answers stay text (no text-to-speech service is available)."
	return v
}
