package origin

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAllowed(t *testing.T) {
	patterns := []string{"https://app.example.com", "http://127.0.0.1:*"}
	for origin, want := range map[string]bool{
		"https://app.example.com":      true,
		"HTTPS://APP.EXAMPLE.COM":      true,
		"https://app.example.com:8443": false,
		"http://127.0.0.1":             true,
		"http://127.0.0.1:5173":        true,
		"http://127.0.0.1:":            false,
		"http://127.0.0.1:123456":      false,
		"http://127.0.0.1:80a":         false,
		"http://127.0.0.10:5173":       false,
		"https://127.0.0.1:5173":       false,
		"https://evil.example.com":     false,
		"":                             false,
	} {
		if got := Allowed(patterns, origin); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", origin, got, want)
		}
	}
	if !Allowed([]string{"*"}, "https://anything.example") {
		t.Error(`"*" refused an origin`)
	}
	if Allowed(nil, "http://127.0.0.1") {
		t.Error("no patterns allowed an origin")
	}
}

func TestAllowSetsTheHeadersOfAMatch(t *testing.T) {
	for _, tc := range []struct {
		name     string
		patterns []string
		origin   string
		ok       bool
		want     http.Header
	}{
		{"any origin", []string{"*"}, "https://a.example", true, http.Header{"Access-Control-Allow-Origin": {"*"}}},
		{"a listed origin", []string{"http://127.0.0.1:*"}, "http://127.0.0.1:5173", true,
			http.Header{"Access-Control-Allow-Origin": {"http://127.0.0.1:5173"}, "Vary": {"Origin"}}},
		{"another origin", []string{"https://a.example"}, "https://b.example", false, http.Header{}},
		{"no Origin header", []string{"*"}, "", false, http.Header{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if ok := Allow(h, tc.patterns, tc.origin); ok != tc.ok {
				t.Errorf("Allow = %v, want %v", ok, tc.ok)
			}
			if d := cmp.Diff(tc.want, h); d != "" {
				t.Errorf("headers (-want +got):\n%s", d)
			}
		})
	}
}

func FuzzAllowed(f *testing.F) {
	f.Add("http://127.0.0.1:*", "http://127.0.0.1:5173")
	f.Add("https://a.example", "https://a.example")
	f.Add(":*", "")
	f.Fuzz(func(t *testing.T, pattern, origin string) {
		if Allowed([]string{pattern}, origin) && pattern != "*" && !anyPort(pattern, origin) && len(pattern) != len(origin) {
			t.Fatalf("%q matched %q without a rule", pattern, origin)
		}
	})
}
