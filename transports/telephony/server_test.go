package telephony

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/framewire/framewire/pipeline"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// silent is a Provider whose streams never decode anything; the tests
// here stop before a stream would.
type silent struct{}

func (silent) Name() string      { return "silent" }
func (silent) NewStream() Stream { return nil }

func newTestServer(t *testing.T, opts Options) *Server {
	t.Helper()
	opts.NewPipeline = func(context.Context, *Session) (*pipeline.Task, error) { return nil, nil }
	s, err := NewServer(silent{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestATokenIsGoodForOneStreamUntilItExpires(t *testing.T) {
	s := newTestServer(t, Options{MaxTokens: 2})
	a, b := s.NewToken(), s.NewToken()
	if a == b || len(a) < 20 {
		t.Fatalf("tokens %q and %q: want distinct and unguessable", a, b)
	}
	c := s.NewToken() // past MaxTokens: a is forgotten
	if s.takeToken(a) {
		t.Error("the oldest token was kept past MaxTokens")
	}
	if !s.takeToken(b) || s.takeToken(b) {
		t.Error("a token must be taken once")
	}
	if !s.takeToken(c) {
		t.Error("a fresh token was refused")
	}
	if s.takeToken("") || s.takeToken("never issued") {
		t.Error("a token never issued was taken")
	}
}

func TestAStreamFromABrowserPageIsRefusedBeforeTheUpgrade(t *testing.T) {
	hs := httptest.NewServer(newTestServer(t, Options{}))
	defer hs.Close()
	_, resp, err := websocket.Dial(context.Background(), "ws"+hs.URL[len("http"):], &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("dial with an Origin: %v, %v; want a 403", err, resp)
	}
}

func TestNewServerNeedsAProviderAndAFactory(t *testing.T) {
	if _, err := NewServer(nil, Options{NewPipeline: func(context.Context, *Session) (*pipeline.Task, error) { return nil, nil }}); err == nil {
		t.Error("no provider: no error")
	}
	if _, err := NewServer(silent{}, Options{}); err == nil {
		t.Error("no factory: no error")
	}
}
