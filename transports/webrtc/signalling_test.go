package webrtc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

func do(t *testing.T, method, url, body string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" { // net/http sends req.Host, not a Host header
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestSignallingRejectsBadRequestsWithClearStatuses(t *testing.T) {
	h := newHarness(t, Options{MaxBodyBytes: 4096})
	cases := []struct {
		name, method, path, body string
		status                   int
		detail                   string
	}{
		{"not JSON", "POST", "/api/offer", "{", 400, "invalid JSON"},
		{"empty body", "POST", "/api/offer", "", 400, "empty"},
		{"array", "POST", "/api/offer", "[]", 400, "not a JSON object"},
		{"answer instead of offer", "POST", "/api/offer", `{"sdp":"v=0","type":"answer"}`, 400, `type is "answer"`},
		{"no sdp", "POST", "/api/offer", `{"type":"offer"}`, 400, "sdp is empty"},
		{"sdp of the wrong type", "POST", "/api/offer", `{"sdp":5,"type":"offer"}`, 400, `field "sdp"`},
		{"SDP that does not parse", "POST", "/api/offer", `{"sdp":"hello","type":"offer","pc_id":null}`, 400, "does not parse"},
		{"body too large", "POST", "/api/offer", `{"sdp":"` + strings.Repeat("a", 5000) + `","type":"offer"}`, 413, "over 4096 bytes"},
		{"GET offer", "GET", "/api/offer", "", 405, ""},
		{"PATCH without pc_id", "PATCH", "/api/offer", `{"candidates":[]}`, 400, "pc_id is missing"},
		{"PATCH for an unknown pc", "PATCH", "/api/offer", `{"pc_id":"nope","candidates":[]}`, 404, "Peer connection not found"},
		{"start for another transport", "POST", "/start", `{"transport":"daily"}`, 400, `"daily"`},
		{"offer on an unknown session", "POST", "/sessions/nope/api/offer", `{"sdp":"v=0","type":"offer"}`, 404, "Invalid or not-yet-ready session_id"},
		{"PATCH on an unknown session", "PATCH", "/sessions/nope/api/offer", `{"pc_id":"x","candidates":[]}`, 404, "Invalid or not-yet-ready session_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, hdr, body := do(t, c.method, h.url(c.path), c.body)
			if status != c.status {
				t.Fatalf("status %d, want %d (body %s)", status, c.status, body)
			}
			if c.detail == "" {
				return
			}
			var e struct{ Detail string }
			if err := json.Unmarshal([]byte(body), &e); err != nil || hdr.Get("Content-Type") != "application/json" {
				t.Fatalf("error body %q is not a JSON {detail} (%v)", body, err)
			}
			if !strings.Contains(e.Detail, c.detail) {
				t.Errorf("detail %q does not mention %q", e.Detail, c.detail)
			}
		})
	}
	if n := h.srv.SessionCount(); n != 0 {
		t.Errorf("%d sessions left behind by rejected offers", n)
	}
}

func TestStartReturnsOnlyASessionIDAndTheSessionPathServesOffers(t *testing.T) {
	h := newHarness(t, Options{})
	// client-js sends no body when startBot has no requestData.
	status, _, body := do(t, "POST", h.url("/start"), "")
	if status != 200 {
		t.Fatalf("empty /start: %d %s", status, body)
	}
	status, _, body = do(t, "POST", h.url("/start"), `{"transport":"webrtc","enableDefaultIceServers":false,"body":{"user":"ann"}}`)
	if status != 200 {
		t.Fatalf("/start: %d %s", status, body)
	}
	var resp map[string]any
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	id, _ := resp["sessionId"].(string)
	if id == "" || len(resp) != 1 {
		t.Fatalf("/start replied %s, want only a sessionId", body)
	}
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{OfferURL: h.url("/sessions/" + id + "/api/offer")})
	s, _, _ := h.session(c)
	if s.StartID() != id || string(s.RequestData()) != `{"user":"ann"}` {
		t.Errorf("session start id %q, data %s; want %q and the /start body", s.StartID(), s.RequestData(), id)
	}
	eventually(t, 5*time.Second, "candidates patched on the session path", func() bool { return c.Patches.Load() > 0 })
	// Other paths under a known session answer an empty 200, as Python's runner.
	if status, _, body := do(t, "GET", h.url("/sessions/"+id+"/status"), ""); status != 200 || body != "" {
		t.Errorf("GET under the session: %d %q", status, body)
	}
	// A pc_id of this session is not honoured on another session's path.
	_, _, body2 := do(t, "POST", h.url("/start"), "")
	var other struct{ SessionID string }
	_ = json.Unmarshal([]byte(body2), &other)
	status, _, _ = do(t, "PATCH", h.url("/sessions/"+other.SessionID+"/api/offer"), `{"pc_id":"`+c.PCID()+`","candidates":[]}`)
	if status != 404 {
		t.Errorf("PATCH with a pc_id of another session: %d, want 404", status)
	}
}

func TestStartReturnsICEConfigOnlyWhenThereAreICEServers(t *testing.T) {
	h := newHarness(t, Options{})
	_, _, body := do(t, "POST", h.url("/start"), `{"enableDefaultIceServers":true}`)
	if !strings.Contains(body, `"iceConfig":{"iceServers":[{"urls":["stun:stun.l.google.com:19302"]}]}`) {
		t.Errorf("enableDefaultIceServers: %s", body)
	}
}

func TestCORSPreflightAndHeaders(t *testing.T) {
	h := newHarness(t, Options{AllowOrigins: []string{"http://page.test"}})
	status, hdr, _ := do(t, "OPTIONS", h.url("/api/offer"), "", "Origin", "http://page.test",
		"Access-Control-Request-Method", "PATCH")
	if status != 204 || hdr.Get("Access-Control-Allow-Origin") != "http://page.test" ||
		hdr.Get("Access-Control-Allow-Methods") != "POST, PATCH, OPTIONS" ||
		!strings.Contains(hdr.Get("Access-Control-Allow-Headers"), "Content-Type") {
		t.Errorf("preflight: %d %v", status, hdr)
	}
	_, hdr, _ = do(t, "POST", h.url("/start"), "", "Origin", "http://page.test")
	if hdr.Get("Access-Control-Allow-Origin") != "http://page.test" {
		t.Errorf("POST /start from the page: no Allow-Origin (%v)", hdr)
	}
	_, hdr, _ = do(t, "POST", h.url("/start"), "", "Origin", "http://evil.test")
	if hdr.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("an unlisted origin got Allow-Origin %q", hdr.Get("Access-Control-Allow-Origin"))
	}
}

// An origin pattern "scheme://host:*" allows that host on any port (the
// conformance bot's default: pages on loopback only).
func TestCORSOriginsWithAnyPort(t *testing.T) {
	h := newHarness(t, Options{AllowOrigins: []string{"http://127.0.0.1:*", "http://localhost:*"}})
	for origin, want := range map[string]bool{
		"http://127.0.0.1:5173": true, "http://localhost:3000": true, "http://127.0.0.1": true, "http://LOCALHOST:80": true,
		"http://127.0.0.1.evil.test": false, "http://127.0.0.1:80x": false, "https://127.0.0.1:5173": false,
		"http://evil.test": false, "http://127.0.0.1:123456": false, "http://localhost:": false,
	} {
		_, hdr, _ := do(t, "OPTIONS", h.url("/api/offer"), "", "Origin", origin, "Access-Control-Request-Method", "POST")
		if got := hdr.Get("Access-Control-Allow-Origin") == origin; got != want {
			t.Errorf("origin %q allowed %v, want %v", origin, got, want)
		}
	}
}

func TestRetryableRefusalsAre5xx(t *testing.T) {
	t.Run("at capacity", func(t *testing.T) {
		h := newHarness(t, Options{MaxSessions: 1})
		ctx := testContext(t, 20*time.Second)
		h.dial(ctx, webrtctest.Options{})
		_, err := webrtctest.Dial(ctx, webrtctest.Options{OfferURL: h.url("/api/offer")})
		var se *webrtctest.StatusError
		if !errors.As(err, &se) || se.Code != 503 {
			t.Fatalf("second client at MaxSessions 1: %v, want a 503", err)
		}
	})
	t.Run("pipeline factory failure", func(t *testing.T) {
		h := newHarness(t, Options{NewPipeline: func(context.Context, *Session) (*pipeline.Task, error) {
			return nil, errors.New("no LLM today")
		}})
		ctx := testContext(t, 20*time.Second)
		_, err := webrtctest.Dial(ctx, webrtctest.Options{OfferURL: h.url("/api/offer")})
		var se *webrtctest.StatusError
		// The client is told an error id, never what the factory said.
		if !errors.As(err, &se) || se.Code != 500 || strings.Contains(se.Body, "no LLM today") || !strings.Contains(se.Body, "error id ") {
			t.Fatalf("factory error: %v, want a 500 with an error id and without the factory's text", err)
		}
		if n := h.srv.SessionCount(); n != 0 {
			t.Errorf("%d sessions left after a failed factory", n)
		}
	})
	t.Run("shutting down", func(t *testing.T) {
		h := newHarness(t, Options{})
		ctx := testContext(t, 20*time.Second)
		if err := h.srv.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		_, err := webrtctest.Dial(ctx, webrtctest.Options{OfferURL: h.url("/api/offer")})
		var se *webrtctest.StatusError
		if !errors.As(err, &se) || se.Code != 503 {
			t.Fatalf("offer after Shutdown: %v, want a 503", err)
		}
	})
}

func TestPatchAddsCandidatesAndAcceptsEndOfCandidates(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{})
	// The browser trickles its candidates after the answer, every 200 ms.
	eventually(t, 5*time.Second, "the client's candidates were patched", func() bool {
		return c.Patches.Load() > 0 && c.CandidatesOut.Load() > 0
	})
	for _, body := range []string{
		`{"pc_id":"` + c.PCID() + `","candidates":[{"candidate":"","sdp_mid":"0","sdp_mline_index":0}]}`,
		`{"pc_id":"` + c.PCID() + `","candidates":[{"candidate":"candidate:1 1 udp 2122260223 127.0.0.1 54321 typ host","sdp_mid":"0","sdp_mline_index":0}]}`,
	} {
		if status, _, resp := do(t, "PATCH", h.url("/api/offer"), body); status != 200 || strings.TrimSpace(resp) != `{"status":"success"}` {
			t.Errorf("PATCH %s: %d %s", body, status, resp)
		}
	}
	status, _, resp := do(t, "PATCH", h.url("/api/offer"),
		`{"pc_id":"`+c.PCID()+`","candidates":[{"candidate":"candidate:garbage","sdp_mid":"0","sdp_mline_index":0}]}`)
	if status != 400 || !strings.Contains(resp, "candidate:garbage") {
		t.Errorf("malformed candidate: %d %s, want a 400 naming it", status, resp)
	}
	if err := c.Send(`{"label":"rtvi-ai","type":"client-ready","id":"x1","data":{}}`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Next(ctx, isType("bot-ready")); err != nil {
		t.Fatal("the session broke after PATCHes:", err)
	}
}

func TestAnswerCarriesEveryCandidateWithoutTrickle(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := testContext(t, 20*time.Second)
	// A client that trickles nothing still connects: the answer is complete.
	c := h.dial(ctx, webrtctest.Options{NoTrickle: true})
	if c.Patches.Load() != 0 {
		t.Fatal("NoTrickle client patched")
	}
}
