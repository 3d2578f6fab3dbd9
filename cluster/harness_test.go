package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/pion/ice/v4"
	pion "github.com/pion/webrtc/v4"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/natstest"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/webrtc"
	"github.com/framewire/framewire/transports/websocket"
)

// wait bounds every wait of the tests.
const wait = 15 * time.Second

// heartbeatEvery is the workers' heartbeat interval in the tests: front
// doors forget a silent worker after three of them.
const heartbeatEvery = 200 * time.Millisecond

// echo is the test bot: it answers a data-channel message
// {"type":"echo","text":X} with {"type":"echoed","text":X}.
type echo struct{}

func (echo) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	if m, ok := f.(*frames.InputTransportMessage); ok {
		var v struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(m.Message, &v) == nil && v.Type == "echo" {
			b, _ := json.Marshal(map[string]string{"type": "echoed", "text": v.Text})
			h.Push(&frames.OutputTransportMessageUrgent{Message: b}, frames.Downstream)
		}
	}
	return nil
}

// loopbackOnly restricts ICE to IPv4 loopback without mDNS.
func loopbackOnly(se *pion.SettingEngine) {
	se.SetIncludeLoopbackCandidate(true)
	se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	se.SetNetworkTypes([]pion.NetworkType{pion.NetworkTypeUDP4})
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
}

// testWorker is a Worker with its Server and its own NATS connection.
type testWorker struct {
	*Worker
	srv *webrtc.Server
	// ws is its websocket.Server, wsURL the socket's public URL, when it
	// serves WebSocket.
	ws     *websocket.Server
	wsURL  string
	nc     *nats.Conn
	cancel context.CancelFunc
	done   chan error
}

// testServer returns the options of a worker's Server taking capacity
// sessions.
func testServer(capacity int) webrtc.Options {
	return webrtc.Options{
		Logger:        zap.NewNop(),
		MaxSessions:   capacity,
		AllowOrigins:  []string{"https://app.example"},
		Settings:      loopbackOnly,
		ShutdownGrace: 2 * time.Second,
		NewPipeline: func(_ context.Context, s *webrtc.Session) (*pipeline.Task, error) {
			return pipeline.NewTask(pipeline.New(s.Input(), echo{}, s.Output()), pipeline.TaskOptions{}), nil
		},
	}
}

// startWorker runs a worker named id taking capacity sessions.
func startWorker(t testing.TB, url, id string, capacity int) *testWorker {
	t.Helper()
	return startWorkerWith(t, url, id, capacity, nil)
}

// testWebSocket returns the options of a worker's websocket.Server taking
// capacity sessions, whose pipelines echo as testServer's, on a loopback
// listener of its own.
func testWebSocket(t testing.TB, capacity int) *WebSocketOptions {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return &WebSocketOptions{
		Listener: ln,
		Server: websocket.Options{
			Logger:        zap.NewNop(),
			MaxSessions:   capacity,
			AllowOrigins:  []string{"https://app.example"},
			PublicURL:     "ws://" + ln.Addr().String() + "/ws",
			ShutdownGrace: 2 * time.Second,
			NewPipeline: func(_ context.Context, s *websocket.Session) (*pipeline.Task, error) {
				return pipeline.NewTask(pipeline.New(s.Input(), echo{}, s.Output()), pipeline.TaskOptions{Logger: zap.NewNop()}), nil
			},
		},
	}
}

// startWebSocketWorker runs a worker named id taking capacity WebRTC
// sessions and wsCapacity WebSocket sessions.
func startWebSocketWorker(t testing.TB, url, id string, capacity, wsCapacity int) *testWorker {
	t.Helper()
	return startWorkerWith(t, url, id, capacity, testWebSocket(t, wsCapacity))
}

// startWorkerWith runs a worker named id taking capacity WebRTC sessions,
// serving WebSocket as ws says when it is not nil.
func startWorkerWith(t testing.TB, url, id string, capacity int, ws *WebSocketOptions) *testWorker {
	t.Helper()
	nc := natstest.Connect(t, url)
	w, err := NewWorker(nc, testServer(capacity), WorkerOptions{ID: id, HeartbeatInterval: heartbeatEvery,
		DrainTimeout: 5 * time.Second, Logger: testLogger(t).Named(id), WebSocket: ws})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tw := &testWorker{Worker: w, srv: w.Server(), ws: w.WebSocketServer(), nc: nc, cancel: cancel, done: make(chan error, 1)}
	if ws != nil {
		tw.wsURL = ws.Server.PublicURL
	}
	go func() { tw.done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-tw.done:
		case <-time.After(wait):
			t.Errorf("worker %s did not stop", id)
		}
	})
	return tw
}

// stopped waits for Run to return and returns its error.
func (w *testWorker) stopped(t testing.TB) error {
	t.Helper()
	select {
	case err := <-w.done:
		w.done <- err // for the cleanup
		return err
	case <-time.After(wait):
		t.Fatalf("worker %s did not stop", w.ID())
		return nil
	}
}

func testLogger(t testing.TB) *zap.Logger {
	if tt, ok := t.(*testing.T); ok && testing.Verbose() {
		return zaptest.NewLogger(tt)
	}
	return zap.NewNop()
}

// testFrontDoor is a FrontDoor on an httptest server.
type testFrontDoor struct {
	*FrontDoor
	http *httptest.Server
	nc   *nats.Conn
}

func startFrontDoor(t testing.TB, url string) *testFrontDoor {
	t.Helper()
	return startFrontDoorWith(t, url, FrontDoorOptions{})
}

// startFrontDoorWith starts a front door with opts (its logger and
// request timeout are the tests').
func startFrontDoorWith(t testing.TB, url string, opts FrontDoorOptions) *testFrontDoor {
	t.Helper()
	nc := natstest.Connect(t, url)
	opts.Logger, opts.RequestTimeout = testLogger(t).Named("frontdoor"), 10*time.Second
	f, err := NewFrontDoor(nc, opts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", f)
	mux.Handle("GET /healthz", f.StatusHandler())
	mux.Handle("GET /cluster", f.StatusHandler())
	fd := &testFrontDoor{FrontDoor: f, http: httptest.NewServer(mux), nc: nc}
	t.Cleanup(fd.stop)
	return fd
}

func (f *testFrontDoor) stop() {
	f.http.Close()
	_ = f.Close()
	f.nc.Close()
}

func (f *testFrontDoor) url(path string) string { return f.http.URL + path }

// waitWorkers waits until f sees exactly the workers ids (live, any
// state).
func (f *testFrontDoor) waitWorkers(t testing.TB, ids ...string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		var got []string
		for _, w := range f.Status().Workers {
			got = append(got, w.ID)
		}
		if fmt.Sprint(got) == fmt.Sprint(ids) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the front door sees workers %v, want %v", got, ids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// client is a minimal SmallWebRTC client: a pion peer connection with an
// audio transceiver and the "chat" data channel.
type client struct {
	t      testing.TB
	pc     *pion.PeerConnection
	dc     *pion.DataChannel
	pcID   string
	open   chan struct{}
	closed chan struct{}
	msgs   chan string
}

var httpClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: wait}

// offerBody is the body of POST .../api/offer.
type offerBody struct {
	SDP       string  `json:"sdp"`
	Type      string  `json:"type"`
	PCID      *string `json:"pc_id"`
	RestartPC bool    `json:"restart_pc"`
}

type answer struct {
	SDP  string `json:"sdp"`
	Type string `json:"type"`
	PCID string `json:"pc_id"`
}

// newClient builds a peer connection and gathers its offer.
func newClient(t testing.TB) (*client, string) {
	t.Helper()
	me := &pion.MediaEngine{}
	if err := me.RegisterDefaultCodecs(); err != nil {
		t.Fatal(err)
	}
	var se pion.SettingEngine
	loopbackOnly(&se)
	pc, err := pion.NewAPI(pion.WithMediaEngine(me), pion.WithSettingEngine(se)).NewPeerConnection(pion.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, pc: pc, open: make(chan struct{}), closed: make(chan struct{}), msgs: make(chan string, 64)}
	t.Cleanup(func() { _ = pc.Close() })
	if _, err := pc.AddTransceiverFromKind(pion.RTPCodecTypeAudio, pion.RTPTransceiverInit{Direction: pion.RTPTransceiverDirectionRecvonly}); err != nil {
		t.Fatal(err)
	}
	if c.dc, err = pc.CreateDataChannel("chat", nil); err != nil {
		t.Fatal(err)
	}
	var openOnce, closeOnce sync.Once
	c.dc.OnOpen(func() { openOnce.Do(func() { close(c.open) }) })
	c.dc.OnClose(func() { closeOnce.Do(func() { close(c.closed) }) })
	c.dc.OnMessage(func(m pion.DataChannelMessage) {
		select {
		case c.msgs <- string(m.Data):
		default:
		}
	})
	return c, c.localOffer()
}

// localOffer makes an offer, waits for gathering and returns its SDP.
func (c *client) localOffer() string {
	c.t.Helper()
	offer, err := c.pc.CreateOffer(nil)
	if err != nil {
		c.t.Fatal(err)
	}
	gathered := pion.GatheringCompletePromise(c.pc)
	if err := c.pc.SetLocalDescription(offer); err != nil {
		c.t.Fatal(err)
	}
	select {
	case <-gathered:
	case <-time.After(wait):
		c.t.Fatal("ICE gathering did not complete")
	}
	return c.pc.LocalDescription().SDP
}

// post sends an offer and returns the status and the answer.
func post(t testing.TB, url string, body offerBody) (int, answer) {
	t.Helper()
	body.Type = "offer"
	var ans answer
	status, raw := do(t, http.MethodPost, url, body)
	if status == http.StatusOK {
		if err := json.Unmarshal(raw, &ans); err != nil {
			t.Fatalf("POST %s: %v in %q", url, err, raw)
		}
	}
	return status, ans
}

// do sends a JSON request and returns the status and body.
func do(t testing.TB, method, url string, body any) (int, []byte) {
	t.Helper()
	status, raw, _, err := doHeader(method, url, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return status, raw
}

func doHeader(method, url string, body any) (int, []byte, http.Header, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, nil, err
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(b))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, raw, resp.Header, err
}

// dial connects a new client through the offer URL and waits for its
// data channel.
func dial(t testing.TB, url string) *client {
	t.Helper()
	c, sdp := newClient(t)
	status, ans := post(t, url, offerBody{SDP: sdp})
	if status != http.StatusOK {
		t.Fatalf("POST %s: status %d", url, status)
	}
	c.apply(ans)
	c.waitOpen()
	return c
}

func (c *client) apply(ans answer) {
	c.t.Helper()
	if ans.Type != "answer" || ans.PCID == "" {
		c.t.Fatalf("the answer has type %q and pc_id %q", ans.Type, ans.PCID)
	}
	if err := c.pc.SetRemoteDescription(pion.SessionDescription{Type: pion.SDPTypeAnswer, SDP: ans.SDP}); err != nil {
		c.t.Fatal(err)
	}
	c.pcID = ans.PCID
}

func (c *client) waitOpen() {
	c.t.Helper()
	select {
	case <-c.open:
	case <-time.After(wait):
		c.t.Fatal("the data channel did not open")
	}
}

// echo sends text through the bot and waits for it to come back.
func (c *client) echo(text string) error {
	b, _ := json.Marshal(map[string]string{"type": "echo", "text": text})
	if err := c.dc.SendText(string(b)); err != nil {
		return err
	}
	timeout := time.After(5 * time.Second)
	for {
		select {
		case m := <-c.msgs:
			if strings.Contains(m, `"echoed"`) && strings.Contains(m, text) {
				return nil
			}
		case <-c.closed:
			return errors.New("the data channel closed")
		case <-timeout:
			return fmt.Errorf("no echo of %q", text)
		}
	}
}

// waitPeerLeft waits for the server's peerLeft message or the data
// channel's close.
func (c *client) waitEnded() {
	c.t.Helper()
	timeout := time.After(wait)
	for {
		select {
		case m := <-c.msgs:
			if strings.Contains(m, "peerLeft") {
				return
			}
		case <-c.closed:
			return
		case <-timeout:
			c.t.Fatal("the session did not end")
		}
	}
}

// candidates returns the PATCH body of the client's gathered candidates
// and the end-of-candidates marker.
func (c *client) candidates() map[string]any {
	var list []map[string]any
	for line := range strings.SplitSeq(c.pc.LocalDescription().SDP, "\r\n") {
		if cand, ok := strings.CutPrefix(line, "a=candidate:"); ok {
			list = append(list, map[string]any{"candidate": "candidate:" + cand, "sdp_mid": "0", "sdp_mline_index": 0})
		}
	}
	list = append(list, map[string]any{"candidate": "", "sdp_mid": "0", "sdp_mline_index": 0})
	return map[string]any{"pc_id": c.pcID, "candidates": list}
}

// sessionsOn returns the live sessions of each worker.
func sessionsOn(ws ...*testWorker) map[string]int {
	out := map[string]int{}
	for _, w := range ws {
		out[w.ID()] = w.srv.SessionCount()
	}
	return out
}

// waitSessions waits until the workers hold want sessions.
func waitSessions(t testing.TB, want map[string]int, ws ...*testWorker) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		got := sessionsOn(ws...)
		if fmt.Sprint(got) == fmt.Sprint(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sessions per worker %v, want %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
