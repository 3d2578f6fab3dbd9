// Command fakerealtime is a stand-in for the OpenAI Realtime API on the
// loopback interface, for the ui-agent demo's browser test in Realtime mode
// (realtime.test.mjs). It speaks the GA interface's WebSocket events as the
// API reference documents them (platform.openai.com/docs/api-reference/realtime:
// client events session.update, conversation.item.create/delete/truncate,
// input_audio_buffer.append/commit/clear, response.create/cancel; server
// events session.created/updated, conversation.item.added/done,
// response.created, response.output_item.added/done,
// response.output_audio.delta/done, response.output_audio_transcript.delta/done,
// response.function_call_arguments.delta/done, response.done, error), and
// behaves as a model that follows the demo's instructions:
//
//   - a response.create whose instructions end in a text to say word for
//     word (the UI agent's answers, the greeting) is spoken: its transcript
//     in word deltas, with 60 ms of tone per word as audio;
//   - any other response answers the conversation's last user message with
//     one call of the "reply" tool, whose answer is "You said: <message>";
//   - a response.create while a response runs is refused with the error the
//     service sends (conversation_already_has_active_response), which the
//     client must never provoke: the count is logged at the end.
//
// It prints "fakerealtime listening on http://127.0.0.1:PORT/v1" once
// ready; the demo takes that as OPENAI_BASE_URL. It knows nothing of
// framewire.
package main

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	var refusals atomic.Int64
	srv := &http.Server{Handler: handler(&refusals), ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop) // a second signal kills the process
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Printf("fakerealtime listening on http://%s/v1\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
	fmt.Printf("fakerealtime: %d refused response.create\n", refusals.Load())
}

func handler(refusals *atomic.Int64) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/realtime", func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			http.Error(w, `{"error":{"type":"invalid_request_error","code":"missing_api_key","message":"no key"}}`, http.StatusUnauthorized)
			return
		}
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ws.SetReadLimit(1 << 20)
		s := &session{ws: ws, ctx: r.Context(), model: r.URL.Query().Get("model"), refusals: refusals}
		s.run()
	})
	return mux
}

// session is one connection: one server session with its conversation.
type session struct {
	ws       *websocket.Conn
	ctx      context.Context
	model    string
	refusals *atomic.Int64

	mu       sync.Mutex // guards what the response goroutine shares
	seq      int
	active   string             // the response running
	cancel   context.CancelFunc // cancels it
	lastUser string             // the conversation's last user message
	wg       sync.WaitGroup
}

func (s *session) id(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("%s_%d", prefix, s.seq)
}

func (s *session) send(v any) {
	b, _ := json.Marshal(v)
	_ = s.ws.Write(s.ctx, websocket.MessageText, b)
}

type obj = map[string]any

func (s *session) run() {
	defer s.wg.Wait()
	s.send(obj{"type": "session.created", "event_id": s.id("event"), "session": obj{
		"object": "realtime.session", "type": "realtime", "id": s.id("sess"), "model": s.model, "output_modalities": []string{"audio"}}})
	for {
		_, data, err := s.ws.Read(s.ctx)
		if err != nil {
			s.mu.Lock()
			if s.cancel != nil {
				s.cancel()
			}
			s.mu.Unlock()
			return
		}
		var ev struct {
			Type     string          `json:"type"`
			EventID  string          `json:"event_id"`
			Session  json.RawMessage `json:"session"`
			ItemID   string          `json:"item_id"`
			Item     json.RawMessage `json:"item"`
			Response *struct {
				Instructions string `json:"instructions"`
			} `json:"response"`
		}
		if err := json.Unmarshal(data, &ev); err != nil || ev.Type == "" {
			s.send(obj{"type": "error", "event_id": s.id("event"), "error": obj{"type": "invalid_request_error", "code": "invalid_json", "message": "not a JSON event", "param": nil, "event_id": nil}})
			continue
		}
		switch ev.Type {
		case "session.update":
			s.send(obj{"type": "session.updated", "event_id": s.id("event"), "session": json.RawMessage(ev.Session)})
		case "input_audio_buffer.append":
		case "input_audio_buffer.commit":
			s.send(obj{"type": "error", "event_id": s.id("event"), "error": obj{"type": "invalid_request_error", "code": "input_audio_buffer_commit_empty",
				"message": "Error committing input audio buffer: buffer too small.", "param": nil, "event_id": nilIfEmpty(ev.EventID)}})
		case "conversation.item.create":
			s.itemCreated(ev.Item)
		case "conversation.item.delete":
			s.send(obj{"type": "conversation.item.deleted", "event_id": s.id("event"), "item_id": ev.ItemID})
		case "conversation.item.truncate":
			s.send(obj{"type": "conversation.item.truncated", "event_id": s.id("event"), "item_id": ev.ItemID, "content_index": 0})
		case "response.cancel":
			s.mu.Lock()
			if s.cancel != nil {
				s.cancel()
			}
			s.mu.Unlock()
		case "response.create":
			instr := ""
			if ev.Response != nil {
				instr = ev.Response.Instructions
			}
			s.respond(ev.EventID, instr)
		}
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// itemCreated records a user message and confirms the item.
func (s *session) itemCreated(raw json.RawMessage) {
	var it struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(raw, &it)
	if it.ID == "" {
		it.ID = s.id("item")
	}
	if it.Type == "message" && it.Role == "user" && len(it.Content) > 0 && !strings.HasPrefix(it.Content[0].Text, "<ui_") {
		s.mu.Lock()
		s.lastUser = it.Content[0].Text
		s.mu.Unlock()
	}
	var item obj
	_ = json.Unmarshal(raw, &item)
	if item == nil {
		item = obj{}
	}
	item["id"] = it.ID
	s.send(obj{"type": "conversation.item.added", "event_id": s.id("event"), "previous_item_id": nil, "item": item})
	s.send(obj{"type": "conversation.item.done", "event_id": s.id("event"), "previous_item_id": nil, "item": item})
}

// respond starts a response, or refuses one while another runs.
func (s *session) respond(clientEventID, instructions string) {
	s.mu.Lock()
	if s.active != "" {
		active := s.active
		s.mu.Unlock()
		s.refusals.Add(1)
		msg := "Conversation already has an active response in progress: " + active + ". Wait until the response is finished before creating a new one."
		s.send(obj{"type": "error", "event_id": s.id("event"), "error": obj{"type": "invalid_request_error",
			"code": "conversation_already_has_active_response", "message": msg, "param": nil, "event_id": nilIfEmpty(clientEventID)}})
		return
	}
	s.seq++
	id := fmt.Sprintf("resp_%d", s.seq)
	ctx, cancel := context.WithCancel(s.ctx)
	s.active, s.cancel = id, cancel
	user := s.lastUser
	s.mu.Unlock()
	s.send(obj{"type": "response.created", "event_id": s.id("event"), "response": obj{"object": "realtime.response", "id": id, "status": "in_progress", "output": []any{}}})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		var output []any
		status := "completed"
		if _, say, ok := strings.Cut(instructions, "word for word"); ok {
			_, text, _ := strings.Cut(say, "\n\n")
			output, status = s.speak(ctx, id, strings.TrimSpace(text))
		} else {
			output = s.reply(id, user)
		}
		s.mu.Lock()
		s.active, s.cancel = "", nil
		s.mu.Unlock()
		cancel()
		s.send(obj{"type": "response.done", "event_id": s.id("event"), "response": obj{"object": "realtime.response", "id": id, "status": status,
			"output": output, "usage": obj{"total_tokens": 30, "input_tokens": 20, "output_tokens": 10}}})
	}()
}

// speak streams text as the model's audio and its transcript.
func (s *session) speak(ctx context.Context, resp, text string) ([]any, string) {
	item := s.id("item")
	s.send(obj{"type": "response.output_item.added", "event_id": s.id("event"), "response_id": resp, "output_index": 0,
		"item": obj{"id": item, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
	words := strings.Fields(text)
	for i, w := range words {
		if ctx.Err() != nil {
			return []any{obj{"id": item, "type": "message", "status": "incomplete", "role": "assistant"}}, "cancelled"
		}
		if i > 0 {
			w = " " + w
		}
		s.send(obj{"type": "response.output_audio_transcript.delta", "event_id": s.id("event"), "response_id": resp, "item_id": item,
			"output_index": 0, "content_index": 0, "delta": w})
		s.send(obj{"type": "response.output_audio.delta", "event_id": s.id("event"), "response_id": resp, "item_id": item,
			"output_index": 0, "content_index": 0, "delta": tone60ms})
		time.Sleep(20 * time.Millisecond) // faster than real time, as the service streams
	}
	s.send(obj{"type": "response.output_audio.done", "event_id": s.id("event"), "response_id": resp, "item_id": item, "output_index": 0, "content_index": 0})
	s.send(obj{"type": "response.output_audio_transcript.done", "event_id": s.id("event"), "response_id": resp, "item_id": item,
		"output_index": 0, "content_index": 0, "transcript": text})
	done := obj{"id": item, "type": "message", "status": "completed", "role": "assistant",
		"content": []any{obj{"type": "output_audio", "transcript": text}}}
	s.send(obj{"type": "response.output_item.done", "event_id": s.id("event"), "response_id": resp, "output_index": 0, "item": done})
	return []any{done}, "completed"
}

// reply answers the last user message with one reply call.
func (s *session) reply(resp, user string) []any {
	item, call := s.id("item"), s.id("call")
	args, _ := json.Marshal(obj{"answer": "You said: " + user})
	s.send(obj{"type": "response.output_item.added", "event_id": s.id("event"), "response_id": resp, "output_index": 0,
		"item": obj{"id": item, "type": "function_call", "status": "in_progress", "name": "reply", "call_id": call, "arguments": ""}})
	s.send(obj{"type": "response.function_call_arguments.delta", "event_id": s.id("event"), "response_id": resp, "item_id": item,
		"output_index": 0, "call_id": call, "delta": string(args)})
	s.send(obj{"type": "response.function_call_arguments.done", "event_id": s.id("event"), "response_id": resp, "item_id": item,
		"output_index": 0, "call_id": call, "name": "reply", "arguments": string(args)})
	done := obj{"id": item, "type": "function_call", "status": "completed", "name": "reply", "call_id": call, "arguments": string(args)}
	s.send(obj{"type": "response.output_item.done", "event_id": s.id("event"), "response_id": resp, "output_index": 0, "item": done})
	return []any{done}
}

// tone60ms is 60 ms of a 440 Hz tone, PCM16 at 24 kHz, in base64.
var tone60ms = func() string {
	b := make([]byte, 2*1440)
	for i := range 1440 {
		v := int16(6000 * math.Sin(2*math.Pi*440*float64(i)/24000))
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
	}
	return base64.StdEncoding.EncodeToString(b)
}()
