package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"

	"github.com/framewire/framewire/internal/natstest"
	"github.com/framewire/framewire/transports/webrtc"
)

func TestNewSessionsGoToTheWorkersAndEachServesItsOwn(t *testing.T) {
	url := natstest.Embedded(t)
	a, b, c := startWorker(t, url, "a", 3), startWorker(t, url, "b", 3), startWorker(t, url, "c", 3)
	fd := startFrontDoor(t, url)
	fd.waitWorkers(t, "a", "b", "c")

	// Nine sessions fill the three workers exactly: a worker at capacity
	// declines and the front door tries another.
	var clients []*client
	for range 9 {
		clients = append(clients, dial(t, fd.url("/api/offer")))
	}
	waitSessions(t, map[string]int{"a": 3, "b": 3, "c": 3}, a, b, c)
	for i, cl := range clients {
		if err := cl.echo("hello " + strconv.Itoa(i)); err != nil {
			t.Errorf("session %d: %v", i, err)
		}
	}

	// All full: a 503 with Retry-After, which the client retries.
	cl, sdp := newClient(t)
	_ = cl
	status, _, h, err := doHeader(http.MethodPost, fd.url("/api/offer"), offerBody{SDP: sdp, Type: "offer"})
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Errorf("a tenth session got status %d, Retry-After %q; want 503 with a Retry-After", status, h.Get("Retry-After"))
	}

	// The cluster's state shows the sessions per worker.
	deadline := time.Now().Add(wait)
	for {
		st := fd.Status()
		got := map[string]int{}
		for _, w := range st.Workers {
			got[w.ID] = w.Sessions
		}
		if cmp.Equal(got, map[string]int{"a": 3, "b": 3, "c": 3}) && st.Sessions == 9 && st.Capacity == 9 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	status, raw := do(t, http.MethodGet, fd.url("/cluster"), nil)
	var st Status
	if err := json.Unmarshal(raw, &st); status != http.StatusOK || err != nil || len(st.Workers) != 3 {
		t.Errorf("GET /cluster: %d %s", status, raw)
	}
	if status, raw := do(t, http.MethodGet, fd.url("/healthz"), nil); status != http.StatusOK {
		t.Errorf("GET /healthz: %d %s", status, raw)
	}
}

func TestNoWorkerMeansServiceUnavailable(t *testing.T) {
	url := natstest.Embedded(t)
	fd := startFrontDoor(t, url)
	for _, path := range []string{"/api/offer", "/start"} {
		status, _, h, err := doHeader(http.MethodPost, fd.url(path), map[string]any{"sdp": "v=0", "type": "offer"})
		if err != nil {
			t.Fatal(err)
		}
		if status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
			t.Errorf("POST %s without workers: %d, Retry-After %q; want 503 with Retry-After", path, status, h.Get("Retry-After"))
		}
	}
	if status, _ := do(t, http.MethodGet, fd.url("/healthz"), nil); status != http.StatusServiceUnavailable {
		t.Errorf("GET /healthz without workers: %d, want 503", status)
	}
}

func TestEveryLaterRequestIsRoutedThroughAnotherFrontDoor(t *testing.T) {
	url := natstest.Embedded(t)
	a, b := startWorker(t, url, "a", 10), startWorker(t, url, "b", 10)
	one, two := startFrontDoor(t, url), startFrontDoor(t, url)
	one.waitWorkers(t, "a", "b")
	two.waitWorkers(t, "a", "b")

	cl := dial(t, one.url("/api/offer"))
	first := cl.pcID
	owner := a
	if b.srv.SessionCount() == 1 {
		owner = b
	}
	sess, ok := owner.srv.Session(first)
	if !ok {
		t.Fatalf("no worker holds pc_id %s", first)
	}

	// Candidates through the other front door.
	if status, raw := do(t, http.MethodPatch, two.url("/api/offer"), cl.candidates()); status != http.StatusOK {
		t.Errorf("PATCH through the other front door: %d %s", status, raw)
	}
	// Renegotiation on the same peer connection: the same pc_id.
	status, ans := post(t, two.url("/api/offer"), offerBody{SDP: cl.localOffer(), PCID: &first})
	if status != http.StatusOK || ans.PCID != first {
		t.Fatalf("renegotiation through the other front door: %d, pc_id %q, want 200 and %q", status, ans.PCID, first)
	}
	cl.apply(ans)
	if err := cl.echo("after renegotiation"); err != nil {
		t.Error(err)
	}

	// Restart: a new peer connection, the same session on the same worker.
	re, sdp := newClient(t)
	status, ans = post(t, two.url("/api/offer"), offerBody{SDP: sdp, PCID: &first, RestartPC: true})
	if status != http.StatusOK {
		t.Fatalf("restart through the other front door: %d", status)
	}
	re.apply(ans)
	re.waitOpen()
	if err := re.echo("after restart"); err != nil {
		t.Error(err)
	}
	if s, ok := owner.srv.Session(re.pcID); !ok || s.ID() != sess.ID() {
		t.Errorf("the restart's pc_id %s is not session %s's on worker %s", re.pcID, sess.ID(), owner.ID())
	}
	if status, raw := do(t, http.MethodPatch, one.url("/api/offer"), re.candidates()); status != http.StatusOK {
		t.Errorf("PATCH of the restarted pc_id through the first front door: %d %s", status, raw)
	}
	waitSessions(t, map[string]int{owner.ID(): 1, other(owner, a, b).ID(): 0}, a, b)

	// An unknown pc_id: the PATCH is a 404, the offer a new session.
	unknown := "no-such-pc"
	if status, _ := do(t, http.MethodPatch, two.url("/api/offer"), map[string]any{"pc_id": unknown, "candidates": []any{}}); status != http.StatusNotFound {
		t.Errorf("PATCH of an unknown pc_id: %d, want 404", status)
	}
}

func other(w *testWorker, ws ...*testWorker) *testWorker {
	for _, o := range ws {
		if o != w {
			return o
		}
	}
	return nil
}

func TestStartFlowIsRoutedThroughAnotherFrontDoor(t *testing.T) {
	url := natstest.Embedded(t)
	a, b := startWorker(t, url, "a", 10), startWorker(t, url, "b", 10)
	one, two := startFrontDoor(t, url), startFrontDoor(t, url)
	one.waitWorkers(t, "a", "b")
	two.waitWorkers(t, "a", "b")

	status, raw := do(t, http.MethodPost, one.url("/start"), map[string]any{"body": map[string]any{"user": "u1"}})
	var start struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(raw, &start); status != http.StatusOK || err != nil || start.SessionID == "" {
		t.Fatalf("POST /start: %d %s", status, raw)
	}
	path := "/sessions/" + start.SessionID + "/api/offer"

	cl, sdp := newClient(t)
	status, ans := post(t, two.url(path), offerBody{SDP: sdp})
	if status != http.StatusOK {
		t.Fatalf("POST %s through the other front door: %d", path, status)
	}
	cl.apply(ans)
	cl.waitOpen()
	if err := cl.echo("start flow"); err != nil {
		t.Error(err)
	}
	if status, raw := do(t, http.MethodPatch, one.url(path), cl.candidates()); status != http.StatusOK {
		t.Errorf("PATCH %s through the first front door: %d %s", path, status, raw)
	}
	sa, oka := a.srv.Session(cl.pcID)
	sb, okb := b.srv.Session(cl.pcID)
	switch {
	case oka && sa.StartID() == start.SessionID, okb && sb.StartID() == start.SessionID:
	default:
		t.Errorf("no worker has the session of /start id %s", start.SessionID)
	}
	// Anything else under the session path: 200, as the single server.
	if status, _ := do(t, http.MethodPost, two.url("/sessions/"+start.SessionID+"/other"), map[string]any{}); status != http.StatusOK {
		t.Errorf("POST /sessions/<id>/other: %d, want 200", status)
	}
	if status, _ := do(t, http.MethodPost, two.url("/sessions/not-a-session/api/offer"), offerBody{SDP: sdp, Type: "offer"}); status != http.StatusNotFound {
		t.Errorf("an offer for an unknown session: %d, want 404", status)
	}
}

func TestDrainingWorkerDeclinesAndEndsItsSessionsGracefully(t *testing.T) {
	url := natstest.Embedded(t)
	a := startWorker(t, url, "a", 10)
	fd := startFrontDoor(t, url)
	fd.waitWorkers(t, "a")
	cl := dial(t, fd.url("/api/offer"))
	b := startWorker(t, url, "b", 10)
	fd.waitWorkers(t, "a", "b")

	a.cancel() // SIGTERM
	cl.waitEnded()
	if err := a.stopped(t); err != nil {
		t.Errorf("a drained worker's Run: %v, want nil", err)
	}
	fd.waitWorkers(t, "b")

	for range 3 {
		c := dial(t, fd.url("/api/offer"))
		if err := c.echo("after the drain"); err != nil {
			t.Error(err)
		}
	}
	waitSessions(t, map[string]int{"a": 0, "b": 3}, a, b)
}

func TestDrainingWorkerDeclinesNewSessionsSentToIt(t *testing.T) {
	url := natstest.Embedded(t)
	a := startWorker(t, url, "a", 10)
	fd := startFrontDoor(t, url)
	fd.waitWorkers(t, "a")
	cl := dial(t, fd.url("/api/offer"))
	_ = cl
	a.draining.Store(true) // as Run does first when it drains

	nc := natstest.Connect(t, url)
	data, _ := json.Marshal(request{V: Version, Kind: kindNew, Method: http.MethodPost, Path: "/start"})
	m, err := nc.Request(a.subj.worker("a"), data, wait)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := decodeReply(m.Data, 1<<20)
	if err != nil || rep.Declined != "draining" {
		t.Errorf("a new session for a draining worker: %+v, %v; want declined \"draining\"", rep, err)
	}
	// Its sessions' requests are still served.
	data, _ = json.Marshal(request{V: Version, Kind: kindRoute, Method: http.MethodPatch, Path: "/api/offer",
		Header: http.Header{"Content-Type": {"application/json"}}, Body: mustJSON(cl.candidates())})
	if m, err = nc.Request(a.subj.worker("a"), data, wait); err != nil {
		t.Fatal(err)
	}
	if rep, err = decodeReply(m.Data, 1<<20); err != nil || rep.Status != http.StatusOK {
		t.Errorf("a PATCH for a draining worker's session: %+v, %v; want 200", rep, err)
	}
}

// The worker's reply names the ids the Server's OnSession hook reported
// for the request (the sessionId of a /start, the pc_id of a new
// session), which the front door routes by; no body is read for them.
func TestTheWorkersReplyNamesTheIdsItsServerCreated(t *testing.T) {
	url := natstest.Embedded(t)
	a := startWorker(t, url, "a", 10)
	nc := natstest.Connect(t, url)
	ask := func(r request) reply {
		t.Helper()
		r.V = Version
		r.Header = http.Header{"Content-Type": {"application/json"}}
		// Run subscribes on its own goroutine: until it has, NATS says
		// no one answers the worker's subject.
		var m *nats.Msg
		var err error
		for deadline := time.Now().Add(wait); ; time.Sleep(10 * time.Millisecond) {
			m, err = nc.Request(a.subj.worker("a"), mustJSON(r), wait)
			if !errors.Is(err, nats.ErrNoResponders) || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		rep, err := decodeReply(m.Data, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := ask(request{Kind: kindNew, Method: http.MethodPost, Path: "/start", Body: []byte(`{}`)})
	var start struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(rep.Body, &start); err != nil || rep.Status != http.StatusOK || rep.StartID != start.SessionID {
		t.Errorf("a /start: status %d, start_id %q, body %s; want 200 and the body's sessionId", rep.Status, rep.StartID, rep.Body)
	}
	_, sdp := newClient(t)
	rep = ask(request{Kind: kindRoute, Method: http.MethodPost, Path: "/sessions/" + start.SessionID + "/api/offer",
		Body: mustJSON(offerBody{SDP: sdp, Type: "offer"})})
	var ans struct {
		PCID string `json:"pc_id"`
	}
	if err := json.Unmarshal(rep.Body, &ans); err != nil || rep.Status != http.StatusOK || rep.PCID == "" || rep.PCID != ans.PCID {
		t.Errorf("the /start flow's offer: status %d, pc_id %q, body's %q; want 200 and the answer's pc_id", rep.Status, rep.PCID, ans.PCID)
	}
	if !a.srv.Owns(rep.PCID) || !a.srv.Owns(start.SessionID) {
		t.Error("the Server does not own the ids the worker replied with")
	}
}

// A full worker declines a /start, so that the front door asks a worker
// with room: the /start flow's offer would come back to it.
func TestAFullWorkerDeclinesAStart(t *testing.T) {
	url := natstest.Embedded(t)
	a := startWorker(t, url, "a", 1)
	fd := startFrontDoor(t, url)
	fd.waitWorkers(t, "a")
	dial(t, fd.url("/api/offer")) // a is full
	nc := natstest.Connect(t, url)
	data := mustJSON(request{V: Version, Kind: kindNew, Method: http.MethodPost, Path: "/start",
		Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{}`)})
	m, err := nc.Request(a.subj.worker("a"), data, wait)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := decodeReply(m.Data, 1<<20); err != nil || rep.Declined != "full" {
		t.Errorf("a /start for a full worker: %+v, %v; want declined \"full\"", rep, err)
	}
}

// The worker adds its hooks to the Server's and keeps the
// application's: Admit is still asked, OnSession still told.
func TestNewWorkerKeepsTheApplicationsHooks(t *testing.T) {
	url := natstest.Embedded(t)
	opts := testServer(10)
	var refuse atomic.Bool
	refuse.Store(true)
	var asked, told atomic.Int32
	opts.Admit = func(*http.Request) error {
		asked.Add(1)
		if refuse.Load() {
			return errors.New("the application says no")
		}
		return nil
	}
	opts.OnSession = func(ev webrtc.SessionEvent) {
		if ev.Kind == webrtc.StartIssued {
			told.Add(1)
		}
	}
	w, err := NewWorker(natstest.Connect(t, url), opts, WorkerOptions{ID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Server().Close() })
	start := func() int {
		r := httptest.NewRequest(http.MethodPost, "/start", strings.NewReader(`{}`))
		r.Header.Set("Content-Type", "application/json")
		r.Host = "localhost"
		rec := httptest.NewRecorder()
		w.Server().ServeHTTP(rec, r)
		return rec.Code
	}
	if code := start(); code != http.StatusServiceUnavailable {
		t.Errorf("a /start the application's Admit refuses: %d, want 503", code)
	}
	refuse.Store(false)
	if code := start(); code != http.StatusOK {
		t.Errorf("a /start the application's Admit takes: %d, want 200", code)
	}
	if asked.Load() != 2 || told.Load() != 1 {
		t.Errorf("the application's Admit was asked %d times (want 2), its OnSession told of %d starts (want 1)", asked.Load(), told.Load())
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func TestWorkerDeathLosesOnlyItsSessions(t *testing.T) {
	url := natstest.Embedded(t)
	a, b := startWorker(t, url, "a", 1), startWorker(t, url, "b", 10)
	fd := startFrontDoor(t, url)
	fd.waitWorkers(t, "a", "b")
	// a takes one session (it is the only one with room for the second
	// after that fills... whichever order): fill a first.
	var onA, onB *client
	for onA == nil || onB == nil {
		c := dial(t, fd.url("/api/offer"))
		if _, ok := a.srv.Session(c.pcID); ok {
			onA = c
		} else if onB == nil {
			onB = c
		}
	}
	before := sessionsOn(b)["b"]

	killed := time.Now()
	a.nc.Close() // the worker's NATS connection goes away abruptly
	onA.waitEnded()
	if err := a.stopped(t); !errors.Is(err, ErrConnectionClosed) {
		t.Errorf("Run of a worker whose NATS connection was closed: %v, want ErrConnectionClosed", err)
	}
	fd.waitWorkers(t, "b")
	if d := time.Since(killed); d > 5*time.Second {
		t.Errorf("the front door dropped the dead worker after %v", d)
	}
	if err := onB.echo("still here"); err != nil {
		t.Errorf("a session on the live worker: %v", err)
	}
	// Its sessions' signalling: the PATCH finds no owner, a restart
	// becomes a new session on the live worker.
	if status, _ := do(t, http.MethodPatch, fd.url("/api/offer"), onA.candidates()); status != http.StatusNotFound {
		t.Errorf("PATCH for the dead worker's session: %d, want 404", status)
	}
	re, sdp := newClient(t)
	status, ans := post(t, fd.url("/api/offer"), offerBody{SDP: sdp, PCID: &onA.pcID, RestartPC: true})
	if status != http.StatusOK {
		t.Fatalf("restart of the dead worker's session: %d", status)
	}
	re.apply(ans)
	re.waitOpen()
	c := dial(t, fd.url("/api/offer"))
	if err := c.echo("new"); err != nil {
		t.Error(err)
	}
	waitSessions(t, map[string]int{"b": before + 2}, b)
}

func TestFrontDoorRestartLeavesTheSessionsRoutable(t *testing.T) {
	url := natstest.Embedded(t)
	startWorker(t, url, "a", 10)
	startWorker(t, url, "b", 10)
	old := startFrontDoor(t, url)
	old.waitWorkers(t, "a", "b")
	cl := dial(t, old.url("/api/offer"))
	status, raw := do(t, http.MethodPost, old.url("/start"), map[string]any{})
	var start struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(raw, &start); status != http.StatusOK || err != nil {
		t.Fatalf("POST /start: %d %s", status, raw)
	}
	old.stop()

	// A new front door knows the workers at once (it asks them) and finds
	// the sessions' owners by asking too.
	fresh := startFrontDoor(t, url)
	if got := len(fresh.Status().Workers); got != 2 {
		t.Errorf("a new front door knows %d workers, want 2", got)
	}
	if err := cl.echo("across the restart"); err != nil {
		t.Error(err)
	}
	if status, raw := do(t, http.MethodPatch, fresh.url("/api/offer"), cl.candidates()); status != http.StatusOK {
		t.Errorf("PATCH through the new front door: %d %s", status, raw)
	}
	pc := cl.pcID
	status, ans := post(t, fresh.url("/api/offer"), offerBody{SDP: cl.localOffer(), PCID: &pc})
	if status != http.StatusOK || ans.PCID != pc {
		t.Errorf("renegotiation through the new front door: %d, pc_id %q", status, ans.PCID)
	}
	s2, sdp := newClient(t)
	status, ans = post(t, fresh.url("/sessions/"+start.SessionID+"/api/offer"), offerBody{SDP: sdp})
	if status != http.StatusOK {
		t.Fatalf("the /start flow's offer through the new front door: %d", status)
	}
	s2.apply(ans)
	s2.waitOpen()
}

func TestFrontDoorRefusesWhatIsNotSignalling(t *testing.T) {
	url := natstest.Embedded(t)
	fd := startFrontDoor(t, url)
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/", http.StatusNotFound},
		{http.MethodPost, "/other", http.StatusNotFound},
		{http.MethodGet, "/api/offer", http.StatusMethodNotAllowed},
		{http.MethodPatch, "/start", http.StatusMethodNotAllowed},
		{http.MethodPatch, "/api/offer", http.StatusNotFound}, // no pc_id owner
		{http.MethodPost, "/sessions//api/offer", http.StatusNotFound},
	} {
		status, _ := do(t, tc.method, fd.url(tc.path), map[string]any{"pc_id": "x"})
		if status != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, status, tc.want)
		}
	}
	// An offer over MaxBodyBytes is refused from its Content-Length,
	// before its body is read. The client asks first (Expect:
	// 100-continue), so it never writes the body: otherwise a server that
	// answers and closes while the body is still coming makes the write
	// fail with a reset, not the 413.
	big, _ := json.Marshal(map[string]any{"sdp": string(make([]byte, 300<<10))})
	req, err := http.NewRequest(http.MethodPost, fd.url("/api/offer"), bytes.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: 10 * time.Second}, Timeout: wait}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 300 KiB offer: %d, want 413", res.StatusCode)
	}
}

func TestFrontDoorWithoutNATSAnswersServiceUnavailable(t *testing.T) {
	url := natstest.Embedded(t)
	startWorker(t, url, "a", 10)
	fd := startFrontDoor(t, url)
	fd.waitWorkers(t, "a")
	fd.nc.Close()
	status, _, h, err := doHeader(http.MethodPost, fd.url("/start"), map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Errorf("POST /start without NATS: %d, Retry-After %q; want 503 with Retry-After", status, h.Get("Retry-After"))
	}
	if status, _ := do(t, http.MethodGet, fd.url("/healthz"), nil); status != http.StatusServiceUnavailable {
		t.Errorf("GET /healthz without NATS: %d, want 503", status)
	}
}

func TestCORSPreflightIsAnsweredByAWorkerEvenWhenAllAreFull(t *testing.T) {
	url := natstest.Embedded(t)
	startWorker(t, url, "a", 1)
	fd := startFrontDoor(t, url)
	fd.waitWorkers(t, "a")
	dial(t, fd.url("/api/offer")) // a is full
	for _, path := range []string{"/api/offer", "/sessions/x/api/offer"} {
		req, err := http.NewRequest(http.MethodOptions, fd.url(path), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", "https://app.example")
		req.Header.Set("Access-Control-Request-Method", "PATCH")
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
			resp.Header.Get("Access-Control-Allow-Methods") == "" {
			t.Errorf("OPTIONS %s: %d %v", path, resp.StatusCode, resp.Header)
		}
	}
}

func TestASecondWorkerWithTheSameIDRefusesToRun(t *testing.T) {
	url := natstest.Embedded(t)
	startWorker(t, url, "a", 10)
	fd := startFrontDoor(t, url)
	fd.waitWorkers(t, "a")
	w, err := NewWorker(natstest.Connect(t, url), testServer(10), WorkerOptions{ID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(t.Context()); !errors.Is(err, ErrDuplicateID) {
		t.Errorf("Run of a second worker \"a\": %v, want ErrDuplicateID", err)
	}
}

// TestFrontDoorsOwnAnswersCarryItsCORSHeaders: a page of another origin
// reads the answers the front door gives itself (a 503 when no worker
// takes sessions, a 404 for an id no worker owns): the browser hides an
// answer without Access-Control-Allow-Origin, and the client then sees a
// network error, which it retries, where a 404 stops it. A worker's answer
// carries the worker's CORS headers only.
func TestFrontDoorsOwnAnswersCarryItsCORSHeaders(t *testing.T) {
	url := natstest.Embedded(t)
	fd := startFrontDoorWith(t, url, FrontDoorOptions{AllowOrigins: []string{"https://app.example", "http://127.0.0.1:*"}})
	type want struct {
		Status int
		Origin string // Access-Control-Allow-Origin
	}
	check := func(method, path, origin string, body any, w want) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, err := http.NewRequest(method, fd.url(path), bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", origin)
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := want{resp.StatusCode, strings.Join(resp.Header.Values("Access-Control-Allow-Origin"), ",")}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("%s %s from %s (-want +got):\n%s", method, path, origin, diff)
		}
		if w.Origin != "" && resp.Header.Get("Vary") != "Origin" {
			t.Errorf("%s %s from %s: Vary %q, want Origin", method, path, origin, resp.Header.Values("Vary"))
		}
	}

	// No worker yet: the front door's 503.
	check(http.MethodPost, "/start", "https://app.example", map[string]any{}, want{http.StatusServiceUnavailable, "https://app.example"})

	startWorker(t, url, "a", 10) // its Server allows https://app.example only
	fd.waitWorkers(t, "a")
	for _, tc := range []struct {
		method, path, origin string
		body                 any
		want                 want
	}{
		{http.MethodPost, "/sessions/nobody/api/offer", "http://127.0.0.1:5173", map[string]any{"sdp": "x", "type": "offer"},
			want{http.StatusNotFound, "http://127.0.0.1:5173"}},
		{http.MethodPatch, "/api/offer", "https://app.example", map[string]any{"pc_id": "nobody", "candidates": []any{}},
			want{http.StatusNotFound, "https://app.example"}},
		{http.MethodPost, "/sessions/nobody/api/offer", "https://evil.example", map[string]any{},
			want{http.StatusNotFound, ""}},
		// The worker answers: its headers, one Access-Control-Allow-Origin.
		{http.MethodPost, "/start", "https://app.example", map[string]any{}, want{http.StatusOK, "https://app.example"}},
		// The worker does not allow this origin; the front door adds nothing
		// to the worker's answer.
		{http.MethodPost, "/start", "http://127.0.0.1:5173", map[string]any{}, want{http.StatusOK, ""}},
	} {
		check(tc.method, tc.path, tc.origin, tc.body, tc.want)
	}
}
