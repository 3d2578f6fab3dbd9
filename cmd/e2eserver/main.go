// Command e2eserver is the Go side of the browser end-to-end tests in e2e/:
// the SmallWebRTC transport with the RTVI processor, an echo handler for
// client-message {t:"echo"}, disconnect-bot, and a page (e2e/index.html
// and the esbuild bundles) served from the same origin. It prints
// "listening on http://ADDR" once it accepts connections, and a JSON line
// per session event on stdout for the test runner to assert on.
//
// It stands in for examples/conformance until that exists; the runner
// takes any server command through E2E_SERVER_CMD.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	pion "github.com/pion/webrtc/v4"
	"go.uber.org/zap"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
	"github.com/framewire/framewire/transports/webrtc"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	static := flag.String("static", "e2e", "directory with index.html and dist/")
	flag.StringVar(&recordDir, "record", "", "save the first offer and PATCH bodies (fuzz seeds) in this directory")
	flag.BoolVar(&functionsMode, "functions", false, "answer with a scripted model that calls client functions (see functions.go)")
	flag.Parse()
	log, _ := zap.NewDevelopment()
	// main owns the signals: the first SIGINT or SIGTERM ends ctx, which
	// shuts the server down gracefully; a second one kills the process.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	if err := run(ctx, *addr, *static, log); err != nil {
		log.Error("e2eserver", zap.Error(err))
		os.Exit(1)
	}
}

// events prints one JSON object per line for the test runner.
var events struct {
	sync.Mutex
	enc *json.Encoder
}

func event(kind string, fields map[string]any) {
	if fields == nil {
		fields = map[string]any{}
	}
	fields["event"] = kind
	events.Lock()
	defer events.Unlock()
	_ = events.enc.Encode(fields)
}

// newHandler returns the transport server and the HTTP handler serving it
// and the static page; session events go to out as JSON lines.
func newHandler(static string, out io.Writer, log *zap.Logger, settings func(*pion.SettingEngine)) (*webrtc.Server, http.Handler, error) {
	events.Lock()
	events.enc = json.NewEncoder(out)
	events.Unlock()
	srv, err := webrtc.NewServer(webrtc.Options{
		Logger:          log,
		IncludeLoopback: true,
		Settings:        settings,
		AllowOrigins:    []string{"*"}, // pages served from elsewhere work too
		NewPipeline: func(_ context.Context, s *webrtc.Session) (*pipeline.Task, error) {
			return newPipeline(s, log), nil
		},
	})
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", srv)
	mux.Handle("/start", srv)
	mux.Handle("/sessions/", srv)
	mux.Handle("/", http.FileServer(http.Dir(static)))
	return srv, logRequests(mux), nil
}

func run(ctx context.Context, addr, static string, log *zap.Logger) error {
	srv, handler, err := newHandler(static, os.Stdout, log, nil)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		_ = srv.Close()
		return err
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	// Until ctx ends (SIGINT or SIGTERM): then the sessions end, and run
	// returns.
	return webrtc.Serve(ctx, ln, srv, webrtc.ServeOptions{Handler: handler})
}

var recordDir string

// logRequests reports every signalling request, for assertions on pc_id,
// restart_pc and PATCHes.
func logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if recordDir != "" && (r.Method == http.MethodPost || r.Method == http.MethodPatch) && strings.HasSuffix(r.URL.Path, "api/offer") {
			body, _ := io.ReadAll(r.Body)
			name := filepath.Join(recordDir, strings.ToLower(r.Method)+"-chrome.json")
			if r.Method == http.MethodPost {
				name = filepath.Join(recordDir, "offer-chrome.json")
			}
			if _, err := os.Stat(name); err != nil {
				_ = os.WriteFile(name, body, 0o644)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		rec := &statusRecorder{ResponseWriter: w, status: 200}
		next.ServeHTTP(rec, r)
		if r.URL.Path != "/" && r.Method != http.MethodGet {
			event("http", map[string]any{"method": r.Method, "path": r.URL.Path, "status": rec.status})
		}
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// newPipeline is Input -> RTVI -> meter -> echo LLM -> Output, with the
// RTVI observer. It behaves as docs/protocol.md §10 fixes for the
// rows that need no UI agent: the RTVI processor answers the handshake and
// bad input; client-message {t:"echo", d:X} is answered with
// server-response {t:"echo", d:X}; {t:"ui-command", d:{command, payload}}
// becomes ui-command {command, payload}; ui-event becomes server-message
// {type:"ui_event", event, payload}; send-text C is answered "echo: C" by
// the echo LLM (bot-llm-started, bot-llm-text, bot-llm-stopped); and
// {t:"tone", d:{hz, ms}} plays a sine. With -functions the echo LLM
// gives way to the scripted model of functions.go.
func newPipeline(s *webrtc.Session, log *zap.Logger) *pipeline.Task {
	var (
		rp   *rtvi.Processor
		task *pipeline.Task
	)
	if functionsMode {
		task, rp = newFunctionsPipeline(s, log)
	} else {
		rp = rtvi.NewProcessor(rtvi.Options{Logger: log, Observer: rtvi.ObserverOptions{Logger: log}})
		task = pipeline.NewTask(pipeline.New(s.Input(), rp, &audioMeter{s: s}, echoLLM{}, s.Output()),
			pipeline.TaskOptions{Logger: log})
	}
	event("session", map[string]any{"session": s.ID(), "pc_id": s.PCID(), "start_id": s.StartID()})
	rp.OnClientReady(func(_ context.Context, r *rtvi.ClientReadyFrame) {
		event("client-ready", map[string]any{"session": s.ID(), "version": r.Version, "id": r.MsgID})
	})
	rp.OnClientMessage(func(_ context.Context, m rtvi.ClientMessage) {
		event("client-message", map[string]any{"session": s.ID(), "t": m.Type})
		if m.Type == "ui-command" {
			var req struct {
				Command string          `json:"command"`
				Payload json.RawMessage `json:"payload"`
			}
			if err := json.Unmarshal(m.Data, &req); err != nil || req.Command == "" {
				rp.SendErrorResponse(m, "ui-command needs {command, payload}")
				return
			}
			f := &rtvi.UICommandFrame{Command: req.Command}
			if len(req.Payload) > 0 {
				f.Payload = wire.RawJSON(req.Payload)
			}
			task.QueueFrame(f)
			return
		}
		if m.Type == "tone" {
			var req struct{ Hz, Ms float64 }
			_ = json.Unmarshal(m.Data, &req)
			queueTone(task, req.Hz, time.Duration(req.Ms)*time.Millisecond)
			rp.SendServerResponse(m, m.Data)
			return
		}
		if m.Type != "echo" {
			return
		}
		// The response's data is {t:"echo", d:X}; the processor adds the t.
		rp.SendServerResponse(m, m.Data)
	})
	rp.OnUIMessage(func(_ context.Context, m rtvi.UIMessage) {
		ev, ok := m.(*rtvi.UIEventFrame)
		if !ok {
			return
		}
		name, _ := json.Marshal(ev.Event)
		payload := ev.Payload.AppendJSON(nil)
		data := fmt.Sprintf(`{"type":"ui_event","event":%s,"payload":%s}`, name, payload)
		rp.SendServerMessage(wire.RawJSON(data))
	})
	go func() {
		<-s.Done()
		event("session-ended", map[string]any{"session": s.ID(), "reason": s.Reason()})
	}()
	return task
}

// echoLLM stands in for an LLM: a user message appended with RunLLM is
// answered "echo: <content>" in two chunks, inside a full response.
type echoLLM struct{}

func (echoLLM) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	m, ok := f.(*frames.LLMMessagesAppend)
	if !ok || !m.RunLLM || dir != frames.Downstream || len(m.Messages) == 0 {
		return nil
	}
	h.Forward()
	last := m.Messages[len(m.Messages)-1]
	h.Push(&frames.LLMFullResponseStart{}, frames.Downstream)
	h.Push(&frames.LLMText{Text: "echo: "}, frames.Downstream)
	h.Push(&frames.LLMText{Text: last.Content}, frames.Downstream)
	h.Push(&frames.LLMFullResponseEnd{}, frames.Downstream)
	return nil
}

// queueTone queues a sine at the pipeline's output rate in 40 ms frames.
func queueTone(task *pipeline.Task, hz float64, d time.Duration) {
	if hz <= 0 || d <= 0 || d > 10*time.Second {
		return
	}
	pcm := dsp.Sine(hz, 0.3, 24000, d)
	for len(pcm) > 0 {
		n := min(1920, len(pcm))
		task.QueueFrame(&frames.OutputAudioRaw{Audio: frames.Audio{PCM: pcm[:n], SampleRate: 24000, Channels: 1}})
		pcm = pcm[n:]
	}
}

// audioMeter reports the first second of the client's audio.
type audioMeter struct {
	s      *webrtc.Session
	frames int
	pcm    []byte
}

func (m *audioMeter) ProcessFrame(_ context.Context, _ *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	a, ok := f.(*frames.InputAudioRaw)
	if !ok || m.frames > 50 {
		return nil
	}
	m.frames++
	m.pcm = append(m.pcm, a.PCM...)
	if m.frames == 50 {
		event("input-audio", map[string]any{"session": m.s.ID(), "frames": m.frames, "rate": a.SampleRate,
			"channels": a.Channels, "bytes": len(a.PCM), "rms": dsp.RMS(m.pcm)})
		m.pcm = nil
	}
	return nil
}
