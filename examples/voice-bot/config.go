package main

import (
	"os/exec"
	"strconv"
	"strings"

	"github.com/framewire/framewire/examples/internal/echollm"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/audio"
	"github.com/framewire/framewire/processors/audio/silero"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/anthropic"
	"github.com/framewire/framewire/processors/llm/gemini"
	llmopenai "github.com/framewire/framewire/processors/llm/openai"
	"github.com/framewire/framewire/processors/stt"
	"github.com/framewire/framewire/processors/stt/assemblyai"
	"github.com/framewire/framewire/processors/stt/deepgram"
	sttopenai "github.com/framewire/framewire/processors/stt/openai"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/tts/cartesia"
	"github.com/framewire/framewire/processors/tts/elevenlabs"
	"github.com/framewire/framewire/processors/tts/espeak"
	ttsopenai "github.com/framewire/framewire/processors/tts/openai"
)

// defaultPrompt keeps answers speakable.
const defaultPrompt = "You are a friendly voice assistant. Your answers are spoken aloud, so keep them short: " +
	"one to three plain sentences, no markdown, no lists, no emoji."

// config is what the bot runs with, chosen from the environment.
type config struct {
	// Addr is the listen address.
	Addr string
	// Prompt is the system prompt.
	Prompt string
	// STT, TTS and LLM are the services, each with a name for the logs.
	STT sttChoice
	TTS ttsChoice
	LLM llmChoice
	// VAD detects voice for the STT (nil analyzer: the energy VAD).
	VAD vadChoice
}

// vadChoice makes one voice activity detector per session; a nil analyzer
// is the VAD processor's default, the energy VAD.
type vadChoice struct {
	Name  string
	build func() audio.VADAnalyzer
}

// sttChoice builds one speech-to-text processor per session; build is nil
// when there is none (the bot then works by text only).
type sttChoice struct {
	Name  string
	build func() pipeline.Processor
}

// ttsChoice builds one synthesizer per session.
type ttsChoice struct {
	Name  string
	build func() tts.Synthesizer
	// missing, when set, says why the offline default cannot speak.
	missing string
}

// llmChoice builds the model client; echo is the offline stand-in.
type llmChoice struct {
	Name  string
	Echo  bool
	build func() llm.Provider
}

// configure reads the environment (see doc.go for the variables).
func configure(getenv func(string) string) config {
	c := config{Addr: or(getenv("ADDR"), "localhost:7860"), Prompt: or(getenv("SYSTEM_PROMPT"), defaultPrompt)}
	c.STT = chooseSTT(getenv)
	c.TTS = chooseTTS(getenv)
	c.LLM = chooseLLM(getenv)
	c.VAD = chooseVAD(getenv)
	return c
}

// analyzer returns a new detector; the zero vadChoice gives the energy VAD.
func (v vadChoice) analyzer() audio.VADAnalyzer {
	if v.build == nil {
		return nil
	}
	return v.build()
}

// chooseVAD picks Silero VAD, the better detector in
// docs/decisions/audio-silero.md, when its model loads (make silero-model;
// FRAMEWIRE_SILERO_MODEL says where), else the energy VAD. VOICE_VAD=energy
// asks for the energy VAD.
func chooseVAD(getenv func(string) string) vadChoice {
	energy := vadChoice{Name: "energy VAD", build: func() audio.VADAnalyzer { return nil }}
	if strings.EqualFold(getenv("VOICE_VAD"), "energy") {
		return energy
	}
	m, err := silero.LoadModel("")
	if err != nil {
		energy.Name += " (no Silero model: run make silero-model)"
		return energy
	}
	return vadChoice{Name: "Silero VAD", build: func() audio.VADAnalyzer {
		if v, err := silero.NewVAD(silero.Options{Model: m}); err == nil {
			return v
		}
		return nil
	}}
}

func chooseSTT(getenv func(string) string) sttChoice {
	lang := getenv("STT_LANGUAGE")
	pick := strings.ToLower(getenv("VOICE_STT"))
	switch {
	case pick == "none" || pick == "off":
		return sttChoice{Name: "none (VOICE_STT=" + pick + ")"}
	case pick == "deepgram" || (pick == "" && getenv("DEEPGRAM_API_KEY") != ""):
		return sttChoice{Name: "Deepgram live", build: func() pipeline.Processor {
			c := deepgram.New(deepgram.Options{
				APIKey: getenv("DEEPGRAM_API_KEY"), Model: getenv("DEEPGRAM_MODEL"), Language: lang, SmartFormat: true,
			})
			return stt.NewStreaming(c, stt.StreamingOptions{Language: lang})
		}}
	case pick == "assemblyai" || (pick == "" && getenv("ASSEMBLYAI_API_KEY") != ""):
		return sttChoice{Name: "AssemblyAI streaming", build: func() pipeline.Processor {
			c := assemblyai.New(assemblyai.Options{
				APIKey: getenv("ASSEMBLYAI_API_KEY"), BaseURL: getenv("ASSEMBLYAI_BASE_URL"), Model: getenv("ASSEMBLYAI_MODEL"),
			})
			return stt.NewStreaming(c, stt.StreamingOptions{Language: lang})
		}}
	case pick == "openai" || (pick == "" && (getenv("STT_BASE_URL") != "" || getenv("OPENAI_API_KEY") != "")):
		// OPENAI_BASE_URL applies to every OpenAI client without a base
		// URL of its own, as in the official SDKs.
		base := or(getenv("STT_BASE_URL"), getenv("OPENAI_BASE_URL"))
		name := "OpenAI transcription"
		if base != "" {
			name = "the transcription server at " + base
		}
		return sttChoice{Name: name, build: func() pipeline.Processor {
			key := or(getenv("STT_API_KEY"), getenv("OPENAI_API_KEY"))
			c := sttopenai.New(sttopenai.Options{BaseURL: base, APIKey: key, Model: getenv("STT_MODEL"), Language: lang})
			return stt.NewSegmented(c, stt.SegmentedOptions{Language: lang})
		}}
	case pick != "":
		return sttChoice{Name: "none (unknown VOICE_STT=" + pick + ")"}
	}
	return sttChoice{Name: "none"}
}

func chooseTTS(getenv func(string) string) ttsChoice {
	pick := strings.ToLower(getenv("VOICE_TTS"))
	switch {
	case pick == "cartesia" || (pick == "" && getenv("CARTESIA_API_KEY") != "" && getenv("CARTESIA_VOICE_ID") != ""):
		return ttsChoice{Name: "Cartesia", build: func() tts.Synthesizer {
			return cartesia.New(cartesia.Options{
				APIKey: getenv("CARTESIA_API_KEY"), VoiceID: getenv("CARTESIA_VOICE_ID"), Model: getenv("CARTESIA_MODEL"),
			})
		}}
	case pick == "elevenlabs" || (pick == "" && getenv("ELEVENLABS_API_KEY") != "" && getenv("ELEVENLABS_VOICE_ID") != ""):
		return ttsChoice{Name: "ElevenLabs", build: func() tts.Synthesizer {
			return elevenlabs.New(elevenlabs.Options{
				APIKey: getenv("ELEVENLABS_API_KEY"), VoiceID: getenv("ELEVENLABS_VOICE_ID"),
				Model: getenv("ELEVENLABS_MODEL"), BaseURL: getenv("ELEVENLABS_BASE_URL"),
			})
		}}
	case pick == "openai" || (pick == "" && (getenv("TTS_BASE_URL") != "" || getenv("OPENAI_API_KEY") != "")):
		base := or(getenv("TTS_BASE_URL"), getenv("OPENAI_BASE_URL"))
		name := "OpenAI speech"
		if base != "" {
			name = "the speech server at " + base
		}
		return ttsChoice{Name: name, build: func() tts.Synthesizer {
			return ttsopenai.New(ttsopenai.Options{
				BaseURL: base, APIKey: or(getenv("TTS_API_KEY"), getenv("OPENAI_API_KEY")), Model: getenv("TTS_MODEL"), Voice: getenv("TTS_VOICE"),
			})
		}}
	}
	speed, _ := strconv.Atoi(getenv("ESPEAK_SPEED"))
	ch := ttsChoice{Name: "espeak-ng (offline)", build: func() tts.Synthesizer {
		return espeak.New(espeak.Options{Voice: getenv("ESPEAK_VOICE"), Speed: speed})
	}}
	if _, err := exec.LookPath(espeak.DefaultCommand); err != nil {
		ch.missing = "espeak-ng is not installed (apt-get install espeak-ng): answers are sent as text only"
	}
	return ch
}

// chooseLLM picks the model: VOICE_LLM names one (echo, openai,
// anthropic, gemini); otherwise the first configured of an
// OpenAI-compatible server (OPENAI_API_KEY or OPENAI_BASE_URL), Anthropic
// (ANTHROPIC_API_KEY) and Gemini (GOOGLE_API_KEY or GEMINI_API_KEY), else
// the offline echo. Each honours its SDK's base URL variable
// (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, GEMINI_BASE_URL) and model
// variable (OPENAI_MODEL, ANTHROPIC_MODEL, GEMINI_MODEL).
func chooseLLM(getenv func(string) string) llmChoice {
	pick := strings.ToLower(getenv("VOICE_LLM"))
	gemKey := or(getenv("GOOGLE_API_KEY"), getenv("GEMINI_API_KEY"))
	switch {
	case pick == "echo":
	case pick == "openai" || (pick == "" && (getenv("OPENAI_API_KEY") != "" || getenv("OPENAI_BASE_URL") != "")):
		name := "OpenAI-compatible chat at " + or(getenv("OPENAI_BASE_URL"), llmopenai.DefaultBaseURL)
		return llmChoice{Name: name, build: func() llm.Provider {
			return llmopenai.New(llmopenai.Options{APIKey: getenv("OPENAI_API_KEY"), BaseURL: getenv("OPENAI_BASE_URL"), Model: getenv("OPENAI_MODEL")})
		}}
	case pick == "anthropic" || (pick == "" && getenv("ANTHROPIC_API_KEY") != ""):
		c := anthropic.New(anthropic.Options{APIKey: getenv("ANTHROPIC_API_KEY"), BaseURL: getenv("ANTHROPIC_BASE_URL"), Model: getenv("ANTHROPIC_MODEL")})
		return llmChoice{Name: "Anthropic " + c.Model(), build: func() llm.Provider { return c }}
	case pick == "gemini" || (pick == "" && gemKey != ""):
		c := gemini.New(gemini.Options{APIKey: gemKey, BaseURL: getenv("GEMINI_BASE_URL"), Model: getenv("GEMINI_MODEL")})
		return llmChoice{Name: "Gemini " + c.Model(), build: func() llm.Provider { return c }}
	}
	return llmChoice{Name: "offline echo (set OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY or GOOGLE_API_KEY for a model)", Echo: true,
		build: func() llm.Provider { return echollm.Provider{} }}
}

func or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}
