package uiagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/anthropic"
	"github.com/framewire/framewire/processors/llm/gemini"
	"github.com/framewire/framewire/processors/llm/openai"
	"github.com/framewire/framewire/processors/uiagent"
)

// The UI agent's reply tool through every cascaded LLM API framewire
// speaks, in process: the real client of each API talks to a fake server
// on loopback that answers in that API's streaming shape. The fake reads
// the page from the <ui_state> its request carries, finds the elements by
// their accessible names, as a model does, and calls the reply tool once
// per user turn: a pointing turn (scroll to the submit button and
// highlight it) and a form-fill turn (two inputs and a checkbox). The page
// must not be able to tell the APIs apart: the RTVI messages on the wire
// are those of the OpenAI run, message for message.
func TestReplyToolThroughAllProviders(t *testing.T) {
	// Stateless (the default) sends each turn the preamble, the screen and
	// the words; KeepHistory also sends the first turn's reply call and
	// its result in the second, in each API's shape, which the fakes check
	// as the APIs do.
	for _, history := range []struct {
		name string
		mode uiagent.History
		// results are how many tool results each turn's request carries.
		results []int
	}{
		{"stateless", uiagent.Stateless, []int{0, 0}},
		{"keep-history", uiagent.KeepHistory, []int{0, 1}},
	} {
		t.Run(history.name, func(t *testing.T) {
			runs := map[string][]map[string]any{}
			for _, api := range providerAPIs {
				t.Run(api.name, func(t *testing.T) {
					runs[api.name] = replyTurns(t, api, uiagent.Options{History: history.mode}, history.results)
				})
			}
			ref, ok := runs["openai"]
			if !ok {
				t.Fatal("no OpenAI run to compare with")
			}
			for _, api := range providerAPIs[1:] {
				if got, ok := runs[api.name]; ok { // else its subtest failed and says why
					if d := cmp.Diff(ref, got); d != "" {
						t.Errorf("RTVI messages on the wire, OpenAI (-) and %s (+):\n%s", api.name, d)
					}
				}
			}
		})
	}
}

// replyTurns plays providerTurns through a voice agent on api and checks
// what the page, the user and the fake API got; it returns the RTVI
// messages on the wire, normalized.
func replyTurns(t *testing.T, api fakeAPI, o uiagent.Options, results []int) []map[string]any {
	fake := startFakeAPI(t, api)
	defer func() {
		if t.Failed() { // say what the fake model was sent and did
			for i, r := range fake.requests() {
				t.Logf("the fake %s API's request %d: %d system texts, tools %q, %d tool results, replied %t; its last user turn:\n%s",
					api.name, i+1, len(r.Turn.System), r.Turn.Tools, r.Turn.Results, r.Replied, strings.Join(r.Turn.Tail, "\n---\n"))
			}
			t.Logf("the fake %s API refused: %q", api.name, fake.errors())
		}
	}()
	tts := &voice{}
	v, err := uiagent.NewVoiceAgent(uiagent.VoiceAgentOptions{
		Provider:     api.client(fake.srv.URL),
		SystemPrompt: providerPrompt,
		TTS:          tts,
		Agent:        o,
	})
	if err != nil {
		t.Fatal(err)
	}
	procs := v.Processors(pipeline.PassThrough{}, pipeline.PassThrough{})
	s := startSession(t, v.RTVI(), procs[2:]...)

	s.send("client-ready", "r1", map[string]any{"version": "2.1.0", "about": map[string]any{"library": "test"}})
	s.waitMsgs("bot-ready", count("bot-ready", 1))
	commands := 0
	for i, turn := range providerTurns {
		s.send("ui-snapshot", fmt.Sprintf("s%d", i+1), map[string]any{"tree": json.RawMessage(turn.page)})
		s.send("send-text", fmt.Sprintf("t%d", i+1), map[string]any{"content": turn.words, "options": map[string]any{}})
		commands += len(turn.commands)
		tts.wait(t, i+1)
		s.waitMsgs(turn.name+" commands", count("ui-command", commands))
		s.waitMsgs(turn.name+" answer played", count("bot-stopped-speaking", i+1))
		s.waitMsgs(turn.name+" reply settled", count("llm-function-call-stopped", i+1))
	}
	msgs := s.endAndCollect(t)

	var wantCommands []map[string]any
	var wantSpoken []string
	for _, turn := range providerTurns {
		wantCommands = append(wantCommands, turn.commands...)
		wantSpoken = append(wantSpoken, turn.answer)
	}
	if d := cmp.Diff(wantCommands, ofType(msgs, "ui-command")); d != "" {
		t.Errorf("ui-command messages (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantSpoken, tts.said()); d != "" {
		t.Errorf("spoken (-want +got):\n%s", d)
	}
	var played []string
	for _, m := range ofType(msgs, "bot-tts-text") {
		played = append(played, m["data"].(map[string]any)["text"].(string))
	}
	if d := cmp.Diff(wantSpoken, played); d != "" {
		t.Errorf("bot-tts-text (-want +got):\n%s", d)
	}

	// What the fake model was sent: one request per user turn (the reply
	// ends the turn, so no tool result runs it again), each with the
	// system prompt and the guide, declaring the reply tool once in the
	// API's own shape, and carrying that turn's screen right before the
	// user's words.
	var want []seenRequest
	for i, turn := range providerTurns {
		want = append(want, seenRequest{
			Turn: seenTurn{
				System:  []string{providerPrompt, uiagent.DefaultPromptGuide},
				Tools:   []string{uiagent.ReplyToolName},
				Results: results[i],
				Tail:    []string{uiagent.RenderUIState(mustSnapshot(t, turn.page)), turn.words},
			},
			Replied: true,
		})
	}
	if errs := fake.errors(); len(errs) > 0 {
		t.Errorf("the fake %s API refused requests: %q", api.name, errs)
	}
	if d := cmp.Diff(want, fake.requests()); d != "" {
		t.Errorf("what the %s API was sent (-want +got):\n%s", api.name, d)
	}
	return normalizeWire(msgs)
}

const providerPrompt = "You help the user with the application form."

// providerTurn is one user turn of the test: the page the client shows,
// what the user says, and what the page and the user must get back.
type providerTurn struct {
	name     string
	page     string // the ui-snapshot tree sent before the words
	words    string
	answer   string           // spoken
	commands []map[string]any // the ui-command messages, in order
}

// uiCommand is a ui-command message as it leaves the RTVI processor.
func uiCommand(command, payload string) map[string]any {
	var v map[string]any
	if err := json.Unmarshal([]byte(`{"label":"rtvi-ai","type":"ui-command","data":{"command":"`+command+`","payload":`+payload+`}}`), &v); err != nil {
		panic(err)
	}
	return v
}

// pageScrolled is pageTree after the pointing turn: the submit button is
// on screen now and the heading scrolled away.
const pageScrolled = `{"root":{"ref":"e1","role":"generic","children":[
 {"ref":"e2","role":"heading","name":"Application form","level":1,"state":["offscreen"]},
 {"ref":"","role":"text","name":"First name"},
 {"ref":"e3","role":"textbox","name":"First name"},
 {"ref":"e4","role":"textbox","name":"Email","value":"old@example.com"},
 {"ref":"e5","role":"checkbox","name":"I agree to the terms"},
 {"ref":"e6","role":"button","name":"Submit application"}
]},"captured_at":1752494401000}`

var providerTurns = []providerTurn{
	{
		name:   "pointing",
		page:   pageTree,
		words:  "Where do I submit it?",
		answer: "With this button.",
		commands: []map[string]any{
			uiCommand("scroll_to", `{"ref":"e6","target_id":null,"behavior":null}`),
			uiCommand("highlight", `{"ref":"e6","target_id":null,"duration_ms":null}`),
		},
	},
	{
		name:   "form-fill",
		page:   pageScrolled,
		words:  "My name is Mark, mark at daily dot co. Agree to the terms.",
		answer: "Done: I filled in your name and email and agreed to the terms.",
		commands: []map[string]any{
			uiCommand("set_input_value", `{"value":"Mark","ref":"e3","target_id":null,"replace":true}`),
			uiCommand("set_input_value", `{"value":"mark@daily.co","ref":"e4","target_id":null,"replace":true}`),
			uiCommand("click", `{"ref":"e5","target_id":null}`),
		},
	},
}

// replyArgs are the reply tool's arguments as a model writes them.
type replyArgs struct {
	Answer    string      `json:"answer"`
	ScrollTo  string      `json:"scroll_to,omitempty"`
	Highlight []string    `json:"highlight,omitempty"`
	Fills     []replyFill `json:"fills,omitempty"`
	Click     []string    `json:"click,omitempty"`
}

type replyFill struct {
	Ref   string `json:"ref"`
	Value string `json:"value"`
}

// decide is the fake model: given the screen and the user's words, the
// reply it calls, with the refs it reads off the screen by name.
func decide(state, words string) (replyArgs, error) {
	var missing []string
	ref := func(name string) string {
		r := refOf(state, name)
		if r == "" {
			missing = append(missing, name)
		}
		return r
	}
	var a replyArgs
	switch words {
	case providerTurns[0].words:
		submit := ref("Submit application")
		a = replyArgs{Answer: providerTurns[0].answer, ScrollTo: submit, Highlight: []string{submit}}
	case providerTurns[1].words:
		a = replyArgs{
			Answer: providerTurns[1].answer,
			Fills:  []replyFill{{Ref: ref("First name"), Value: "Mark"}, {Ref: ref("Email"), Value: "mark@daily.co"}},
			Click:  []string{ref("I agree to the terms")},
		}
	default:
		return replyArgs{}, fmt.Errorf("no script for the words %q", words)
	}
	if len(missing) > 0 {
		return replyArgs{}, fmt.Errorf("the screen has no element named %q:\n%s", missing, state)
	}
	return a, nil
}

// refLine is a line of a rendered <ui_state> that names an element with a
// ref: `- role "name" [= "value"] [state]... [ref=eN]`.
var refLine = regexp.MustCompile(`^\s*- \S+ "(.*?)"(?: = ".*")?(?: \[[^\]]*\])* \[ref=([^\]]+)\]:?$`)

// refOf finds the ref of the element named name on a rendered screen.
func refOf(state, name string) string {
	for _, line := range strings.Split(state, "\n") {
		if m := refLine.FindStringSubmatch(line); m != nil && m[1] == name {
			return m[2]
		}
	}
	return ""
}

// voice stands in for the TTS service and the output transport in one:
// it speaks each TTSSpeak as they do together (the TTS starts, the bot
// starts speaking, the text is played, the TTS stops, the bot stops
// speaking) and records it. Being the output transport
// (rtvi.OutputTransport), it is where the RTVI observer reports the played
// text from (bot-output, bot-tts-text); being one processor, it pushes all
// of it in one order, so the messages on the wire do not race.
type voice struct {
	mu     sync.Mutex
	spoken []string
}

// OutputTransport marks voice as the output transport.
func (*voice) OutputTransport() {}

func (v *voice) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	sp, ok := f.(*frames.TTSSpeak)
	if !ok || dir != frames.Downstream {
		return nil
	}
	h.Consume()
	v.mu.Lock()
	v.spoken = append(v.spoken, sp.Text)
	v.mu.Unlock()
	h.Push(&frames.TTSStarted{}, dir)
	pipeline.Broadcast(h.Pusher(), func() *frames.BotStartedSpeaking { return &frames.BotStartedSpeaking{} })
	h.Push(&frames.TTSText{Text: sp.Text, AggregatedBy: "sentence"}, dir)
	h.Push(&frames.TTSStopped{}, dir)
	pipeline.Broadcast(h.Pusher(), func() *frames.BotStoppedSpeaking { return &frames.BotStoppedSpeaking{} })
	return nil
}

func (v *voice) said() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.spoken...)
}

func (v *voice) wait(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(v.said()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("spoken %q, want %d answers", v.said(), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// endAndCollect ends the task gracefully, so that everything queued has
// gone through, and returns the RTVI messages that left it.
func (s *session) endAndCollect(t *testing.T) []map[string]any {
	t.Helper()
	s.task.EndWhenDone()
	select {
	case <-s.task.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the task did not end")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.msgs...)
}

// normalizeWire puts the RTVI messages of a run in a form that is the
// same for every API and every run:
//
//   - What legitimately differs is replaced by its order of appearance:
//     tool call ids (each API names its calls its own way) become call#1,
//     call#2…, and bot-output segment ids (frame ids, which count the
//     frames of the whole test binary) seg#1, seg#2….
//   - A call's llm-function-call-stopped goes last in its turn (before the
//     next turn's bot-interrupted): the UI agent settles the reply's result
//     and speaks its answer from two goroutines, so the result's message
//     comes before, among or after the answer's, with any API (the
//     Realtime test sorts the same pair).
func normalizeWire(msgs []map[string]any) []map[string]any {
	renumber := map[string]func(any) string{"tool_call_id": numbering("call#"), "segment_id": numbering("seg#")}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(v))
			for k, x := range v {
				if n := renumber[k]; n != nil {
					out[k] = n(x)
					continue
				}
				out[k] = walk(x)
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, x := range v {
				out[i] = walk(x)
			}
			return out
		}
		return v
	}
	out := make([]map[string]any, 0, len(msgs))
	var settled []map[string]any
	for _, m := range msgs {
		m := walk(m).(map[string]any)
		switch m["type"] {
		case "llm-function-call-stopped":
			settled = append(settled, m)
			continue
		case "bot-interrupted", "user-llm-text": // a new turn
			out, settled = append(out, settled...), nil
		}
		out = append(out, m)
	}
	return append(out, settled...)
}

// numbering names the distinct values it is given prefix1, prefix2… in
// the order it first sees them.
func numbering(prefix string) func(any) string {
	seen := map[any]string{}
	return func(v any) string {
		if seen[v] == "" {
			seen[v] = fmt.Sprintf("%s%d", prefix, len(seen)+1)
		}
		return seen[v]
	}
}

// seenTurn is what a fake API read from one request, each part from
// where the API carries it: the system prompt, the tools declared, the
// number of tool results (each answering a call of the assistant message
// before it), and the texts of the last user turn (after the last
// assistant message), in order.
type seenTurn struct {
	System  []string
	Tools   []string
	Results int
	Tail    []string
}

// fakeAPI is one LLM API's streaming endpoint, as far as this test needs
// it.
type fakeAPI struct {
	name string
	// path and query are where the client posts; header holds the
	// headers it must send (the credential, the API version).
	path, query string
	header      map[string]string
	// client makes the real client for the fake at base.
	client func(base string) llm.Provider
	// read pulls out of a request body what the fake model acts on. It
	// fails on a body that does not have the API's shape.
	read func(body []byte) (seenTurn, error)
	// callReply streams the n-th answer (from 1), which calls the reply
	// tool with args (JSON), under a call id of its own as the API makes
	// them; answerEmpty streams a plain, empty answer.
	callReply   func(w io.Writer, n int, args string)
	answerEmpty func(w io.Writer)
}

// providerAPIs are the APIs under test, OpenAI first: the reference.
var providerAPIs = []fakeAPI{
	{
		name: "openai", path: "/v1/chat/completions",
		header: map[string]string{"Authorization": "Bearer test"},
		client: func(base string) llm.Provider {
			return openai.New(openai.Options{BaseURL: base + "/v1", APIKey: "test", Model: "gpt-4o-mini"})
		},
		read:        readOpenAI,
		callReply:   openAIReply,
		answerEmpty: openAIEmpty,
	},
	{
		name: "anthropic", path: "/v1/messages",
		header: map[string]string{"X-Api-Key": "test", "Anthropic-Version": "2023-06-01"},
		client: func(base string) llm.Provider {
			return anthropic.New(anthropic.Options{BaseURL: base, APIKey: "test", Model: "claude-sonnet-4-5"})
		},
		read:        readAnthropic,
		callReply:   anthropicReply,
		answerEmpty: anthropicEmpty,
	},
	{
		name: "gemini", path: "/v1beta/models/gemini-2.5-flash:streamGenerateContent", query: "alt=sse",
		header: map[string]string{"X-Goog-Api-Key": "test"},
		client: func(base string) llm.Provider {
			return gemini.New(gemini.Options{BaseURL: base, APIKey: "test", Model: "gemini-2.5-flash"})
		},
		read:        readGemini,
		callReply:   geminiReply,
		answerEmpty: geminiEmpty,
	},
}

// seenRequest is one request a fake answered.
type seenRequest struct {
	Turn    seenTurn
	Replied bool // the fake called the reply tool
}

// runningFake is a fakeAPI listening on loopback.
type runningFake struct {
	srv *httptest.Server

	mu   sync.Mutex
	reqs []seenRequest
	errs []string
}

func startFakeAPI(t *testing.T, api fakeAPI) *runningFake {
	t.Helper()
	f := &runningFake{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			f.fail(w, "reading the request: %v", err)
			return
		}
		if r.Method != http.MethodPost || r.URL.Path != api.path || r.URL.RawQuery != api.query {
			f.fail(w, "unexpected %s %s", r.Method, r.URL)
			return
		}
		for k, want := range api.header {
			if got := r.Header.Get(k); got != want {
				f.fail(w, "%s is %q, want %q", k, got, want)
				return
			}
		}
		seen, err := api.read(body)
		if err != nil {
			f.fail(w, "%v in %s", err, body)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		f.mu.Lock()
		f.reqs = append(f.reqs, seenRequest{Turn: seen})
		n := len(f.reqs)
		f.mu.Unlock()
		// A user turn ends in the user's words, right after the screen.
		tail := seen.Tail
		if len(tail) < 2 || !strings.HasPrefix(tail[len(tail)-2], "<ui_state>") {
			api.answerEmpty(w)
			return
		}
		args, err := decide(tail[len(tail)-2], tail[len(tail)-1])
		if err != nil {
			f.fail(w, "%v", err)
			return
		}
		b, err := json.Marshal(args)
		if err != nil {
			f.fail(w, "%v", err)
			return
		}
		f.mu.Lock()
		f.reqs[n-1].Replied = true
		f.mu.Unlock()
		api.callReply(w, n, string(b))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *runningFake) fail(w http.ResponseWriter, format string, args ...any) {
	f.mu.Lock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
	f.mu.Unlock()
	http.Error(w, `{"error":{"message":"the fake cannot answer this request"}}`, http.StatusBadRequest)
}

func (f *runningFake) requests() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.reqs...)
}

func (f *runningFake) errors() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.errs...)
}

// sse writes one server-sent event (event may be empty) and flushes it.
func sse(w io.Writer, event string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
}

// halves splits s in two, as a model streams arguments in pieces.
func halves(s string) (string, string) { return s[:len(s)/2], s[len(s)/2:] }

// OpenAI Chat Completions: messages with roles system, developer, user,
// assistant and tool; tools [{type: function, function: {name,
// parameters}}]; the answer as chat.completion.chunk events with
// tool_calls deltas, then [DONE].

func readOpenAI(body []byte) (seenTurn, error) {
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil || !req.Stream {
		return seenTurn{}, fmt.Errorf("not a streaming chat completion request (%v)", err)
	}
	var seen seenTurn
	for _, tl := range req.Tools {
		if tl.Type != "function" || !isObject(tl.Function.Parameters) {
			return seenTurn{}, fmt.Errorf("tool %q is not {type: function, function: {name, parameters}}", tl.Function.Name)
		}
		seen.Tools = append(seen.Tools, tl.Function.Name)
	}
	var calls []string // tool calls not answered yet
	for i, m := range req.Messages {
		// As the API does, refuse an assistant message with tool calls
		// that tool messages do not answer right after it.
		if m.Role == "tool" {
			if len(calls) == 0 || calls[0] != m.ToolCallID {
				return seenTurn{}, fmt.Errorf("message %d answers the tool call %q, want one of %q", i, m.ToolCallID, calls)
			}
			calls = calls[1:]
			seen.Results++
			continue
		}
		if len(calls) > 0 {
			return seenTurn{}, fmt.Errorf("message %d (%s) comes before the results of the tool calls %q", i, m.Role, calls)
		}
		switch m.Role {
		case "system":
			var text string
			if err := json.Unmarshal(m.Content, &text); err != nil {
				return seenTurn{}, fmt.Errorf("system content is not a string: %s", m.Content)
			}
			seen.System = append(seen.System, text)
		case "assistant":
			seen.Tail = nil
			for _, c := range m.ToolCalls {
				calls = append(calls, c.ID)
			}
		case "user":
			var text string
			if err := json.Unmarshal(m.Content, &text); err != nil {
				return seenTurn{}, fmt.Errorf("%s content is not a string: %s", m.Role, m.Content)
			}
			// The screen is a user message of its own (the page is
			// untrusted input, issue 26 row 6), apart from the words.
			if strings.Contains(text, "<ui_state>") && !strings.HasPrefix(text, "<ui_state>") {
				return seenTurn{}, fmt.Errorf("a %s message says %.40q: the screen goes in a message of its own", m.Role, text)
			}
			seen.Tail = append(seen.Tail, text)
		default:
			return seenTurn{}, fmt.Errorf("message %d has role %q", i, m.Role)
		}
	}
	return seen, nil
}

func openAIChunk(w io.Writer, delta any, finish any) {
	sse(w, "", map[string]any{
		"id": "chatcmpl-fw", "object": "chat.completion.chunk", "created": 1764412345, "model": "gpt-4o-mini",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
	})
}

func openAIReply(w io.Writer, n int, args string) {
	first, rest := halves(args)
	openAIChunk(w, map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
		"index": 0, "id": fmt.Sprintf("call_Qm1vW3xYz8aB2cD4eF6gH7j%d", n), "type": "function",
		"function": map[string]any{"name": "reply", "arguments": first},
	}}}, nil)
	openAIChunk(w, map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": rest}}}}, nil)
	openAIChunk(w, map[string]any{}, "tool_calls")
	io.WriteString(w, "data: [DONE]\n\n")
}

func openAIEmpty(w io.Writer) {
	openAIChunk(w, map[string]any{"role": "assistant", "content": ""}, nil)
	openAIChunk(w, map[string]any{}, "stop")
	io.WriteString(w, "data: [DONE]\n\n")
}

// Anthropic Messages: a system prompt apart, messages of roles user and
// assistant only, whose content is blocks (text, tool_use, tool_result);
// tools [{name, description, input_schema}]; the answer as message_start,
// content_block_start {tool_use}, input_json_delta, content_block_stop,
// message_delta {stop_reason}, message_stop.

func readAnthropic(body []byte) (seenTurn, error) {
	var req struct {
		Stream bool `json:"stream"`
		System []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"system"`
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				Text      string `json:"text"`
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
			} `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil || !req.Stream {
		return seenTurn{}, fmt.Errorf("not a streaming Messages request (%v)", err)
	}
	var seen seenTurn
	for _, tl := range req.Tools {
		if !isObject(tl.InputSchema) {
			return seenTurn{}, fmt.Errorf("tool %q has no input_schema object", tl.Name)
		}
		seen.Tools = append(seen.Tools, tl.Name)
	}
	for _, b := range req.System {
		if b.Type != "text" {
			return seenTurn{}, fmt.Errorf("a system block of type %q", b.Type)
		}
		seen.System = append(seen.System, b.Text)
	}
	var calls []string // the tool_use ids of the last assistant message
	for i, m := range req.Messages {
		// As the API does, refuse what it refuses: roles that do not
		// alternate, and a tool_use without its tool_result first thing in
		// the next message.
		if want := [2]string{"user", "assistant"}[i%2]; m.Role != want {
			return seenTurn{}, fmt.Errorf("message %d has role %q: the roles must alternate, user first", i, m.Role)
		}
		if m.Role == "assistant" {
			seen.Tail, calls = nil, nil
			for _, b := range m.Content {
				if b.Type == "tool_use" {
					calls = append(calls, b.ID)
				}
			}
			continue
		}
		var results []string
		for j, b := range m.Content {
			switch b.Type {
			case "text":
				seen.Tail = append(seen.Tail, b.Text)
			case "tool_result":
				if j != len(results) {
					return seenTurn{}, fmt.Errorf("message %d: a tool_result after other blocks", i)
				}
				results = append(results, b.ToolUseID)
				seen.Results++
			}
		}
		if !slices.Equal(results, calls) {
			return seenTurn{}, fmt.Errorf("message %d answers the tool uses %q, want %q", i, results, calls)
		}
		calls = nil
	}
	return seen, nil
}

func anthropicStart(w io.Writer) {
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 472, "output_tokens": 1},
	}})
}

func anthropicStop(w io.Writer, reason string) {
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": reason, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 89}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

func anthropicReply(w io.Writer, n int, args string) {
	anthropicStart(w)
	sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{
		"type": "tool_use", "id": fmt.Sprintf("toolu_01T1x1fJ34qAmk2tNTrN7Up%d", n), "name": "reply", "input": map[string]any{},
	}})
	first, rest := halves(args)
	for _, part := range []string{"", first, rest} {
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
	}
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	anthropicStop(w, "tool_use")
}

func anthropicEmpty(w io.Writer) {
	anthropicStart(w)
	anthropicStop(w, "end_turn")
}

// Gemini streamGenerateContent (alt=sse): the system instruction apart,
// contents of roles user and model whose parts are text, functionCall and
// functionResponse; tools [{functionDeclarations: [{name, parameters}]}];
// the answer as candidates[].content.parts[].functionCall {name, args},
// whole, in one event.

func readGemini(body []byte) (seenTurn, error) {
	var req struct {
		SystemInstruction *struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"systemInstruction"`
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text         *string `json:"text"`
				FunctionCall *struct {
					Name string `json:"name"`
				} `json:"functionCall"`
				FunctionResponse *struct {
					Name string `json:"name"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return seenTurn{}, fmt.Errorf("not a generateContent request (%v)", err)
	}
	var seen seenTurn
	for _, tl := range req.Tools {
		for _, d := range tl.FunctionDeclarations {
			if !isObject(d.Parameters) {
				return seenTurn{}, fmt.Errorf("function %q has no parameters object", d.Name)
			}
			seen.Tools = append(seen.Tools, d.Name)
		}
	}
	if si := req.SystemInstruction; si != nil {
		for _, p := range si.Parts {
			seen.System = append(seen.System, p.Text)
		}
	}
	var calls []string // the functions the last model content called
	for i, c := range req.Contents {
		var called, answered []string
		for j, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				called = append(called, p.FunctionCall.Name)
			case p.FunctionResponse != nil:
				if j != len(answered) {
					return seenTurn{}, fmt.Errorf("content %d: a functionResponse after other parts", i)
				}
				answered = append(answered, p.FunctionResponse.Name)
				seen.Results++
			case p.Text != nil && c.Role == "user":
				seen.Tail = append(seen.Tail, *p.Text)
			}
		}
		switch c.Role {
		case "model":
			seen.Tail, calls = nil, called
		case "user":
			// As the API does, refuse function calls that the next
			// content does not answer, by name and in order.
			if !slices.Equal(answered, calls) {
				return seenTurn{}, fmt.Errorf("content %d answers the calls %q, want %q", i, answered, calls)
			}
			calls = nil
		default:
			return seenTurn{}, fmt.Errorf("a content of role %q, which Gemini does not have", c.Role)
		}
	}
	return seen, nil
}

func geminiChunk(w io.Writer, parts []any) {
	sse(w, "", map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0, "finishReason": "STOP"}},
		"usageMetadata": map[string]any{"promptTokenCount": 60, "candidatesTokenCount": 18, "totalTokenCount": 78},
		"modelVersion":  "gemini-2.5-flash", "responseId": "nq9WaPXbLqGJ1e8P8rWq0Qk",
	})
}

func geminiReply(w io.Writer, _ int, args string) {
	// Gemini sends no call id: the client makes one.
	geminiChunk(w, []any{map[string]any{"functionCall": map[string]any{"name": "reply", "args": json.RawMessage(args)}}})
}

func geminiEmpty(w io.Writer) {
	geminiChunk(w, []any{map[string]any{"text": ""}})
}

func isObject(raw json.RawMessage) bool {
	var m map[string]any
	return json.Unmarshal(raw, &m) == nil && m != nil
}
