package main

import (
	"fmt"
	"net/url"
	"os/exec"
	"strconv"
	"strings"

	"github.com/framewire/framewire/examples/internal/echollm"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/audio"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/anthropic"
	llmopenai "github.com/framewire/framewire/processors/llm/openai"
	"github.com/framewire/framewire/processors/stt"
	"github.com/framewire/framewire/processors/stt/deepgram"
	sttopenai "github.com/framewire/framewire/processors/stt/openai"
	"github.com/framewire/framewire/processors/stt/pocketsphinx"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/tts/espeak"
	ttsopenai "github.com/framewire/framewire/processors/tts/openai"
)

// defaultPrompt keeps answers speakable on a phone line.
const defaultPrompt = "You are a friendly voice assistant on a phone call. Your answers are spoken aloud, so keep them short: " +
	"one or two plain sentences, no markdown, no lists, no emoji."

// The paths the bot serves.
const (
	answerPath = "/twilio/answer"
	streamPath = "/twilio/stream"
)

// config is what the bot runs with, from the environment (doc.go lists
// the variables).
type config struct {
	// Addr is the listen address.
	Addr string
	// PublicURL is the scheme, host and path prefix Twilio reaches the
	// bot at (https://abc.ngrok.app); empty: the listen address.
	PublicURL string
	// AuthToken checks the webhook's signature; Insecure turns the check
	// off (local tests only).
	AuthToken string
	Insecure  bool
	// AccountSID and AuthToken, when both set, hang calls up through
	// Twilio's REST API at RESTBaseURL (empty: Twilio's).
	AccountSID  string
	RESTBaseURL string
	// Prompt is the system prompt.
	Prompt string
	// The services, each with a name for the logs.
	STT sttChoice
	TTS ttsChoice
	LLM llmChoice
}

// sttChoice builds one speech-to-text processor per call; build is nil
// when there is none (the bot then answers keys only).
type sttChoice struct {
	Name  string
	build func() pipeline.Processor
}

// ttsChoice builds one synthesizer per call; missing, when set, says why
// the offline default cannot speak.
type ttsChoice struct {
	Name    string
	build   func() tts.Synthesizer
	missing string
}

// llmChoice builds the model client; Echo is the offline stand-in.
type llmChoice struct {
	Name  string
	Echo  bool
	build func() llm.Provider
}

// configure reads the environment.
func configure(getenv func(string) string) config {
	c := config{
		Addr: or(getenv("ADDR"), "localhost:8080"), PublicURL: getenv("PUBLIC_URL"),
		AuthToken: getenv("TWILIO_AUTH_TOKEN"), Insecure: getenv("PHONE_BOT_INSECURE") == "1",
		AccountSID: getenv("TWILIO_ACCOUNT_SID"), RESTBaseURL: getenv("TWILIO_REST_BASE_URL"),
		Prompt: or(getenv("SYSTEM_PROMPT"), defaultPrompt),
	}
	c.STT = chooseSTT(getenv)
	c.TTS = chooseTTS(getenv)
	c.LLM = chooseLLM(getenv)
	return c
}

// urls returns the webhook's public base (what Twilio signs) and the
// stream's URL, from PublicURL or the listen address addr. PublicURL may
// name the base (https://abc.ngrok.app) or the stream itself
// (wss://abc.ngrok.app/twilio/stream).
func (c config) urls(addr string) (base, stream string, err error) {
	if c.PublicURL == "" {
		return "http://" + addr, "ws://" + addr + streamPath, nil
	}
	u, err := url.Parse(c.PublicURL)
	if err != nil || u.Host == "" {
		return "", "", fmt.Errorf("PUBLIC_URL %q is not an absolute URL (https://abc.ngrok.app)", c.PublicURL)
	}
	var web, ws string
	switch u.Scheme {
	case "https", "wss":
		web, ws = "https", "wss"
	case "http", "ws":
		web, ws = "http", "ws"
	default:
		return "", "", fmt.Errorf("PUBLIC_URL %q: the scheme is not https, wss, http or ws", c.PublicURL)
	}
	prefix := strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), streamPath)
	return web + "://" + u.Host + prefix, ws + "://" + u.Host + prefix + streamPath, nil
}

// offlineSTT is PocketSphinx when the binary was built with it (the
// pocketsphinx build tag and Debian's libpocketsphinx-dev and
// pocketsphinx-en-us); one engine serves every call.
func offlineSTT() (sttChoice, error) {
	eng, err := pocketsphinx.New(pocketsphinx.Options{})
	if err != nil {
		return sttChoice{}, err
	}
	return sttChoice{Name: "PocketSphinx (offline)", build: func() pipeline.Processor {
		return stt.NewStreaming(eng, stt.StreamingOptions{})
	}}, nil
}

func chooseSTT(getenv func(string) string) sttChoice {
	lang := getenv("STT_LANGUAGE")
	pick := strings.ToLower(getenv("VOICE_STT"))
	switch {
	case pick == "none" || pick == "off":
		return sttChoice{Name: "none (VOICE_STT=" + pick + ")"}
	case pick == "deepgram" || (pick == "" && getenv("DEEPGRAM_API_KEY") != ""):
		return sttChoice{Name: "Deepgram live", build: func() pipeline.Processor {
			c := deepgram.New(deepgram.Options{APIKey: getenv("DEEPGRAM_API_KEY"), Model: getenv("DEEPGRAM_MODEL"), Language: lang, SmartFormat: true})
			return stt.NewStreaming(c, stt.StreamingOptions{Language: lang})
		}}
	case pick == "openai" || (pick == "" && (getenv("STT_BASE_URL") != "" || getenv("OPENAI_API_KEY") != "")):
		base := or(getenv("STT_BASE_URL"), getenv("OPENAI_BASE_URL"))
		return sttChoice{Name: "OpenAI-compatible transcription at " + or(base, "api.openai.com"), build: func() pipeline.Processor {
			c := sttopenai.New(sttopenai.Options{BaseURL: base, APIKey: or(getenv("STT_API_KEY"), getenv("OPENAI_API_KEY")), Model: getenv("STT_MODEL"), Language: lang})
			return stt.NewSegmented(c, stt.SegmentedOptions{Language: lang})
		}}
	case pick != "" && pick != "pocketsphinx":
		return sttChoice{Name: "none (unknown VOICE_STT=" + pick + ")"}
	}
	ch, err := offlineSTT()
	if err != nil {
		return sttChoice{Name: "none (offline PocketSphinx: " + err.Error() + "; build with -tags pocketsphinx)"}
	}
	return ch
}

func chooseTTS(getenv func(string) string) ttsChoice {
	pick := strings.ToLower(getenv("VOICE_TTS"))
	if pick == "openai" || (pick == "" && (getenv("TTS_BASE_URL") != "" || getenv("OPENAI_API_KEY") != "")) {
		base := or(getenv("TTS_BASE_URL"), getenv("OPENAI_BASE_URL"))
		return ttsChoice{Name: "OpenAI-compatible speech at " + or(base, "api.openai.com"), build: func() tts.Synthesizer {
			return ttsopenai.New(ttsopenai.Options{BaseURL: base, APIKey: or(getenv("TTS_API_KEY"), getenv("OPENAI_API_KEY")), Model: getenv("TTS_MODEL"), Voice: getenv("TTS_VOICE")})
		}}
	}
	speed, _ := strconv.Atoi(getenv("ESPEAK_SPEED"))
	ch := ttsChoice{Name: "espeak-ng (offline)", build: func() tts.Synthesizer {
		return espeak.New(espeak.Options{Voice: getenv("ESPEAK_VOICE"), Speed: speed})
	}}
	if _, err := exec.LookPath(espeak.DefaultCommand); err != nil {
		ch.missing = "espeak-ng is not installed (apt-get install espeak-ng): the bot cannot speak"
	}
	return ch
}

func chooseLLM(getenv func(string) string) llmChoice {
	pick := strings.ToLower(getenv("VOICE_LLM"))
	switch {
	case pick == "echo":
	case pick == "openai" || (pick == "" && (getenv("OPENAI_API_KEY") != "" || getenv("OPENAI_BASE_URL") != "")):
		return llmChoice{Name: "OpenAI-compatible chat at " + or(getenv("OPENAI_BASE_URL"), llmopenai.DefaultBaseURL), build: func() llm.Provider {
			return llmopenai.New(llmopenai.Options{APIKey: getenv("OPENAI_API_KEY"), BaseURL: getenv("OPENAI_BASE_URL"), Model: getenv("OPENAI_MODEL")})
		}}
	case pick == "anthropic" || (pick == "" && getenv("ANTHROPIC_API_KEY") != ""):
		c := anthropic.New(anthropic.Options{APIKey: getenv("ANTHROPIC_API_KEY"), BaseURL: getenv("ANTHROPIC_BASE_URL"), Model: getenv("ANTHROPIC_MODEL")})
		return llmChoice{Name: "Anthropic " + c.Model(), build: func() llm.Provider { return c }}
	}
	return llmChoice{Name: "offline echo (set OPENAI_API_KEY, OPENAI_BASE_URL or ANTHROPIC_API_KEY for a model)", Echo: true,
		build: func() llm.Provider { return echollm.Provider{} }}
}

// vad is the energy VAD: phone audio is narrow-band, and it needs no
// model.
func vad() *audio.VADProcessor { return audio.NewVADProcessor(audio.VADProcessorOptions{}) }

func or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}
