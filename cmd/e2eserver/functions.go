package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/llmtest"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/transports/webrtc"
)

// functionsMode (flag -functions) replaces the echo LLM with an
// llm.Service over a scripted model, between the context aggregators, for
// the browser test of client-side function calls (e2e/test/functions.test.mjs).
var functionsMode bool

// The client functions the scripted model can call. slow_client has a
// short timeout, so that a page can answer it too late.
const (
	pageStateTimeout  = 10 * time.Second
	slowClientTimeout = time.Second
)

// newFunctionsPipeline is Input -> RTVI -> user aggregator -> LLM service
// (scripted model) -> Output -> assistant aggregator, with the client
// functions get_page_state and slow_client registered. The model answers
// a user message "call NAME [ARGS]" with a call of NAME (ARGS: a JSON
// object), a request that ends with a tool message with "tool said:
// CONTENT", and anything else with "echo: TEXT". Each request it gets is
// reported as an "llm-request" event with its tool messages.
func newFunctionsPipeline(s *webrtc.Session, log *zap.Logger) (*pipeline.Task, *rtvi.Processor) {
	rp := rtvi.NewProcessor(rtvi.Options{Logger: log, Observer: rtvi.ObserverOptions{Logger: log}})
	svc := llm.NewService(&llmtest.Provider{Respond: scriptedModel(s.ID())}, llm.ServiceOptions{Name: "ScriptedLLM"})
	page := llm.ClientFunction("get_page_state", "The page's title and what the user typed.", json.RawMessage(`{"type":"object","properties":{"field":{"type":"string"}}}`))
	page.Timeout = pageStateTimeout
	slow := llm.ClientFunction("slow_client", "A client function that may answer late.", nil)
	slow.Timeout = slowClientTimeout
	if err := svc.Register(page, slow); err != nil {
		panic(err) // the declarations above are valid by construction
	}
	conv := llm.NewContext()
	conv.SetTools(llm.Tools(page, slow))
	pair := llm.NewPair(conv, llm.PairOptions{})
	task := pipeline.NewTask(pipeline.New(s.Input(), rp, pair.User(), svc, s.Output(), pair.Assistant()),
		pipeline.TaskOptions{Logger: log})
	return task, rp
}

// toolMessage is a tool message of a request, as the "llm-request" event
// reports it.
type toolMessage struct {
	ID      string `json:"id"`
	Content string `json:"content"`
}

// scriptedModel returns the scripted model's answers for one session.
func scriptedModel(session string) func(n int, req *frames.LLMContext) []llm.Event {
	return func(n int, req *frames.LLMContext) []llm.Event {
		tools := []toolMessage{}
		for _, m := range req.Messages {
			if m.Role == llm.RoleTool {
				tools = append(tools, toolMessage{ID: m.ToolCallID, Content: m.Content})
			}
		}
		var last frames.LLMMessage
		if len(req.Messages) > 0 {
			last = req.Messages[len(req.Messages)-1]
		}
		event("llm-request", map[string]any{"session": session, "n": n, "last_role": last.Role, "last": last.Content, "tools": tools})
		switch {
		case last.Role == llm.RoleTool:
			return []llm.Event{llm.TextEvent("tool said: " + last.Content)}
		case last.Role == llm.RoleUser && strings.HasPrefix(last.Content, "call "):
			name, args, _ := strings.Cut(strings.TrimPrefix(last.Content, "call "), " ")
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			return []llm.Event{llm.ToolCallEvent(frames.LLMToolCall{ID: fmt.Sprintf("call_%s_%d", name, n), Name: name, Arguments: args})}
		}
		return []llm.Event{llm.TextEvent("echo: " + last.Content)}
	}
}
