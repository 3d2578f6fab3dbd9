package openaiapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParseReadsEveryErrorShape(t *testing.T) {
	fastAPI := Parse{Detail: DetailText}
	cases := []struct {
		name string
		p    Parse
		body string
		want Error
	}{
		{"openai object", Parse{}, `{"error":{"message":"Bad key","type":"invalid_request_error","code":"invalid_api_key","param":null}}`,
			Error{StatusCode: 401, Message: "Bad key", Type: "invalid_request_error", Code: "invalid_api_key"}},
		{"numeric code", Parse{}, `{"error":{"message":"m","code":42}}`, Error{StatusCode: 401, Message: "m", Code: "42"}},
		{"error string", Parse{}, `{"error":"plain"}`, Error{StatusCode: 401, Message: "plain"}},
		{"detail ignored without Detail", Parse{}, `{"detail":"x"}`, Error{StatusCode: 401, Body: `{"detail":"x"}`}},
		{"detail string", fastAPI, `{"detail":"Voice not found"}`, Error{StatusCode: 401, Message: "Voice not found"}},
		{"detail validation", fastAPI, `{"detail":[{"loc":["body","model"],"msg":"field required"}]}`,
			Error{StatusCode: 401, Message: "body.model: field required"}},
		{"detail raw", Parse{Detail: DetailRaw}, `{"detail":{"a":1}}`, Error{StatusCode: 401, Message: `{"a":1}`}},
		{"html", Parse{}, "  <html>bad gateway</html>\n", Error{StatusCode: 401, Body: "<html>bad gateway</html>"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Parse(401, []byte(tc.body)); got != tc.want {
				t.Errorf("Parse(%s) = %+v, want %+v", tc.body, got, tc.want)
			}
		})
	}
}

func TestParseClipsLongBodiesOnARuneBoundary(t *testing.T) {
	got := Parse{BodyLimit: 4}.Parse(500, []byte("abcé…more")).Body
	if got != "abc…" {
		t.Errorf("Body = %q, want %q", got, "abc…")
	}
}

func TestDescribe(t *testing.T) {
	e := Error{StatusCode: 429, Message: "slow down", Type: "rate", Code: "c"}
	if got, want := e.Describe("openai tts", ""), "openai tts: HTTP 429 Too Many Requests: slow down (type rate, code c)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	inStream := Error{StatusCode: 200, Body: "oops"}
	if got, want := inStream.Describe("openai", "error in stream"), "openai: error in stream: oops"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseRetryAfter(t *testing.T) {
	if got := ParseRetryAfter("1.5"); got != 1500*time.Millisecond {
		t.Errorf("seconds: %v", got)
	}
	for _, v := range []string{"", "soon", "-3"} {
		if got := ParseRetryAfter(v); got != 0 {
			t.Errorf("ParseRetryAfter(%q) = %v, want 0", v, got)
		}
	}
	if got := ParseRetryAfter(time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)); got < 50*time.Minute {
		t.Errorf("date: %v", got)
	}
}

func TestNewRequestHeaderPrecedence(t *testing.T) {
	p := Post{URL: "http://x/v1", ContentType: "application/json", Accept: "text/event-stream", APIKey: "k",
		Header: http.Header{"Content-Type": {"text/plain"}, "X-Org": {"acme"}}}
	req, err := p.NewRequest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := req.Header.Values("Content-Type"); len(got) != 1 || got[0] != "application/json" {
		t.Errorf("copied first: Content-Type = %q, want the fixed one only", got)
	}
	if req.Header.Get("Authorization") != "Bearer k" || req.Header.Get("X-Org") != "acme" || req.Header.Get("Accept") != "text/event-stream" {
		t.Errorf("headers = %v", req.Header)
	}
	p.AppendHeader = true
	req, _ = p.NewRequest(context.Background())
	if got := req.Header.Values("Content-Type"); len(got) != 2 {
		t.Errorf("appended: Content-Type = %q, want both values", got)
	}
}

func TestRetryDo(t *testing.T) {
	cases := []struct {
		name     string
		statuses []int
		max      int
		calls    int32
		wantOK   bool
	}{
		{"ok first", []int{200}, 2, 1, true},
		{"429 then ok", []int{429, 200}, 2, 2, true},
		{"5xx exhausted", []int{503, 503, 503, 503}, 2, 3, false},
		{"400 not retried", []int{400, 200}, 2, 1, false},
		{"zero value never retries", []int{500, 200}, 0, 1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				i := n.Add(1) - 1
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(tc.statuses[i])
			}))
			defer srv.Close()
			r := Retry{Max: tc.max, Backoff: time.Millisecond, MaxBackoff: time.Millisecond}
			failedErr := errors.New("failed")
			resp, err := r.Do(context.Background(), func(ctx context.Context) (*http.Response, error) {
				req, _ := Post{URL: srv.URL}.NewRequest(ctx)
				return http.DefaultClient.Do(req)
			}, func(err error) error { return err }, func(resp *http.Response) error {
				resp.Body.Close()
				return failedErr
			})
			if resp != nil {
				resp.Body.Close()
			}
			if (err == nil) != tc.wantOK || (err != nil && !errors.Is(err, failedErr)) {
				t.Errorf("err = %v, want ok %v", err, tc.wantOK)
			}
			if n.Load() != tc.calls {
				t.Errorf("%d calls, want %d", n.Load(), tc.calls)
			}
		})
	}
}

func TestRetryDoWrapsConnectionErrorsAndStopsWithContext(t *testing.T) {
	boom := errors.New("refused")
	var calls int
	r := Retry{Max: 1, Backoff: time.Millisecond, MaxBackoff: time.Millisecond}
	_, err := r.Do(context.Background(), func(context.Context) (*http.Response, error) {
		calls++
		return nil, boom
	}, func(err error) error { return errors.Join(errors.New("wrapped"), err) }, nil)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "wrapped") || calls != 2 {
		t.Errorf("err = %v after %d calls", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = r.Do(ctx, func(context.Context) (*http.Response, error) { return nil, boom }, func(err error) error { return err }, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

// FuzzParse: any error body parses without a panic into an error that keeps
// its status and stays valid UTF-8 when clipped from valid UTF-8.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
		`{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
		`{"error":"plain"}`,
		`{"detail":"Voice not found"}`,
		`{"detail":[{"loc":["body","file"],"msg":"field required","type":"value_error.missing"}]}`,
		"<html><head><title>502 Bad Gateway</title></head></html>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, p := range []Parse{{}, {Detail: DetailText}, {Detail: DetailRaw, BodyLimit: 7}} {
			e := p.Parse(503, body)
			if e.StatusCode != 503 {
				t.Fatalf("status %d", e.StatusCode)
			}
			if utf8.Valid(body) && !utf8.ValidString(e.Body) {
				t.Fatalf("clipped body %q is not UTF-8", e.Body)
			}
			if !strings.HasPrefix(e.Describe("x", ""), "x: HTTP 503 Service Unavailable") {
				t.Fatalf("text %q", e.Describe("x", ""))
			}
		}
	})
}
