package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServesThePageAndAnswersTheHandshakeAndEcho runs the e2e server's
// handler with an in-process client: the page is served, client-ready gets
// bot-ready, an echo comes back verbatim, and the events are reported.
func TestServesThePageAndAnswersTheHandshakeAndEcho(t *testing.T) {
	static := t.TempDir()
	if err := os.WriteFile(filepath.Join(static, "index.html"), []byte("<html>e2e</html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	var events syncBuffer
	srv, handler, err := newHandler(static, &events, zap.NewNop(), webrtctest.LoopbackOnly)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(handler)
	defer func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}()
	resp, err := http.Get(hs.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(page) != "<html>e2e</html>" {
		t.Errorf("page = %q", page)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := webrtctest.Dial(ctx, webrtctest.Options{OfferURL: hs.URL + "/api/offer"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WaitOpen(ctx); err != nil {
		t.Fatal(err)
	}
	_ = c.Send(`{"label":"rtvi-ai","type":"client-ready","id":"r1","data":{"version":"2.1.0","about":{"library":"go"}}}`)
	if _, err := c.Next(ctx, func(m string) bool { return strings.Contains(m, `"bot-ready"`) }); err != nil {
		t.Fatal(err)
	}
	_ = c.Send(`{"label":"rtvi-ai","type":"client-message","id":"e1","data":{"t":"echo","d":{"s":"héllo"}}}`)
	m, err := c.Next(ctx, func(m string) bool { return strings.Contains(m, `"e1"`) })
	if err != nil {
		t.Fatal(err)
	}
	var reply struct {
		Type string
		Data struct {
			T string
			D map[string]string
		}
	}
	if err := json.Unmarshal([]byte(m), &reply); err != nil {
		t.Fatal(err)
	}
	if reply.Type != "server-response" || reply.Data.T != "echo" || reply.Data.D["s"] != "héllo" {
		t.Errorf("echo reply %s", m)
	}
	// ui-command, ui-event and send-text, as the conformance bot answers them.
	_ = c.Send(`{"label":"rtvi-ai","type":"client-message","id":"u1","data":{"t":"ui-command","d":{"command":"toast","payload":{"title":"hi"}}}}`)
	if m, err := c.Next(ctx, func(m string) bool { return strings.Contains(m, `"ui-command"`) }); err != nil {
		t.Fatal(err)
	} else if !strings.Contains(m, `"data":{"command":"toast","payload":{"title":"hi"}}`) {
		t.Errorf("ui-command = %s", m)
	}
	_ = c.Send(`{"label":"rtvi-ai","type":"ui-event","id":"v1","data":{"event":"clicked","payload":{"ref":"e3"}}}`)
	if m, err := c.Next(ctx, func(m string) bool { return strings.Contains(m, `"server-message"`) }); err != nil {
		t.Fatal(err)
	} else if !strings.Contains(m, `{"type":"ui_event","event":"clicked","payload":{"ref":"e3"}}`) {
		t.Errorf("ui_event = %s", m)
	}
	_ = c.Send(`{"label":"rtvi-ai","type":"send-text","id":"s1","data":{"content":"hello","options":{}}}`)
	var llm []string
	for {
		m, err := c.Next(ctx, func(m string) bool { return strings.Contains(m, `"bot-llm-`) })
		if err != nil {
			t.Fatal(err)
		}
		var msg struct {
			Type string
			Data struct{ Text string }
		}
		_ = json.Unmarshal([]byte(m), &msg)
		if msg.Type == "bot-llm-text" {
			llm = append(llm, msg.Data.Text)
			continue
		}
		llm = append(llm, msg.Type)
		if msg.Type == "bot-llm-stopped" {
			break
		}
	}
	if got := strings.Join(llm, "|"); got != "bot-llm-started|echo: |hello|bot-llm-stopped" {
		t.Errorf("send-text answered %s", got)
	}
	for _, want := range []string{`"event":"session"`, `"event":"client-ready"`, `"event":"client-message"`, `"method":"POST"`} {
		if !strings.Contains(events.String(), want) {
			t.Errorf("events lack %s:\n%s", want, events.String())
		}
	}
}
