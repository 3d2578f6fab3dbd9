package inspector_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/llmtest"
	"github.com/framewire/framewire/telemetry/inspector"
)

// liveSession runs a text turn in a real pipeline fed to the inspector and
// leaves the task running; stop ends it.
func liveSession(t *testing.T, in *inspector.Inspector) (stop func()) {
	t.Helper()
	model := &llmtest.Provider{Respond: llmtest.Script([]llm.Event{llm.TextEvent("Hello!")})}
	conv := llm.NewContext()
	pair := llm.NewPair(conv, llm.PairOptions{})
	task := pipeline.NewTask(pipeline.New(pair.User(), llm.NewService(model, llm.ServiceOptions{Name: "LLM"}), pair.Assistant()),
		pipeline.TaskOptions{EnableMetrics: true})
	in.StartSession(t.Context(), "demo-1").Attach(task)
	task.QueueFrames(&frames.InputTransportMessage{Message: []byte(`{"label":"rtvi-ai","type":"client-ready","id":"1"}`)},
		&frames.LLMMessagesAppend{Messages: []frames.LLMMessage{llm.UserMessage("hi")}, RunLLM: true})
	done := make(chan error, 1)
	go func() { done <- task.Run(context.Background()) }()
	deadline := time.Now().Add(5 * time.Second)
	for conv.Len() < 2 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	return func() {
		task.EndWhenDone()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func TestInspectorShowsGraphTurnsAndMessages(t *testing.T) {
	in, err := inspector.New(t.Context(), inspector.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close(context.Background()) }()
	stop := liveSession(t, in)
	defer stop()
	srv := httptest.NewServer(in)
	defer srv.Close()

	var list []struct {
		ID    string `json:"id"`
		Ended bool   `json:"ended"`
	}
	getJSON(t, srv.URL+"/api/sessions", &list)
	if len(list) != 1 || list[0].ID != "demo-1" || list[0].Ended {
		t.Fatalf("sessions = %+v", list)
	}
	var d struct {
		Nodes []struct {
			Name     string `json:"name"`
			Received uint64 `json:"received"`
		} `json:"nodes"`
		Spans []struct {
			Name string `json:"name"`
		} `json:"spans"`
		In []struct {
			Type string `json:"type"`
		} `json:"rtvi_in"`
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		getJSON(t, srv.URL+"/api/sessions/demo-1", &d)
		names := ""
		for _, s := range d.Spans {
			names += s.Name + ","
		}
		if strings.Contains(names, "turn,") && strings.Contains(names, "chat") || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	var nodes []string
	for _, n := range d.Nodes {
		nodes = append(nodes, n.Name)
	}
	if !strings.Contains(strings.Join(nodes, ","), "LLM") || len(nodes) < 3 {
		t.Errorf("graph nodes = %v; want the three processors", nodes)
	}
	if len(d.Spans) < 3 {
		t.Errorf("spans = %+v; want session, turn and chat", d.Spans)
	}
	if len(d.In) != 1 || d.In[0].Type != "client-ready" {
		t.Errorf("rtvi in = %+v", d.In)
	}
	res, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Errorf("page: %s %s", res.Status, res.Header.Get("Content-Type"))
	}
}

func TestInspectorRefusesWhatTheAuthorizerRefuses(t *testing.T) {
	in, err := inspector.New(t.Context(), inspector.Options{Authorize: func(r *http.Request) error {
		if r.Header.Get("Authorization") != "Bearer ok" {
			return errors.New("no")
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close(context.Background()) }()
	srv := httptest.NewServer(in)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/api/sessions")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("without a token: %s, want 403", res.Status)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/api/sessions", nil)
	req.Header.Set("Authorization", "Bearer ok")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("with the token: %s", res.Status)
	}
}

func newLoopbackServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// The docs recommend a TLS proxy on the same host; behind it every
// client's connection comes from loopback. The default policy refuses a
// request that says it came through a proxy, and says what to set.
func TestTheLoopbackDefaultRefusesARequestThroughAProxy(t *testing.T) {
	in, err := inspector.New(t.Context(), inspector.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close(context.Background()) }()
	url := newLoopbackServer(t, in)
	for _, h := range []string{"X-Forwarded-For", "Forwarded", "X-Real-IP", "Via"} {
		req, _ := http.NewRequest("GET", url+"/api/sessions", nil)
		req.Header.Set(h, "203.0.113.7")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "Authorize") {
			t.Errorf("through a proxy (%s): %s %q, want 403 naming Authorize", h, res.Status, body)
		}
	}
	res, err := http.Get(url + "/api/sessions")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("a direct loopback client: %s", res.Status)
	}
}

// A page whose domain rebinds to 127.0.0.1 reaches the inspector from
// the user's own browser, a loopback client; its Host names that domain.
func TestTheInspectorRefusesAForeignHost(t *testing.T) {
	in, err := inspector.New(t.Context(), inspector.Options{AllowHosts: []string{"inspect.example"},
		Authorize: func(*http.Request) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close(context.Background()) }()
	url := newLoopbackServer(t, in)
	for host, want := range map[string]int{"rebind.attacker.example": http.StatusForbidden, "inspect.example": http.StatusOK,
		"localhost": http.StatusOK, "127.0.0.1": http.StatusOK} {
		req, _ := http.NewRequest("GET", url+"/api/sessions", nil)
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("Host %s: %s, want %d", host, res.Status, want)
		}
	}
}
