package openaiapi

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/framewire/framewire/frames"
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

func TestCategory(t *testing.T) {
	for _, tc := range []struct {
		status int
		auth   bool
		want   frames.ErrorCategory
	}{
		{429, false, frames.ErrorTransient}, {503, true, frames.ErrorTransient},
		{401, true, frames.ErrorPermanent}, {403, false, frames.ErrorUnknown}, {400, true, frames.ErrorUnknown},
	} {
		if got := Category(tc.status, tc.auth); got != tc.want {
			t.Errorf("Category(%d, %v) = %v, want %v", tc.status, tc.auth, got, tc.want)
		}
	}
}
