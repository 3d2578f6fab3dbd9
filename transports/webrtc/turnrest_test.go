package webrtc

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	pion "github.com/pion/webrtc/v4"
)

func TestTURNRESTCredentialMatchesAKnownVector(t *testing.T) {
	// Computed apart from this code: printf '1767225600:alice' |
	// openssl dgst -sha1 -hmac north-sea -binary | base64
	expires := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	user, cred := turnRESTCredential([]byte("north-sea"), "alice", expires)
	if user != "1767225600:alice" || cred != "Z3ZjfNpYAyfJSL95/LRNsQQD58g=" {
		t.Errorf("credential %q / %q, want 1767225600:alice / Z3ZjfNpYAyfJSL95/LRNsQQD58g=", user, cred)
	}
}

// startICE posts to /start and returns the reply's session id and ICE
// servers.
func startICE(t *testing.T, h *harness, body string) (string, []iceServer, string) {
	t.Helper()
	status, _, resp := do(t, "POST", h.url("/start"), body)
	if status != http.StatusOK {
		t.Fatalf("/start: %d %s", status, resp)
	}
	var r struct {
		SessionID string `json:"sessionId"`
		ICEConfig *struct {
			ICEServers []iceServer `json:"iceServers"`
		} `json:"iceConfig"`
	}
	if err := json.Unmarshal([]byte(resp), &r); err != nil {
		t.Fatal(err)
	}
	if r.ICEConfig == nil {
		return r.SessionID, nil, resp
	}
	return r.SessionID, r.ICEConfig.ICEServers, resp
}

// Row 14: /start returned the operator's static TURN username and
// credential to anyone who asked.
func TestStartHandsOutShortLivedTURNCredentialsAndNeverStaticOnes(t *testing.T) {
	static := []pion.ICEServer{
		{URLs: []string{"stun:stun.example.test:3478", "turn:turn.example.test:3478"}, Username: "operator", Credential: "static-secret"},
		{URLs: []string{"turns:turn.example.test:5349"}, Username: "operator", Credential: "static-secret"},
		{URLs: []string{"stun:open.example.test:3478"}},
	}
	t.Run("static credentials stay on the server", func(t *testing.T) {
		h := newHarness(t, Options{ICEServers: static})
		_, servers, resp := startICE(t, h, "{}")
		if strings.Contains(resp, "static-secret") || strings.Contains(resp, "operator") {
			t.Errorf("/start handed out the static TURN credentials: %s", resp)
		}
		want := []iceServer{{URLs: []string{"stun:stun.example.test:3478"}}, {URLs: []string{"stun:open.example.test:3478"}}}
		if d := cmp.Diff(want, servers); d != "" {
			t.Errorf("ICE servers (-want +got):\n%s", d)
		}
	})
	t.Run("TURN REST credentials per /start", func(t *testing.T) {
		secret := []byte("coturn-static-auth-secret")
		h := newHarness(t, Options{ICEServers: static, TURN: &TURNCredentials{
			URLs: []string{"turn:turn.example.test:3478?transport=udp"}, Secret: secret, TTL: 10 * time.Minute,
			Anonymous: true,
		}})
		before := time.Now()
		id, servers, resp := startICE(t, h, "{}")
		if strings.Contains(resp, "static-secret") {
			t.Errorf("/start handed out the static TURN credentials: %s", resp)
		}
		turn := servers[len(servers)-1]
		if d := cmp.Diff([]string{"turn:turn.example.test:3478?transport=udp"}, turn.URLs); d != "" {
			t.Errorf("TURN URLs (-want +got):\n%s", d)
		}
		// What coturn's use-auth-secret checks: the expiry before the
		// colon is in the future, and the credential is the base64 HMAC-SHA1
		// of the whole username under the shared secret.
		expiry, user, ok := strings.Cut(turn.Username, ":")
		if !ok || user != id {
			t.Fatalf("username %q, want <expiry>:%s", turn.Username, id)
		}
		unix, err := strconv.ParseInt(expiry, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if at := time.Unix(unix, 0); at.Before(before.Add(10*time.Minute-time.Second)) || at.After(time.Now().Add(10*time.Minute+time.Second)) {
			t.Errorf("credentials expire at %v, want 10 min from now", at)
		}
		m := hmac.New(sha1.New, secret)
		m.Write([]byte(turn.Username))
		if want := base64.StdEncoding.EncodeToString(m.Sum(nil)); turn.Credential != want {
			t.Errorf("credential %v, want %s", turn.Credential, want)
		}
		id2, servers2, _ := startICE(t, h, "{}")
		if last := servers2[len(servers2)-1]; id2 == id || last.Username == turn.Username || last.Credential == turn.Credential {
			t.Error("two /start calls got the same TURN credentials")
		}
	})
	t.Run("the operator can still share static ones", func(t *testing.T) {
		h := newHarness(t, Options{ICEServers: static, ShareICECredentials: true})
		_, servers, _ := startICE(t, h, "{}")
		if len(servers) != 3 || servers[0].Username != "operator" || servers[0].Credential != "static-secret" {
			t.Errorf("with ShareICECredentials: %+v", servers)
		}
	})
}

func TestTURNCredentialsNeedURLsAndASecret(t *testing.T) {
	for _, c := range []*TURNCredentials{{Secret: []byte("x"), Anonymous: true}, {URLs: []string{"turn:t"}, Anonymous: true}} {
		if _, err := NewServer(Options{NewPipeline: nopFactory, TURN: c}); err == nil {
			t.Errorf("NewServer accepted %+v", c)
		}
	}
}

func TestNewServerRefusesAForwardedHeaderItCannotReadAndInvalidProxies(t *testing.T) {
	for _, o := range []Options{
		{NewPipeline: nopFactory, ForwardedHeader: "X-Real-IP"},
		{NewPipeline: nopFactory, TrustedProxies: []netip.Prefix{{}}},
	} {
		if _, err := NewServer(o); err == nil {
			t.Errorf("NewServer accepted ForwardedHeader %q, TrustedProxies %v", o.ForwardedHeader, o.TrustedProxies)
		}
	}
}
