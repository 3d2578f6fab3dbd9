package openairealtime

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestSessionUpdateGolden(t *testing.T) {
	type lookup struct {
		Order string `json:"order" jsonschema_description:"The order number."`
		Email string `json:"email,omitempty"`
	}
	track := llm.NewFunction("track_order", "Where an order is.", func(context.Context, llm.FunctionCallParams, lookup) error { return nil })
	raw := llm.Function{Name: "web_search", Raw: json.RawMessage(`{"type":"function","name":"web_search","parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}`),
		Handler: func(context.Context, llm.FunctionCallParams) error { return nil }}
	noArgs := llm.Function{Name: "hang_up", Description: "End the call.", Handler: func(context.Context, llm.FunctionCallParams) error { return nil }}
	svc := New(Options{
		APIKey:                "k",
		BaseURL:               "https://api.openai.com/v1",
		Model:                 "gpt-realtime",
		Voice:                 "cedar",
		Instructions:          "You are a helpful shop assistant. Keep answers short.",
		VAD:                   VAD{Threshold: 0.6, PrefixPadding: 300 * time.Millisecond, SilenceDuration: 500 * time.Millisecond},
		TranscriptionLanguage: "en",
		Functions:             []llm.Function{track, raw, noArgs},
		ToolChoice:            frames.LLMToolChoice{Mode: "auto"},
	})
	got, err := json.MarshalIndent(sessionConfig(svc.opts, svc.tools()), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	const path = "testdata/session_update.golden.json"
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("session.update (-want +got):\n%s", d)
	}
}

func TestSessionUpdateVariants(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want string // the turn_detection member
	}{
		{"server VAD starts responses", Options{}, `{"type":"server_vad","create_response":true,"interrupt_response":true}`},
		{"a hook starts them itself", Options{BeforeResponse: func(*llm.Context) {}}, `{"type":"server_vad","create_response":false,"interrupt_response":true}`},
		{"semantic VAD", Options{TurnDetection: SemanticVAD, VAD: VAD{Eagerness: "low"}}, `{"type":"semantic_vad","eagerness":"low","create_response":true,"interrupt_response":true}`},
		{"framework turns", Options{TurnDetection: FrameworkTurns}, `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(sessionConfig(tc.o.withDefaults(), nil))
			if err != nil {
				t.Fatal(err)
			}
			var v struct {
				Session struct {
					Audio struct {
						Input struct {
							TurnDetection json.RawMessage `json:"turn_detection"`
						} `json:"input"`
					} `json:"audio"`
				} `json:"session"`
			}
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			if got := string(v.Session.Audio.Input.TurnDetection); got != tc.want {
				t.Errorf("turn_detection = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestRealtimeURL(t *testing.T) {
	for _, tc := range []struct{ base, want string }{
		{"https://api.openai.com/v1", "wss://api.openai.com/v1/realtime?model=m"},
		{"https://api.openai.com/v1/", "wss://api.openai.com/v1/realtime?model=m"},
		{"http://127.0.0.1:8080/openai/v1", "ws://127.0.0.1:8080/openai/v1/realtime?model=m"},
		{"wss://gateway.example/v1/realtime", "wss://gateway.example/v1/realtime?model=m"},
		{"wss://gateway.example/v1/realtime?model=pinned", "wss://gateway.example/v1/realtime?model=pinned"},
	} {
		got, err := RealtimeURL(tc.base, "m")
		if err != nil || got != tc.want {
			t.Errorf("RealtimeURL(%q) = %q, %v; want %q", tc.base, got, err, tc.want)
		}
	}
	for _, bad := range []string{"ftp://x/v1", "https:///v1", "::"} {
		if _, err := RealtimeURL(bad, "m"); err == nil {
			t.Errorf("RealtimeURL(%q) gave no error", bad)
		}
	}
}

func TestEnvironmentDefaults(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-env")
	t.Setenv("OPENAI_BASE_URL", "http://localhost:9999/v1")
	t.Setenv("OPENAI_REALTIME_MODEL", "gpt-realtime-mini")
	svc := New(Options{})
	if svc.opts.APIKey != "sk-env" || svc.Model() != "gpt-realtime-mini" || svc.URL() != "ws://localhost:9999/v1/realtime?model=gpt-realtime-mini" {
		t.Errorf("from the environment: key %q, model %q, URL %q", svc.opts.APIKey, svc.Model(), svc.URL())
	}
	t.Setenv("OPENAI_REALTIME_MODEL", "")
	if m := New(Options{}).Model(); m != DefaultModel {
		t.Errorf("default model = %q", m)
	}
}

func TestAppendAudioEvent(t *testing.T) {
	got := appendAudioEvent(nil, []byte{1, 2, 3, 4})
	if want := `{"type":"input_audio_buffer.append","audio":"AQIDBA=="}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { buf = appendAudioEvent(buf[:0], tone100ms[:640]) }); n != 0 {
		t.Errorf("appendAudioEvent allocates %v times with room to spare", n)
	}
	if !bytes.HasSuffix(buf, []byte(`"}`)) {
		t.Errorf("event does not end the object: %s", buf[len(buf)-4:])
	}
}
