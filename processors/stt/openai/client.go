package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/internal/openaiapi"
	"github.com/framewire/framewire/processors/stt"
	"github.com/framewire/framewire/processors/upstream"
)

// Defaults used when the options leave a field empty.
const (
	DefaultBaseURL = "https://api.openai.com/v1"
	DefaultModel   = "gpt-4o-transcribe"
)

// Options configure a [Client]. The zero value talks to OpenAI with the
// key in $OPENAI_API_KEY.
type Options struct {
	// BaseURL is the API root; "/audio/transcriptions" is appended.
	// Default: DefaultBaseURL. For example "https://api.groq.com/openai/v1"
	// or "http://localhost:8000/v1".
	BaseURL string
	// APIKey is sent as a bearer token. When empty and BaseURL is OpenAI's,
	// $OPENAI_API_KEY is used; other servers get no key unless given one.
	APIKey string
	// Model names the model. Default: DefaultModel. Groq:
	// "whisper-large-v3-turbo"; Speaches: "Systran/faster-whisper-small".
	Model string
	// Language, a BCP 47 tag ("en", "en-US"), is sent as its ISO 639-1
	// part. Default: the utterance's language, else none (detected).
	Language string
	// Prompt, when set, guides the model (spellings, context).
	Prompt string
	// ResponseFormat is "json" (default), "verbose_json" (adds the
	// detected language; whisper-1 and most local servers) or "text".
	ResponseFormat string
	// Temperature, when set, is sent as is.
	Temperature *float64
	// Extra form fields, sent as is.
	Extra map[string]string
	// Header holds extra request headers.
	Header http.Header
	// HTTP holds the HTTP client (default: one with a 60 s overall
	// timeout whose dials and TLS handshakes are bounded by
	// Timeouts.Connect), the bounds and the retries. Timeouts bound
	// connecting, the wait from the connection to the first byte of the
	// answer (the upload and the transcription) and the silence between
	// two reads of the answer (defaults: upstream's SpeechTimeouts, 10s,
	// 10s, 20s). A server that accepts and never answers fails the request
	// with a transient *upstream.TimeoutError such as "openai stt: no first
	// byte within 10s", and the request is closed; timeouts are not
	// retried. A failed request (connection error, HTTP 429 or 5xx) is
	// retried MaxRetries times (default 2), after RetryBackoff (default
	// 250ms, doubled after each, up to 4s; a Retry-After header wins).
	upstream.HTTP
}

// Client transcribes utterances through /audio/transcriptions. It
// implements stt.Transcriber and is safe for concurrent use.
type Client struct {
	opts   Options
	url    string
	header http.Header
}

var _ stt.Transcriber = (*Client)(nil)

// New returns a client for o, filling unset options with the defaults.
func New(o Options) *Client {
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	if o.APIKey == "" && o.BaseURL == DefaultBaseURL {
		o.APIKey = os.Getenv("OPENAI_API_KEY")
	}
	if o.Model == "" {
		o.Model = DefaultModel
	}
	if o.ResponseFormat == "" {
		o.ResponseFormat = "json"
	}
	if o.HTTPClient == nil {
		t := o.Timeouts.Or(llmhttp.SpeechTimeouts())
		o.HTTPClient = &http.Client{Timeout: 60 * time.Second, Transport: llmhttp.Transport(t)}
	}
	o.HTTP = llmhttp.Resolve(o.HTTP, llmhttp.SpeechTimeouts(), 250*time.Millisecond)
	// The caller's headers first; the fixed ones win. Content-Type is set
	// per request (the form's boundary).
	h := http.Header{}
	for k, vs := range o.Header {
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	if o.APIKey != "" {
		h.Set("Authorization", "Bearer "+o.APIKey)
	}
	return &Client{opts: o, url: o.BaseURL + "/audio/transcriptions", header: h}
}

// Model implements [frames.Modeler].
func (c *Client) Model() string { return c.opts.Model }

// maxBackoff caps the wait between retries.
const maxBackoff = 4 * time.Second

// maxAnswer bounds the answer read.
const maxAnswer = 4 << 20

// Transcribe implements stt.Transcriber: it uploads u as a WAV file and
// returns the text and, when the server reports it, the language.
func (c *Client) Transcribe(ctx context.Context, u stt.Utterance) (stt.Result, error) {
	if u.SampleRate <= 0 || u.Channels <= 0 {
		return stt.Result{}, fmt.Errorf("openai stt: utterance without a format (%d Hz, %d channels)", u.SampleRate, u.Channels)
	}
	body, ctype, err := c.form(u)
	if err != nil {
		return stt.Result{}, err
	}
	resp, err := c.send(ctx, body, ctype)
	if err != nil {
		return stt.Result{}, err
	}
	defer resp.Close()
	raw, err := io.ReadAll(io.LimitReader(resp, maxAnswer))
	if err != nil {
		var te *llmhttp.TimeoutError
		if errors.As(err, &te) || ctx.Err() != nil {
			return stt.Result{}, err
		}
		return stt.Result{}, fmt.Errorf("openai stt: reading the answer: %w", err)
	}
	return parseAnswer(resp.ContentType(), raw)
}

// form builds the multipart body.
func (c *Client) form(u stt.Utterance) ([]byte, string, error) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="audio.wav"`)
	h.Set("Content-Type", "audio/wav")
	part, err := w.CreatePart(h)
	if err != nil {
		return nil, "", fmt.Errorf("openai stt: building the form: %w", err)
	}
	if _, err := part.Write(dsp.AppendWAV(nil, u.PCM, u.SampleRate, u.Channels)); err != nil {
		return nil, "", fmt.Errorf("openai stt: building the form: %w", err)
	}
	fields := [][2]string{{"model", c.opts.Model}, {"response_format", c.opts.ResponseFormat}}
	lang := c.opts.Language
	if lang == "" {
		lang = u.Language
	}
	if lang = isoLanguage(lang); lang != "" {
		fields = append(fields, [2]string{"language", lang})
	}
	if c.opts.Prompt != "" {
		fields = append(fields, [2]string{"prompt", c.opts.Prompt})
	}
	if c.opts.Temperature != nil {
		fields = append(fields, [2]string{"temperature", strconv.FormatFloat(*c.opts.Temperature, 'f', -1, 64)})
	}
	for k, v := range c.opts.Extra {
		fields = append(fields, [2]string{k, v})
	}
	for _, f := range fields {
		if err := w.WriteField(f[0], f[1]); err != nil {
			return nil, "", fmt.Errorf("openai stt: building the form: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", fmt.Errorf("openai stt: building the form: %w", err)
	}
	return b.Bytes(), w.FormDataContentType(), nil
}

// send posts the form, retrying transient failures.
func (c *Client) send(ctx context.Context, body []byte, ctype string) (*llmhttp.Body, error) {
	h := c.header.Clone()
	h.Set("Content-Type", ctype)
	return llmhttp.Send(ctx, &llmhttp.Request{
		Provider: "openai stt", Client: c.opts.HTTPClient, URL: c.url, Header: h, Body: body,
		Retries: c.opts.MaxRetries, Backoff: c.opts.RetryBackoff, MaxBackoff: maxBackoff,
		Timeouts: c.opts.Timeouts,
		Failed:   func(resp *http.Response) error { return readAPIError(resp) },
	})
}

// parseAnswer reads a transcription answer: a JSON object with "text" (and
// "language" in verbose_json), or plain text.
func parseAnswer(ctype string, raw []byte) (stt.Result, error) {
	mt, _, _ := mime.ParseMediaType(ctype)
	trimmed := bytes.TrimSpace(raw)
	if mt == "text/plain" || (mt != "application/json" && len(trimmed) > 0 && trimmed[0] != '{') {
		if !utf8.Valid(raw) {
			return stt.Result{}, fmt.Errorf("openai stt: the answer is not UTF-8 text")
		}
		return stt.Result{Text: strings.TrimSpace(string(raw))}, nil
	}
	var ans struct {
		Text     *string `json:"text"`
		Language string  `json:"language"`
	}
	if err := json.Unmarshal(trimmed, &ans); err != nil {
		return stt.Result{}, fmt.Errorf("openai stt: bad answer %s: %w", openaiapi.Clip(string(trimmed), 120), err)
	}
	if ans.Text == nil {
		if e := parseAPIError(http.StatusOK, trimmed); e.Message != "" {
			return stt.Result{}, e
		}
		return stt.Result{}, fmt.Errorf("openai stt: answer without text: %s", openaiapi.Clip(string(trimmed), 120))
	}
	return stt.Result{Text: strings.TrimSpace(*ans.Text), Language: languageTag(ans.Language)}, nil
}

// isoLanguage turns a BCP 47 tag into the ISO 639-1 code the API takes.
func isoLanguage(tag string) string {
	tag = strings.TrimSpace(tag)
	if i := strings.IndexAny(tag, "-_"); i > 0 {
		tag = tag[:i]
	}
	return strings.ToLower(tag)
}

// whisperLanguages maps the language names of verbose_json to BCP 47.
var whisperLanguages = map[string]string{
	"english": "en", "spanish": "es", "french": "fr", "german": "de", "italian": "it",
	"portuguese": "pt", "dutch": "nl", "russian": "ru", "chinese": "zh", "japanese": "ja",
	"korean": "ko", "arabic": "ar", "hindi": "hi", "turkish": "tr", "polish": "pl",
	"swedish": "sv", "danish": "da", "norwegian": "no", "finnish": "fi", "greek": "el",
	"czech": "cs", "ukrainian": "uk", "hebrew": "he", "indonesian": "id", "vietnamese": "vi",
	"thai": "th", "romanian": "ro", "hungarian": "hu", "catalan": "ca", "malay": "ms",
	"tamil": "ta", "bengali": "bn", "persian": "fa", "urdu": "ur", "tagalog": "tl",
}

// languageTag turns a reported language (a code or a Whisper name) into a
// BCP 47 tag.
func languageTag(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if tag, ok := whisperLanguages[strings.ToLower(s)]; ok {
		return tag
	}
	return s
}

// APIError is an error answer from the server.
type APIError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Message, Type, Code and Param come from OpenAI's error object (or a
	// FastAPI server's detail).
	Message, Type, Code, Param string
	// Body is the start of the body when it was not an error object.
	Body string
}

// Error implements error.
func (e *APIError) Error() string {
	return openaiapi.Error(*e).Describe("openai stt", "")
}

// Category implements [frames.Categorizer]: 429 and 5xx are transient; 401 and
// 403 are permanent.
func (e *APIError) Category() frames.ErrorCategory {
	return openaiapi.Category(e.StatusCode, true)
}

// errorParse reads OpenAI error objects and FastAPI details (Speaches),
// validation errors included.
var errorParse = openaiapi.Parse{Detail: openaiapi.DetailText}

// readAPIError reads and closes an error answer.
func readAPIError(resp *http.Response) *APIError {
	e := APIError(errorParse.Read(resp))
	return &e
}

// parseAPIError reads an error body.
func parseAPIError(status int, raw []byte) *APIError {
	e := APIError(errorParse.Parse(status, raw))
	return &e
}
