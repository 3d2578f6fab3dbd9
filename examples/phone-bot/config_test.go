package main

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/zap"
)

func TestThePublicURLGivesTheWebhookAndTheStream(t *testing.T) {
	for _, tc := range []struct{ public, base, stream string }{
		{"", "http://127.0.0.1:8080", "ws://127.0.0.1:8080/twilio/stream"},
		{"https://abc.ngrok.app", "https://abc.ngrok.app", "wss://abc.ngrok.app/twilio/stream"},
		{"https://abc.ngrok.app/", "https://abc.ngrok.app", "wss://abc.ngrok.app/twilio/stream"},
		{"wss://abc.ngrok.app/twilio/stream", "https://abc.ngrok.app", "wss://abc.ngrok.app/twilio/stream"},
		{"https://example.com/bot", "https://example.com/bot", "wss://example.com/bot/twilio/stream"},
		{"http://10.0.0.2:9000", "http://10.0.0.2:9000", "ws://10.0.0.2:9000/twilio/stream"},
	} {
		base, stream, err := config{PublicURL: tc.public}.urls("127.0.0.1:8080")
		if err != nil || base != tc.base || stream != tc.stream {
			t.Errorf("PUBLIC_URL %q: %q, %q, %v; want %q, %q", tc.public, base, stream, err, tc.base, tc.stream)
		}
	}
	for _, bad := range []string{"abc.ngrok.app", "ftp://abc.ngrok.app", "https://"} {
		if _, _, err := (config{PublicURL: bad}).urls("x"); err == nil {
			t.Errorf("PUBLIC_URL %q was taken", bad)
		}
	}
}

func TestTheBotRefusesToStartWithoutAnAuthToken(t *testing.T) {
	cfg := configure(func(k string) string { return map[string]string{"ADDR": "127.0.0.1:0"}[k] })
	err := serve(context.Background(), cfg, &bot{log: zap.NewNop()}, nil)
	if err == nil || !strings.Contains(err.Error(), "TWILIO_AUTH_TOKEN") {
		t.Errorf("serve without a token = %v, want it to name TWILIO_AUTH_TOKEN", err)
	}
}

func TestTheEnvironmentPicksTheServices(t *testing.T) {
	env := map[string]string{"PHONE_BOT_INSECURE": "1", "VOICE_STT": "none", "OPENAI_BASE_URL": "http://localhost:11434/v1"}
	cfg := configure(func(k string) string { return env[k] })
	if !cfg.Insecure || cfg.STT.build != nil || cfg.LLM.Echo || !strings.Contains(cfg.LLM.Name, "11434") || !strings.Contains(cfg.TTS.Name, "espeak") { // OPENAI_BASE_URL alone is a chat server, as in voice-bot
		t.Errorf("config %+v", cfg)
	}
	offline := configure(func(string) string { return "" })
	if !offline.LLM.Echo || offline.Addr != "localhost:8080" || offline.Insecure {
		t.Errorf("the offline config %+v", offline)
	}
}
