package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A base URL may carry credentials (https://user:password@host) or a key
// in its query (?api-key=, as Azure's): /api/config, which any visitor
// reads, shows the URL without them, in the brain's detail and in the
// voice's note alike (which quotes a speech server that cannot be
// reached).
func TestConfigShowsNoURLCredentialsOrQueryStrings(t *testing.T) {
	const secret = "s3cret-key"
	base := "http://alice:" + secret + "@127.0.0.1:1/v1?api-key=" + secret
	getenv := env("OPENAI_API_KEY", "k", "OPENAI_BASE_URL", base, "STT_BASE_URL", base)
	cfg := config{Brain: chooseBrain(getenv), Voice: chooseVoice(context.Background(), getenv)}
	res, body := get(t, testHandler(t, cfg), "/api/config")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/config: %d", res.StatusCode)
	}
	var got struct {
		Brain struct{ Detail string }
		Voice struct{ Note string }
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(body, secret) || strings.Contains(body, "alice") || strings.Contains(body, "api-key") {
		t.Errorf("/api/config shows the URL's credentials: %s", body)
	}
	if !strings.Contains(got.Brain.Detail, "http://127.0.0.1:1/v1") || !strings.Contains(got.Voice.Note, "http://127.0.0.1:1/v1") {
		t.Errorf("the config no longer names the server: %s", body)
	}
}

func TestRedactURLs(t *testing.T) {
	for in, want := range map[string]string{
		"at https://u:p@api.example.com/v1?api-key=k#f (from X).": "at https://api.example.com/v1 (from X).",
		"http://127.0.0.1:1/v1 cannot be reached":                 "http://127.0.0.1:1/v1 cannot be reached",
		"two: http://a/?k=1 and wss://b:c@d/e":                    "two: http://a/ and wss://d/e",
		"no URL here":                                             "no URL here",
	} {
		if got := redactURLs(in); got != want {
			t.Errorf("redactURLs(%q) = %q, want %q", in, got, want)
		}
	}
}

// A page on a domain that rebinds to the demo's address reads the config
// (and reaches the signalling) as a same-origin page would; its requests
// carry its own name in Host, and get a 403. Names in AllowHosts and the
// -addr host are served.
func TestTheDemoRefusesAForeignHost(t *testing.T) {
	cfg := config{Addr: "demo.internal:7860", Brain: chooseBrain(env()), AllowHosts: []string{"*.example.com"}}
	h := testHandler(t, cfg)
	for host, want := range map[string]int{
		"rebind.attacker.example:7860": http.StatusForbidden,
		"demo.internal:7860":           http.StatusOK,
		"voice.example.com":            http.StatusOK,
		"localhost:7860":               http.StatusOK,
		"127.0.0.1:7860":               http.StatusOK,
	} {
		for _, path := range []string{"/api/config", "/"} {
			req := httptest.NewRequest(http.MethodGet, "http://"+host+path, nil)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != want {
				t.Errorf("GET %s with Host %s: %d, want %d", path, host, rec.Code, want)
			}
		}
	}
}
