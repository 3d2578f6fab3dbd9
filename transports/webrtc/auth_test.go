package webrtc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

// watchedBody is a request body that records whether it was read.
type watchedBody struct {
	io.Reader
	read *atomic.Bool
}

func (b watchedBody) Read(p []byte) (int, error) {
	b.read.Store(true)
	return b.Reader.Read(p)
}

func (watchedBody) Close() error { return nil }

// signallingRoutes are the routes that take a body, as method and path.
var signallingRoutes = [][2]string{
	{"POST", "/start"}, {"POST", "/api/offer"}, {"PATCH", "/api/offer"},
	{"POST", "/sessions/%s/api/offer"}, {"PATCH", "/sessions/%s/api/offer"},
}

func TestAuthorizeRunsBeforeAnyWorkAndRefusesWith401Or403(t *testing.T) {
	var built atomic.Int32
	var asked atomic.Int32
	srv, err := NewServer(Options{
		Logger: nopLogger(),
		NewPipeline: func(ctx context.Context, s *Session) (*pipeline.Task, error) {
			built.Add(1)
			return nopFactory(ctx, s)
		},
		AllowOrigins: []string{"*"},
		Authorize: func(r *http.Request) error {
			asked.Add(1)
			switch r.Header.Get("X-Who") {
			case "ann":
				return nil
			case "bob":
				return fmt.Errorf("bob is banned: %w", ErrForbidden)
			}
			return errors.New("no credentials from " + r.RemoteAddr)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	serve := func(method, path, who string) (*httptest.ResponseRecorder, bool) {
		var read atomic.Bool
		req := localRequest(method, path, nil)
		req.Body = watchedBody{strings.NewReader(`{"sdp":"v=0","type":"offer"}`), &read}
		req.Header.Set("Content-Type", "application/json")
		if who != "" {
			req.Header.Set("X-Who", who)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec, read.Load()
	}
	rec, _ := serve("POST", "/start", "ann")
	var id string
	if _, err := fmt.Sscanf(rec.Body.String(), `{"sessionId":%q}`, &id); err != nil {
		t.Fatalf("/start as ann: %d %s", rec.Code, rec.Body)
	}
	for _, route := range signallingRoutes {
		path := route[1]
		if strings.Contains(path, "%s") {
			path = fmt.Sprintf(path, id)
		}
		for who, want := range map[string]int{"": 401, "bob": 403} {
			rec, read := serve(route[0], path, who)
			if rec.Code != want || read {
				t.Errorf("%s %s as %q: %d, body read %v; want %d before reading", route[0], path, who, rec.Code, read, want)
			}
			if body := rec.Body.String(); strings.Contains(body, "banned") || strings.Contains(body, "credentials") {
				t.Errorf("%s %s: the refusal's reason reached the client: %s", route[0], path, body)
			}
			if want == 401 && rec.Header().Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s: a 401 without WWW-Authenticate", route[0], path)
			}
		}
	}
	if n := built.Load(); n != 0 {
		t.Errorf("%d pipelines built for refused requests", n)
	}
	srv.mu.Lock()
	starts := srv.starts.len()
	srv.mu.Unlock()
	if starts != 1 {
		t.Errorf("%d /start ids stored, want only ann's", starts)
	}
	// A CORS preflight carries no credentials: it is answered without.
	before := asked.Load()
	req := localRequest("OPTIONS", "/start", nil)
	req.Header.Set("Origin", "http://page.test")
	req.Header.Set("Access-Control-Request-Method", "POST")
	pre := httptest.NewRecorder()
	srv.ServeHTTP(pre, req)
	if pre.Code != http.StatusNoContent || asked.Load() != before {
		t.Errorf("preflight: %d, Authorize asked %d times; want 204 without asking", pre.Code, asked.Load()-before)
	}
}

// headerTransport adds a header to every request, as the browser client
// does with its startBot headers.
type headerTransport struct{ key, value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.key, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

func TestBearerTokensAdmitsAClientWithTheTokenOnEveryRequest(t *testing.T) {
	h := newHarness(t, Options{Authorize: BearerTokens("old-token", "s3cret-token")})
	ctx := testContext(t, 20*time.Second)
	withToken := &http.Client{Transport: headerTransport{"Authorization", "Bearer s3cret-token"}}
	c := h.dial(ctx, webrtctest.Options{HTTP: withToken})
	eventually(t, 5*time.Second, "candidates patched with the token", func() bool { return c.Patches.Load() > 0 })
	for _, hdr := range []string{"", "Bearer s3cret-toke", "Bearer s3cret-token2", "Basic czNjcmV0LXRva2Vu", "Bearer  "} {
		status, _, _ := do(t, "POST", h.url("/start"), "{}", "Authorization", hdr)
		if status != http.StatusUnauthorized {
			t.Errorf("Authorization %q: %d, want 401", hdr, status)
		}
	}
	if status, _, _ := do(t, "POST", h.url("/start"), "{}", "Authorization", "bearer old-token"); status != http.StatusOK {
		t.Errorf("the second token, scheme in lower case: %d", status)
	}
	refuseAll := BearerTokens("", "")
	if err := refuseAll(httptest.NewRequest("POST", "/", nil)); err == nil {
		t.Error("BearerTokens with no token admitted a request")
	}
}

func TestParseBearer(t *testing.T) {
	for in, want := range map[string]string{
		"Bearer abc":               "abc",
		"bEaReR   a-b.c_d~e+f/g==": "a-b.c_d~e+f/g==",
		"Bearer abc def":           "",
		"Bearer ab=c":              "",
		"Bearer ===":               "",
		"Bearerabc":                "",
		"Bearer":                   "",
		"Bearer \tabc":             "",
		"Basic abc":                "",
	} {
		got, ok := parseBearer(in)
		if got != want || ok != (want != "") {
			t.Errorf("parseBearer(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func FuzzParseBearer(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer  x==", "Bearer", "Basic dXNlcg==", "Bearer a b", "Bearer =", "Bearer \x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		tok, ok := parseBearer(h)
		if !ok {
			if tok != "" {
				t.Fatalf("refused %q with a token %q", h, tok)
			}
			return
		}
		if !isToken68(tok) || !strings.HasSuffix(h, tok) || strings.ContainsAny(tok, " \t\r\n") {
			t.Fatalf("parseBearer(%q) = %q", h, tok)
		}
		if again, ok := parseBearer("Bearer " + tok); !ok || again != tok {
			t.Fatalf("%q does not round-trip", tok)
		}
	})
}

// Row 7: POST /start and /api/offer as text/plain from another origin
// made a session: a simple request, which needs no preflight, so any page
// the operator visited could create sessions.
func TestOnlyJSONBodiesAreAcceptedSoOtherOriginsNeedAPreflight(t *testing.T) {
	h := newHarness(t, Options{AllowOrigins: []string{"http://page.test"}})
	id := startID(t, h, "{}")
	offer := chromeOffer(t)
	for _, route := range signallingRoutes {
		path := route[1]
		if strings.Contains(path, "%s") {
			path = fmt.Sprintf(path, id)
		}
		body := offer
		if route[0] == "PATCH" {
			body = `{"pc_id":"x","candidates":[]}`
		}
		// What a page may send without a preflight: the three "simple"
		// types, or no type at all (a Blob body).
		for _, ct := range []string{"text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "", "application/jsonx"} {
			req, err := http.NewRequest(route[0], h.url(path), strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Origin", "http://evil.test")
			if ct != "" {
				req.Header.Set("Content-Type", ct)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnsupportedMediaType {
				t.Errorf("%s %s as %q: %d, want 415", route[0], path, ct, resp.StatusCode)
			}
		}
	}
	if n := h.srv.SessionCount(); n != 0 {
		t.Errorf("%d sessions created by bodies that are not JSON", n)
	}
	h.srv.mu.Lock()
	starts := h.srv.starts.len()
	h.srv.mu.Unlock()
	if starts != 1 {
		t.Errorf("%d /start ids stored, want the test's own", starts)
	}
	// A charset parameter is fine.
	status, _, resp := do(t, "POST", h.url("/api/offer"), offer, "Content-Type", "Application/JSON; charset=utf-8")
	if status != http.StatusOK {
		t.Errorf("an offer as application/json with a charset: %d %s", status, resp)
	}
}
