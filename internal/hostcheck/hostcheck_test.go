package hostcheck

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestTheDefaultAllowsLocalhostAndIPLiteralsOnly(t *testing.T) {
	var a Allowlist
	for host, want := range map[string]bool{
		"127.0.0.1:7860":             true,
		"127.0.0.2":                  true,
		"[::1]:7860":                 true,
		"[::1]":                      true,
		"localhost:7860":             true,
		"LOCALHOST":                  true,
		"app.localhost:7860":         true,
		"192.0.2.10:443":             true,
		"localhost.":                 true,
		"rebind.attacker.example":    false,
		"rebind.attacker.example:80": false,
		"localhost.attacker.example": false,
		"127.0.0.1.nip.io":           false,
		"":                           false,
		"127.0.0.1:port":             false,
		"127.0.0.1:123456":           false,
		"exa mple.com":               false,
		"a\nb":                       false,
	} {
		if got := a.Allows(host); got != want {
			t.Errorf("Allows(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestListedHostsAndWildcards(t *testing.T) {
	a := Allowlist{Hosts: []string{"bot.example.com", "*.apps.example.com"}}
	for host, want := range map[string]bool{
		"bot.example.com":         true,
		"BOT.example.com:8443":    true,
		"x.apps.example.com":      true,
		"y.x.apps.example.com":    true,
		"apps.example.com":        false,
		"xapps.example.com":       false,
		"evil.example.com":        false,
		"127.0.0.1":               true,
		"bot.example.com.evil.io": false,
	} {
		if got := a.Allows(host); got != want {
			t.Errorf("Allows(%q) = %v, want %v", host, got, want)
		}
	}
	strict := Allowlist{Hosts: []string{"bot.example.com"}, NoDefaults: true}
	if strict.Allows("127.0.0.1") || strict.Allows("localhost") {
		t.Error("NoDefaults still allowed a default host")
	}
	if !(Allowlist{Hosts: []string{"*"}}).Allows("anything.example") {
		t.Error(`"*" refused a host`)
	}
}

func TestDefaultAddsANamedListenHost(t *testing.T) {
	if got := Default("bot.internal:7860"); !got.Allows("bot.internal") || got.Allows("other.internal") {
		t.Errorf("Default(bot.internal:7860) = %+v", got)
	}
	for _, addr := range []string{"127.0.0.1:7860", ":7860", "0.0.0.0:7860", "localhost:7860"} {
		if got := Default(addr); len(got.Hosts) != 0 {
			t.Errorf("Default(%q) listed %v", addr, got.Hosts)
		}
	}
}

func TestCheckRefusesAForeignHostWithoutEchoingIt(t *testing.T) {
	h := Allowlist{}.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	r := httptest.NewRequest(http.MethodPost, "/api/offer", nil)
	r.Host = "rebind.attacker.example:7860"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden || strings.Contains(w.Body.String(), "attacker") {
		t.Errorf("foreign host: %d %q", w.Code, w.Body.String())
	}
	r.Host = "127.0.0.1:7860"
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusNoContent {
		t.Errorf("loopback host: %d", w.Code)
	}
}

func FuzzAllows(f *testing.F) {
	f.Add("bot.example.com", "bot.example.com:443")
	f.Add("*.example.com", "a.example.com")
	f.Add("*", "[::1]:80")
	f.Fuzz(func(t *testing.T, pattern, host string) {
		a := Allowlist{Hosts: []string{pattern}, NoDefaults: true}
		if !a.Allows(host) {
			return
		}
		h, ok := hostOnly(host)
		if !ok {
			t.Fatalf("%q allowed though it is no host", host)
		}
		if pattern != "*" && !strings.HasPrefix(pattern, "*.") && !strings.EqualFold(strings.TrimSuffix(pattern, "."), h) {
			t.Fatalf("%q matched %q without a rule", pattern, host)
		}
	})
}
