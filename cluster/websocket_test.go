package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	cws "github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/internal/natstest"
	"github.com/framewire/framewire/transports/websocket"
	"github.com/framewire/framewire/transports/websocket/websockettest"
)

// connectAnswer is the body of a /connect's answer: exactly what
// client-js's startBotAndConnect hands the WebSocket transport
// (docs/decisions/websocket-wire.md, "Connecting").
type connectAnswer struct {
	WSURL string `json:"wsUrl"`
}

// connect POSTs requestData to the front door's /connect and returns the
// socket URL it answers; the body must be {"wsUrl"} and nothing else.
func connect(t testing.TB, fd *testFrontDoor) string {
	t.Helper()
	status, raw := do(t, http.MethodPost, fd.url("/connect"), map[string]any{"user": "u1"})
	if status != http.StatusOK {
		t.Fatalf("POST /connect: %d %s", status, raw)
	}
	var members map[string]any
	var ans connectAnswer
	if err := json.Unmarshal(raw, &members); err != nil || len(members) != 1 || json.Unmarshal(raw, &ans) != nil || ans.WSURL == "" {
		t.Fatalf("POST /connect answered %s, want {\"wsUrl\": ...} alone", raw)
	}
	return ans.WSURL
}

// dialSocket opens the socket at wsURL as the browser's client does.
func dialSocket(t testing.TB, wsURL string) *websockettest.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c, err := websockettest.Dial(ctx, websockettest.Options{URL: wsURL})
	if err != nil {
		t.Fatalf("dialling %s: %v", wsURL, err)
	}
	t.Cleanup(c.Close)
	return c
}

// connectSocket does a /connect through fd and opens the socket it names.
func connectSocket(t testing.TB, fd *testFrontDoor) *websockettest.Client {
	t.Helper()
	return dialSocket(t, connect(t, fd))
}

// echoSocket sends text through the bot as an RTVI message frame and
// waits for it to come back.
func echoSocket(c *websockettest.Client, text string) error {
	b, _ := json.Marshal(map[string]string{"type": "echo", "text": text})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Send(ctx, b); err != nil {
		return err
	}
	for {
		select {
		case m := <-c.Messages():
			if strings.Contains(string(m), `"echoed"`) && strings.Contains(string(m), text) {
				return nil
			}
		case <-c.Done():
			return fmt.Errorf("the socket closed: %v", c.Err())
		case <-ctx.Done():
			return fmt.Errorf("no echo of %q", text)
		}
	}
}

// waitClosed waits for the server to close c and returns its close code.
func waitClosed(t testing.TB, c *websockettest.Client) cws.StatusCode {
	t.Helper()
	select {
	case <-c.Done():
		return c.CloseStatus()
	case <-time.After(wait):
		t.Fatal("the socket did not close")
		return -1
	}
}

// socketsOn returns the live WebSocket sessions of each worker.
func socketsOn(ws ...*testWorker) map[string]int {
	out := map[string]int{}
	for _, w := range ws {
		out[w.ID()] = w.ws.SessionCount()
	}
	return out
}

// waitSockets waits until the workers hold want WebSocket sessions.
func waitSockets(t testing.TB, want map[string]int, ws ...*testWorker) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		got := socketsOn(ws...)
		if cmp.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sockets per worker %v, want %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ownerOf returns the worker whose public socket URL wsURL is under.
func ownerOf(t testing.TB, wsURL string, ws ...*testWorker) *testWorker {
	t.Helper()
	for _, w := range ws {
		if strings.HasPrefix(wsURL, w.wsURL+"?session=") {
			return w
		}
	}
	t.Fatalf("%s is no worker's socket URL", wsURL)
	return nil
}

// A /connect through the front door is answered by a worker with room,
// with that worker's own socket URL: the client's socket, and its media,
// go straight to the worker, which the front door never sees.
func TestConnectThroughTheFrontDoorOpensASocketStraightToAWorker(t *testing.T) {
	url := natstest.Embedded(t)
	a, b := startWebSocketWorker(t, url, "a", 10, 5), startWebSocketWorker(t, url, "b", 10, 5)
	fd := startFrontDoor(t, url)
	fd.waitWorkers(t, "a", "b")

	wsURL := connect(t, fd)
	owner := ownerOf(t, wsURL, a, b)
	c := dialSocket(t, wsURL)
	if err := echoSocket(c, "hello over the socket"); err != nil {
		t.Error(err)
	}
	waitSockets(t, map[string]int{owner.ID(): 1, other(owner, a, b).ID(): 0}, a, b)

	// The heartbeats carry both transports' load; the totals count both.
	deadline := time.Now().Add(wait)
	for {
		var got WorkerStatus
		for _, w := range fd.Status().Workers {
			if w.ID == owner.ID() {
				got = w
			}
		}
		want := WorkerStatus{ID: owner.ID(), Sessions: 1, Capacity: 15,
			WebRTC: &Load{Sessions: 0, Capacity: 10}, WebSocket: &Load{Sessions: 1, Capacity: 5}}
		got.LastSeenMS = 0
		if cmp.Equal(got, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the front door's status of %s (-want +got):\n%s", owner.ID(), cmp.Diff(want, got))
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The worker's listener carries sockets only: signalling goes through
	// the front doors.
	workerHTTP := "http" + strings.TrimPrefix(strings.TrimSuffix(owner.wsURL, "/ws"), "ws")
	if status, _ := do(t, http.MethodPost, workerHTTP+"/connect", map[string]any{}); status != http.StatusNotFound {
		t.Errorf("POST /connect on the worker's socket listener: %d, want 404", status)
	}
	// The /connect id is used once.
	var se *websockettest.StatusError
	if again, err := websockettest.Dial(t.Context(), websockettest.Options{URL: wsURL}); err == nil {
		again.Close()
		t.Error("a second socket on the same /connect id was accepted")
	} else if !errors.As(err, &se) || se.Code != http.StatusNotFound {
		t.Errorf("a second socket on the same /connect id: %v, want a 404", err)
	}
}

// Every worker declines a /connect once its websocket.Server is full, so
// the front door asks one with room; when all are full the client gets
// a 503 with Retry-After, which it retries.
func TestAFullWorkerDeclinesAConnectAndAnotherTakesIt(t *testing.T) {
	url := natstest.Embedded(t)
	a, b := startWebSocketWorker(t, url, "a", 10, 1), startWebSocketWorker(t, url, "b", 10, 3)
	fd := startFrontDoor(t, url)
	fd.waitWorkers(t, "a", "b")

	// Whichever worker NATS picks first, four sockets fill both exactly.
	var clients []*websockettest.Client
	for range 4 {
		clients = append(clients, connectSocket(t, fd))
	}
	waitSockets(t, map[string]int{"a": 1, "b": 3}, a, b)
	for i, c := range clients {
		if err := echoSocket(c, fmt.Sprint("socket ", i)); err != nil {
			t.Errorf("socket %d: %v", i, err)
		}
	}
	status, _, h, err := doHeader(http.MethodPost, fd.url("/connect"), map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Errorf("a fifth /connect: %d, Retry-After %q; want 503 with a Retry-After", status, h.Get("Retry-After"))
	}

	// Asked directly, the full worker declines and says why.
	nc := natstest.Connect(t, url)
	data := mustJSON(request{V: Version, Kind: kindNew, Method: http.MethodPost, Path: "/connect",
		Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{}`)})
	m, err := nc.Request(a.subj.worker("a"), data, wait)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := decodeReply(m.Data, 1<<20); err != nil || rep.Declined != "full" {
		t.Errorf("a /connect for a full worker: %+v, %v; want declined \"full\"", rep, err)
	}
}

// A draining worker leaves the /connect queue group and declines what
// still reaches it; its sockets end with 1001 (going away) once their
// pipelines have ended; new /connects go to the other workers.
func TestDrainingWorkerTakesNoConnectAndItsSocketsGoAway(t *testing.T) {
	url := natstest.Embedded(t)
	a := startWebSocketWorker(t, url, "a", 10, 10)
	fd := startFrontDoor(t, url)
	fd.waitWorkers(t, "a")
	onA := connectSocket(t, fd)
	if err := echoSocket(onA, "before the drain"); err != nil {
		t.Fatal(err)
	}
	b := startWebSocketWorker(t, url, "b", 10, 10)
	fd.waitWorkers(t, "a", "b")

	a.cancel() // SIGTERM
	if code := waitClosed(t, onA); code != websocket.CloseGoingAway {
		t.Errorf("a draining worker's socket closed with %d, want %d (going away)", code, websocket.CloseGoingAway)
	}
	if err := a.stopped(t); err != nil {
		t.Errorf("a drained worker's Run: %v, want nil", err)
	}
	fd.waitWorkers(t, "b")
	for i := range 3 {
		wsURL := connect(t, fd)
		ownerOf(t, wsURL, b)
		if err := echoSocket(dialSocket(t, wsURL), fmt.Sprint("after the drain ", i)); err != nil {
			t.Error(err)
		}
	}
	waitSockets(t, map[string]int{"a": 0, "b": 3}, a, b)
}

func TestDrainingWorkerDeclinesAConnectSentToIt(t *testing.T) {
	url := natstest.Embedded(t)
	a := startWebSocketWorker(t, url, "a", 10, 10)
	fd := startFrontDoor(t, url)
	fd.waitWorkers(t, "a")
	wsURL := connect(t, fd) // issued before the drain
	a.draining.Store(true)  // as Run does first when it drains

	nc := natstest.Connect(t, url)
	data := mustJSON(request{V: Version, Kind: kindNew, Method: http.MethodPost, Path: "/connect", Body: []byte(`{}`)})
	m, err := nc.Request(a.subj.worker("a"), data, wait)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := decodeReply(m.Data, 1<<20); err != nil || rep.Declined != "draining" {
		t.Errorf("a /connect for a draining worker: %+v, %v; want declined \"draining\"", rep, err)
	}
	// Nor does it take the socket of a /connect issued before.
	var se *websockettest.StatusError
	if c, err := websockettest.Dial(t.Context(), websockettest.Options{URL: wsURL}); err == nil {
		c.Close()
		t.Error("a draining worker took a socket")
	} else if !errors.As(err, &se) || se.Code != http.StatusServiceUnavailable {
		t.Errorf("a socket for a draining worker: %v, want a 503", err)
	}
}

// A worker cut off from the cluster closes its sockets; the front doors
// forget it, the other workers' sockets go on, and new /connects go to
// the live workers.
func TestWorkerDeathClosesItsSocketsAndConnectsGoToTheLiveWorkers(t *testing.T) {
	url := natstest.Embedded(t)
	a, b := startWebSocketWorker(t, url, "a", 10, 1), startWebSocketWorker(t, url, "b", 10, 10)
	fd := startFrontDoor(t, url)
	fd.waitWorkers(t, "a", "b")
	var onA, onB *websockettest.Client
	for onA == nil || onB == nil {
		wsURL := connect(t, fd)
		c := dialSocket(t, wsURL)
		if ownerOf(t, wsURL, a, b) == a {
			onA = c
		} else if onB == nil {
			onB = c
		}
	}
	before := b.ws.SessionCount()

	a.nc.Close() // the worker's NATS connection goes away abruptly
	waitClosed(t, onA)
	if err := a.stopped(t); !errors.Is(err, ErrConnectionClosed) {
		t.Errorf("Run of a worker whose NATS connection was closed: %v, want ErrConnectionClosed", err)
	}
	fd.waitWorkers(t, "b")
	if err := echoSocket(onB, "still here"); err != nil {
		t.Errorf("a socket on the live worker: %v", err)
	}
	for i := range 2 {
		wsURL := connect(t, fd)
		ownerOf(t, wsURL, b)
		if err := echoSocket(dialSocket(t, wsURL), fmt.Sprint("new ", i)); err != nil {
			t.Error(err)
		}
	}
	waitSockets(t, map[string]int{"b": before + 2}, b)
	// a's listener is closed with it.
	host := strings.TrimPrefix(strings.TrimSuffix(a.wsURL, "/ws"), "ws://")
	if c, err := net.DialTimeout("tcp", host, time.Second); err == nil {
		c.Close()
		t.Errorf("the dead worker's socket listener %s still accepts", host)
	}
}

// A /connect needs a worker serving WebSocket: workers of WebRTC alone
// are not asked (they are not in its queue group), and the client gets a
// 503 it retries. The CORS preflight of /connect is answered by a worker
// serving WebSocket, full or not; other methods are refused.
func TestConnectGoesOnlyToWorkersServingWebSocket(t *testing.T) {
	url := natstest.Embedded(t)
	rtcOnly := startWorker(t, url, "a", 10)
	fd := startFrontDoor(t, url)
	fd.waitWorkers(t, "a")
	status, _, h, err := doHeader(http.MethodPost, fd.url("/connect"), map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Errorf("POST /connect without a WebSocket worker: %d, Retry-After %q; want 503 with Retry-After", status, h.Get("Retry-After"))
	}
	// Asked directly, a worker without WebSocket declines.
	nc := natstest.Connect(t, url)
	m, err := nc.Request(rtcOnly.subj.worker("a"), mustJSON(request{V: Version, Kind: kindNew, Method: http.MethodPost, Path: "/connect"}), wait)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := decodeReply(m.Data, 1<<20); err != nil || rep.Declined != "no websocket transport" {
		t.Errorf("a /connect for a worker without WebSocket: %+v, %v", rep, err)
	}

	ws := startWebSocketWorker(t, url, "b", 10, 1)
	fd.waitWorkers(t, "a", "b")
	ownerOf(t, connect(t, fd), ws)
	connectSocket(t, fd) // b is full
	waitSockets(t, map[string]int{"b": 1}, ws)
	req, err := http.NewRequest(http.MethodOptions, fd.url("/connect"), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", "https://app.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		resp.Header.Get("Access-Control-Allow-Methods") == "" {
		t.Errorf("OPTIONS /connect: %d %v", resp.StatusCode, resp.Header)
	}
	if status, _, h, err := doHeader(http.MethodGet, fd.url("/connect"), nil); err != nil || status != http.StatusMethodNotAllowed || h.Get("Allow") != "POST" {
		t.Errorf("GET /connect: %d, Allow %q, %v; want 405 with Allow: POST", status, h.Get("Allow"), err)
	}
}

func TestNewWorkerRefusesAWebSocketItCannotServe(t *testing.T) {
	url := natstest.Embedded(t)
	nc := natstest.Connect(t, url)
	for name, mutate := range map[string]func(*WebSocketOptions){
		"no listener":          func(o *WebSocketOptions) { o.Listener = nil },
		"no public URL":        func(o *WebSocketOptions) { o.Server.PublicURL = "" },
		"an http public URL":   func(o *WebSocketOptions) { o.Server.PublicURL = "http://w1.example/ws" },
		"a public URL's query": func(o *WebSocketOptions) { o.Server.PublicURL = "wss://w1.example/ws?a=1" },
		"no pipeline":          func(o *WebSocketOptions) { o.Server.NewPipeline = nil },
	} {
		o := testWebSocket(t, 1)
		ln := o.Listener
		mutate(o)
		if _, err := NewWorker(nc, testServer(1), WorkerOptions{ID: "a", WebSocket: o}); err == nil {
			t.Errorf("NewWorker with %s succeeded", name)
		}
		_ = ln.Close()
	}
}
