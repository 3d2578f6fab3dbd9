package openairealtime

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/processors/llm"
)

// Timeouts bound the phases of a session (see Options.Timeouts); a zero
// field takes its default, a negative one turns that bound off.
type Timeouts = llmhttp.Timeouts

// Defaults used when the options leave a field empty.
const (
	DefaultBaseURL            = "https://api.openai.com/v1"
	DefaultModel              = "gpt-realtime"
	DefaultTranscriptionModel = "gpt-4o-mini-transcribe"
	DefaultPingInterval       = 15 * time.Second
	DefaultWriteTimeout       = 5 * time.Second
	DefaultMaxReconnects      = 3
)

// The Realtime API's audio rate, both ways (PCM16 mono).
const apiRate = 24000

// TurnDetection chooses who decides that the user has finished speaking.
type TurnDetection uint8

const (
	// ServerVAD (the default) lets the server's voice activity detection
	// find the turns. The processor reports them as
	// [frames.UserStartedSpeaking] and [frames.UserStoppedSpeaking] and
	// interrupts the bot when the user starts speaking.
	ServerVAD TurnDetection = iota
	// SemanticVAD is the server's model-based turn detection.
	SemanticVAD
	// FrameworkTurns turns the server's detection off: the pipeline's own
	// [frames.UserStartedSpeaking] and [frames.UserStoppedSpeaking] (from
	// a VAD or turn analyzer ahead of the processor) mark the turns. The
	// start interrupts the bot; the stop commits the audio and asks for
	// a response.
	FrameworkTurns
)

// VAD tunes server VAD; zero fields keep the server's defaults.
type VAD struct {
	// Threshold is the activation threshold, 0 to 1.
	Threshold float64
	// PrefixPadding is the audio kept before detected speech.
	PrefixPadding time.Duration
	// SilenceDuration is the silence that ends a turn.
	SilenceDuration time.Duration
	// Eagerness is semantic VAD's "low", "medium", "high" or "auto".
	Eagerness string
}

// Options configure a [Service]. The zero value uses $OPENAI_API_KEY,
// $OPENAI_BASE_URL and $OPENAI_REALTIME_MODEL when set, server VAD, and
// input transcription with DefaultTranscriptionModel.
type Options struct {
	// APIKey authenticates ("Authorization: Bearer <key>"). Default:
	// $OPENAI_API_KEY.
	APIKey string
	// Model is the realtime model. Default: $OPENAI_REALTIME_MODEL, else
	// DefaultModel.
	Model string
	// BaseURL is the API's base, as the official SDKs take it
	// ("https://api.openai.com/v1"); http(s) becomes ws(s) and
	// "/realtime" is appended. A ws(s) URL ending in /realtime is used as
	// it is. Default: $OPENAI_BASE_URL, else DefaultBaseURL.
	BaseURL string
	// Voice is the output voice ("marin", "cedar", "alloy", ...). Empty
	// keeps the server's default.
	Voice string
	// Instructions is the system instruction of the session.
	Instructions string
	// TurnDetection chooses server or framework-side turn detection.
	TurnDetection TurnDetection
	// VAD tunes the server's detection.
	VAD VAD
	// TranscriptionModel transcribes the user's audio for
	// [frames.Transcription]. Default: DefaultTranscriptionModel.
	TranscriptionModel string
	// TranscriptionLanguage hints the language (ISO-639-1), optional.
	TranscriptionLanguage string
	// NoTranscription turns the transcription of the user's audio off.
	NoTranscription bool
	// Functions are registered and offered to the model as tools.
	Functions []llm.Function
	// ToolChoice constrains tool use; the zero value leaves it to the
	// server ("auto").
	ToolChoice frames.LLMToolChoice
	// BeforeResponse runs right before the processor asks for the response
	// to a user turn, with a scratch context holding the instructions (as
	// a system message) and a placeholder user message last. The messages
	// it adds go into the conversation just before the user's turn (in
	// their roles; developer messages as system items, the API having no
	// developer role): system messages once, the others in place of the
	// previous turn's. The UI agent's BeforeInference writes its prompt
	// guide (sent once) and the current <ui_state> (replacing the
	// previous turn's). With it set, server VAD does not start responses
	// by itself; the processor does, after the hook.
	BeforeResponse func(c *llm.Context)
	// FunctionTimeout bounds every call whose function sets no timeout
	// (see llm.ServiceOptions).
	FunctionTimeout time.Duration
	// SequentialFunctions runs the calls of one response one after another.
	SequentialFunctions bool
	// Timeouts bound the server, as every upstream client of framewire
	// does (defaults in internal/llmhttp: 10s, 10s, 20s; zero takes the
	// default, negative turns that bound off):
	//   - Connect bounds one connection attempt (dial, TLS and the
	//     WebSocket handshake);
	//   - FirstByte bounds the wait for the server's first event after
	//     the connection opens (session.created), and for the answer to
	//     what asks for a response (response.created after a
	//     response.create; input_audio_buffer.committed after a commit);
	//   - Idle bounds the silence between two events while a response is
	//     active, and the wait for the end of a response the processor
	//     cancelled or the server said was still running.
	// A connection that says nothing first is closed and another one
	// dialled; a response past FirstByte or Idle is given up (cancelled
	// and closed when it had started) and the session goes on. Each
	// reports a transient *llmhttp.TimeoutError, such as
	// "openairealtime: no first byte within 10s". A quiet session with
	// nothing due is never timed out.
	Timeouts Timeouts
	// PingInterval is how often the connection is checked with a ping;
	// a ping unanswered within the interval ends it. Default: 15s.
	PingInterval time.Duration
	// WriteTimeout bounds one client event's write. Default: 5s.
	WriteTimeout time.Duration
	// MaxReconnects bounds reconnection attempts after the connection is
	// lost (each one a new server session). Default: 3; negative: none.
	MaxReconnects int
	// HTTPClient dials the WebSocket. Default: http.DefaultClient.
	HTTPClient *http.Client
	// Name is the processor's display name. Default: "OpenAIRealtime#<id>".
	Name string
}

func (o Options) withDefaults() Options {
	if o.APIKey == "" {
		o.APIKey = os.Getenv("OPENAI_API_KEY")
	}
	if o.Model == "" {
		o.Model = os.Getenv("OPENAI_REALTIME_MODEL")
	}
	if o.Model == "" {
		o.Model = DefaultModel
	}
	if o.BaseURL == "" {
		o.BaseURL = os.Getenv("OPENAI_BASE_URL")
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if o.TranscriptionModel == "" {
		o.TranscriptionModel = DefaultTranscriptionModel
	}
	o.Timeouts = o.Timeouts.Or(llmhttp.SpeechTimeouts())
	if o.PingInterval <= 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.MaxReconnects == 0 {
		o.MaxReconnects = DefaultMaxReconnects
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	return o
}

// RealtimeURL returns the WebSocket URL for base and model: an
// http(s) base ("https://api.openai.com/v1", a gateway's "/openai/v1")
// gets ws(s) and "/realtime"; a ws(s) URL already ending in /realtime is
// kept. The model goes in the query.
func RealtimeURL(base, model string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil {
		return "", fmt.Errorf("openairealtime: base URL %q: %w", base, err)
	}
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	case "http":
		u.Scheme = "ws"
	case "ws", "wss":
	default:
		return "", fmt.Errorf("openairealtime: base URL %q: scheme must be http, https, ws or wss", base)
	}
	if u.Host == "" {
		return "", fmt.Errorf("openairealtime: base URL %q has no host", base)
	}
	p := strings.TrimRight(u.Path, "/")
	if !strings.HasSuffix(p, "/realtime") {
		p += "/realtime"
	}
	u.Path = p
	q := u.Query()
	if q.Get("model") == "" && model != "" {
		q.Set("model", model)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// sessionConfig builds the session.update the processor sends first.
func sessionConfig(o Options, decls []frames.LLMTool) sessionUpdate {
	s := session{
		Type:             "realtime",
		Model:            o.Model,
		OutputModalities: []string{"audio"},
		Instructions:     o.Instructions,
		Audio: sessionAudio{
			Input:  audioInput{Format: audioFormat{Type: "audio/pcm", Rate: apiRate}},
			Output: audioOutput{Format: audioFormat{Type: "audio/pcm", Rate: apiRate}, Voice: o.Voice},
		},
		ToolChoice: toolChoiceJSON(o.ToolChoice),
	}
	if !o.NoTranscription {
		s.Audio.Input.Transcription = &transcription{Model: o.TranscriptionModel, Language: o.TranscriptionLanguage}
	}
	if o.TurnDetection != FrameworkTurns {
		td := &turnDetection{Type: "server_vad", CreateResponse: o.BeforeResponse == nil, InterruptResponse: true}
		if o.TurnDetection == SemanticVAD {
			td.Type = "semantic_vad"
			td.Eagerness = o.VAD.Eagerness
		} else {
			if o.VAD.Threshold > 0 {
				t := o.VAD.Threshold
				td.Threshold = &t
			}
			td.PrefixPaddingMS = int(o.VAD.PrefixPadding / time.Millisecond)
			td.SilenceDurationMS = int(o.VAD.SilenceDuration / time.Millisecond)
		}
		s.Audio.Input.TurnDetection = td
	}
	s.Tools = toolsOf(decls)
	return sessionUpdate{Type: "session.update", Session: s}
}
