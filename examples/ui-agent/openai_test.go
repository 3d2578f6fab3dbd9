package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
)

// With OPENAI_BASE_URL the demo talks to an OpenAI-compatible server: a
// local fake here, streaming one reply tool call the way the API does.
// The request offers both tools and carries the page; the call's actions
// reach the page as ui-commands and its answer as bot text.
func TestOpenAIBrainDrivesThePage(t *testing.T) {
	var mu sync.Mutex
	var requests []map[string]any
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		if err := json.Unmarshal(body, &req); err != nil || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		requests = append(requests, req)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		args := `{"answer":"It's in row 5, column 2.","scroll_to":"e62","highlight":["e62"]}`
		chunk := func(delta string) string {
			return `data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-test","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
		}
		q, _ := json.Marshal(args[:20])
		rest, _ := json.Marshal(args[20:])
		fmt.Fprint(w, chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"reply","arguments":`+string(q)+`}}]}`))
		fmt.Fprint(w, chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+string(rest)+`}}]}`))
		fmt.Fprint(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer fake.Close()

	env := map[string]string{"OPENAI_BASE_URL": fake.URL + "/v1", "OPENAI_API_KEY": "sk-test", "OPENAI_MODEL": "gpt-test"}
	b := &bot{brain: chooseBrain(func(k string) string { return env[k] }), log: zap.NewNop(), researchStep: time.Second}
	if b.brain.Kind != "openai" || b.brain.Label != "gpt-test" {
		t.Fatalf("brain = %+v, want the OpenAI-compatible client for gpt-test", b.brain)
	}
	out := &sink{news: make(chan struct{}, 1)}
	task := mustBuild(t, b, out)
	done := make(chan error, 1)
	go func() { done <- task.Run(t.Context()) }()
	defer func() { task.EndWhenDone(); <-done }()

	from := 0
	task.QueueFrame(clientMessage(t, "client-ready", map[string]any{"version": "2.1.0"}))
	out.waitFor(t, &from, "bot-ready", typed("bot-ready"))
	task.QueueFrame(clientMessage(t, "ui-snapshot", map[string]any{"tree": snapshot(t, "top")}))
	task.QueueFrame(clientMessage(t, "send-text", map[string]any{"content": "where is the iPhone 17?"}))
	if p := dataOf(out.waitFor(t, &from, "scroll_to", command("scroll_to")))["payload"].(map[string]any); p["ref"] != "e62" {
		t.Errorf("scroll_to = %v", p)
	}
	out.waitFor(t, &from, "highlight", command("highlight"))
	var answer strings.Builder
	for !strings.Contains(answer.String(), "column 2.") {
		answer.WriteString(dataOf(out.waitFor(t, &from, "bot-llm-text", typed("bot-llm-text")))["text"].(string))
	}

	mu.Lock()
	defer mu.Unlock()
	if len(requests) != 1 {
		t.Fatalf("%d requests, want 1 (reply ends the turn without a re-run)", len(requests))
	}
	req := requests[0]
	var tools []string
	for _, tl := range req["tools"].([]any) {
		tools = append(tools, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	if strings.Join(tools, ",") != "reply,research" || req["model"] != "gpt-test" {
		t.Errorf("request model %v tools %v, want gpt-test with reply and research", req["model"], tools)
	}
	msgs := req["messages"].([]any)
	var roles []string
	pages, queries := 0, 0
	for _, m := range msgs {
		mm := m.(map[string]any)
		c, _ := mm["content"].(string)
		roles = append(roles, fmt.Sprint(mm["role"]))
		if mm["role"] == "user" && strings.HasPrefix(c, "<ui_state>") {
			pages++
		}
		if mm["role"] == "user" && c == "where is the iPhone 17?" {
			queries++
		}
	}
	if pages != 1 || queries != 1 || roles[0] != "system" {
		t.Errorf("messages %v: want the system prompt first, one <ui_state> and the query", roles)
	}
}
