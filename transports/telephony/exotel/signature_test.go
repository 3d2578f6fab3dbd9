package exotel

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// vectors is testdata/signature_vectors.json, the headers encoded by
// openssl (see testdata/signature_README.md).
type vectors struct {
	Username      string `json:"username"`
	Password      string `json:"password"`
	Valid         string `json:"valid"`
	WrongPassword string `json:"wrong_password"`
	WrongUser     string `json:"wrong_user"`
	NoColon       string `json:"no_colon"`
	Empty         string `json:"empty"`
}

func loadVectors(t testing.TB) vectors {
	t.Helper()
	b, err := os.ReadFile("testdata/signature_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs vectors
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	return vs
}

// upgrade is the applet's WebSocket upgrade request from addr.
func upgrade(auth, addr string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "https://bot.example.com/exotel/media?sample-rate=8000", nil)
	r.Header.Set("Connection", "Upgrade")
	r.Header.Set("Upgrade", "websocket")
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	r.RemoteAddr = addr
	return r
}

func mustNetworks(t testing.TB, s string) []netip.Prefix {
	t.Helper()
	n, err := ParseNetworks(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCheckBasicCredentials(t *testing.T) {
	vs := loadVectors(t)
	v := Verifier{Username: vs.Username, Password: vs.Password}
	tests := []struct {
		name, auth string
		want       error
	}{
		{"the configured credentials", vs.Valid, nil},
		{"scheme in lower case", strings.Replace(vs.Valid, "Basic", "basic", 1), nil},
		{"wrong password", vs.WrongPassword, ErrCredentials},
		{"wrong user", vs.WrongUser, ErrCredentials},
		{"empty user and password", vs.Empty, ErrCredentials},
		{"no colon", vs.NoColon, ErrNoCredentials},
		{"not base64", "Basic !!!", ErrNoCredentials},
		{"Bearer", "Bearer abc", ErrNoCredentials},
		{"no header", "", ErrNoCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.Check(upgrade(tt.auth, "203.0.113.9:40000"))
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Check = %v, want %v", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

func TestCheckAllowedNetworks(t *testing.T) {
	v := Verifier{AllowedNetworks: mustNetworks(t, "203.0.113.0/24, 2001:db8::/32, 198.51.100.7")}
	tests := []struct {
		addr string
		want error
	}{
		{"203.0.113.9:40000", nil},
		{"[::ffff:203.0.113.9]:40000", nil},
		{"[2001:db8::1]:443", nil},
		{"198.51.100.7:1", nil},
		{"198.51.100.8:1", ErrNetwork},
		{"192.0.2.1:5000", ErrNetwork},
		{"not an address", ErrNetwork},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			err := v.Check(upgrade("", tt.addr))
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Check = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestCheckBehindTrustedProxies(t *testing.T) {
	v := Verifier{
		AllowedNetworks: mustNetworks(t, "203.0.113.0/24"),
		TrustedProxies:  mustNetworks(t, "10.0.0.0/8"),
	}
	tests := []struct {
		name, addr, xff string
		want            error
	}{
		{"Exotel through the proxy", "10.0.0.2:5000", "203.0.113.9", nil},
		{"Exotel through two proxies", "10.0.0.2:5000", "203.0.113.9, 10.1.1.1", nil},
		{"spoofed entry left of the real client", "10.0.0.2:5000", "203.0.113.9, 192.0.2.1", ErrNetwork},
		{"stranger through the proxy", "10.0.0.2:5000", "192.0.2.1", ErrNetwork},
		{"X-Forwarded-For from an untrusted peer is ignored", "192.0.2.1:5000", "203.0.113.9", ErrNetwork},
		{"garbage entry", "10.0.0.2:5000", "203.0.113.9, bogus", ErrNetwork},
		{"oversized header", "10.0.0.2:5000", strings.Repeat("203.0.113.9,", 200), ErrNetwork},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := upgrade("", tt.addr)
			r.Header.Set("X-Forwarded-For", tt.xff)
			err := v.Check(r)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Check = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestCheckBothNeedsBoth(t *testing.T) {
	vs := loadVectors(t)
	v := Verifier{Username: vs.Username, Password: vs.Password, AllowedNetworks: mustNetworks(t, "203.0.113.0/24")}
	if err := v.Check(upgrade(vs.Valid, "203.0.113.9:1")); err != nil {
		t.Errorf("right credentials, right network: %v", err)
	}
	if err := v.Check(upgrade(vs.Valid, "192.0.2.1:1")); !errors.Is(err, ErrNetwork) {
		t.Errorf("right credentials, wrong network: %v, want ErrNetwork", err)
	}
	if err := v.Check(upgrade(vs.WrongPassword, "203.0.113.9:1")); !errors.Is(err, ErrCredentials) {
		t.Errorf("wrong credentials, right network: %v, want ErrCredentials", err)
	}
}

func TestZeroVerifierRejectsAndInsecureSkips(t *testing.T) {
	vs := loadVectors(t)
	if err := (Verifier{}).Check(upgrade(vs.Valid, "203.0.113.9:1")); !errors.Is(err, ErrNotConfigured) {
		t.Errorf("zero Verifier: %v, want ErrNotConfigured", err)
	}
	if err := (Verifier{Insecure: true}).Check(upgrade("", "192.0.2.1:1")); err != nil {
		t.Errorf("Insecure: %v", err)
	}
}

func TestParseNetworks(t *testing.T) {
	got, err := ParseNetworks(" 203.0.113.77/24,198.51.100.7 ,, ::ffff:192.0.2.1, 2001:db8::/32")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{
		netip.MustParsePrefix("203.0.113.0/24"),
		netip.MustParsePrefix("198.51.100.7/32"),
		netip.MustParsePrefix("192.0.2.1/32"),
		netip.MustParsePrefix("2001:db8::/32"),
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("ParseNetworks (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"203.0.113.0/33", "example.com", "1.2.3"} {
		if _, err := ParseNetworks(bad); err == nil {
			t.Errorf("ParseNetworks(%q) succeeded", bad)
		}
	}
}

func TestHandler(t *testing.T) {
	vs := loadVectors(t)
	reached := false
	h := Verifier{Username: vs.Username, Password: vs.Password}.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = true
	}))
	for _, tt := range []struct {
		name, auth string
		code       int
	}{
		{"authorized", vs.Valid, http.StatusOK},
		{"wrong password", vs.WrongPassword, http.StatusForbidden},
		{"no credentials", "", http.StatusUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reached = false
			w := httptest.NewRecorder()
			h.ServeHTTP(w, upgrade(tt.auth, "203.0.113.9:1"))
			if w.Code != tt.code || reached != (tt.code == http.StatusOK) {
				t.Fatalf("code %d, reached %v; want %d", w.Code, reached, tt.code)
			}
			if tt.code == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
				t.Error("401 without a challenge")
			}
		})
	}
}

// FuzzCheck feeds arbitrary Authorization, X-Forwarded-For and peer
// addresses: Check never panics, accepts only the configured credentials,
// and only from the allowed network.
func FuzzCheck(f *testing.F) {
	vs := loadVectors(f)
	for _, a := range []string{vs.Valid, vs.WrongPassword, vs.NoColon, vs.Empty, "Basic", "Basic =", ""} {
		f.Add(a, "203.0.113.9", "10.0.0.1:1")
	}
	f.Add(vs.Valid, "::ffff:203.0.113.9,,", "[::1]:1")
	f.Add(vs.Valid, "", "203.0.113.1:9")
	allowed := mustNetworks(f, "203.0.113.0/24")
	v := Verifier{Username: vs.Username, Password: vs.Password, AllowedNetworks: allowed, TrustedProxies: mustNetworks(f, "10.0.0.0/8")}
	f.Fuzz(func(t *testing.T, auth, xff, peer string) {
		r := httptest.NewRequest(http.MethodGet, "/exotel/media", nil)
		r.Header.Set("Authorization", auth)
		r.Header.Set("X-Forwarded-For", xff)
		r.RemoteAddr = peer
		if v.Check(r) != nil {
			return
		}
		if u, p, ok := r.BasicAuth(); !ok || u != vs.Username || p != vs.Password {
			t.Fatalf("accepted Authorization %q", auth)
		}
		src, err := v.source(r)
		if err != nil || !contains(allowed, src) {
			t.Fatalf("accepted source %v (peer %q, X-Forwarded-For %q)", src, peer, xff)
		}
	})
}
