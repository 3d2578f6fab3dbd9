package jsonwiretest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var keys = Keys{Stream: "streamSid", Sequence: "sequenceNumber", Other: "start", Member: `"track" : "outbound"`}

func TestFastPathSeedsAreWrittenInTheProvidersKeys(t *testing.T) {
	seeds := FastPathSeeds(keys)
	if len(seeds) < MustRead {
		t.Fatalf("%d seeds, fewer than the %d a fast path must read", len(seeds), MustRead)
	}
	for i, s := range seeds {
		if strings.Contains(s, "$") {
			t.Errorf("seed %d keeps a placeholder: %s", i, s)
		}
		if i < MustRead && !json.Valid([]byte(s)) {
			t.Errorf("seed %d, one a fast path must read, is not JSON: %s", i, s)
		}
	}
	for _, want := range []string{`"streamSid":"MZ1"`, `"sequenceNumber":1.5`, `"start":{}`, `"track" : "outbound"`} {
		if !strings.Contains(strings.Join(seeds, "\n"), want) {
			t.Errorf("no seed has %s", want)
		}
	}
}

// event is a stand-in for a provider's Event.
type event struct{ Payload string }

func jsonPath(msg []byte) (event, error) {
	var w struct {
		Event string `json:"event"`
		Media struct {
			Payload string `json:"payload"`
		} `json:"media"`
	}
	err := json.Unmarshal(msg, &w)
	return event{Payload: w.Media.Payload}, err
}

func TestAgreeFindsAFastPathThatDiffers(t *testing.T) {
	wrong := Paths[event]{
		Fast: func([]byte) (event, bool) { return event{Payload: "other"}, true },
		JSON: jsonPath,
	}
	if _, problem := wrong.agree([]byte(FastPathSeeds(keys)[0])); !strings.Contains(problem, "differ") {
		t.Errorf("a fast path that reads another payload: problem %q, want a difference", problem)
	}
	if _, problem := wrong.agree([]byte(`{"event":`)); !strings.Contains(problem, "refused") {
		t.Errorf("a fast path that reads bad JSON: problem %q, want encoding/json's refusal", problem)
	}
	lazy := Paths[event]{Fast: func([]byte) (event, bool) { return event{}, false }, JSON: jsonPath}
	if taken, problem := lazy.agree([]byte(`{}`)); taken || problem != "" {
		t.Errorf("a fast path that gives up: taken %v, problem %q; want neither", taken, problem)
	}
}

func TestGoldenReadsTheFileAndTheShape(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	msg := []byte(`{"event":"clear","n":1}`)
	shape := map[string]any{"event": "clear", "n": 1.0}
	Golden(t, path, msg, shape, true) // writes the file
	b, err := os.ReadFile(path)
	if err != nil || string(b) != string(msg)+"\n" {
		t.Fatalf("update wrote %q, %v; want the message and a newline", b, err)
	}
	Golden(t, path, msg, shape, false)
}
