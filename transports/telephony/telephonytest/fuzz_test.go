package telephonytest

import (
	"errors"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// FuzzBotMessage feeds the caller's reader anything: a message is taken
// or is a protocol error, never a panic, and the playout stays bounded.
func FuzzBotMessage(f *testing.F) {
	sid := "MZ1"
	for _, seed := range []string{
		`{"event":"media","streamSid":"MZ1","media":{"payload":"//8A/w=="}}`,
		`{"event":"mark","streamSid":"MZ1","mark":{"name":"160"}}`,
		`{"event":"clear","streamSid":"MZ1"}`,
		`{"event":"media","streamSid":"MZ2","media":{"payload":""}}`,
		`{"event":"media","streamSid":"MZ1","media":{"payload":"%%%"}}`,
		`{"event":"mark","streamSid":"MZ1"}`,
		`{"event":"sendDigits","streamSid":"MZ1"}`,
		`[]`, `{`, ``,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		k := &call{o: Options{Logf: func(string, ...any) {}}, res: &Result{}, sid: sid}
		k.playout.MaxQueue = 1600
		for range 3 { // state carries from one message to the next
			_, err := k.handle(websocket.MessageText, []byte(msg), time.Now())
			if err != nil && !errors.Is(err, ErrProtocol) {
				t.Fatalf("handle(%q) = %v, not a protocol error", msg, err)
			}
		}
		if k.playout.Queued() > 1600 {
			t.Fatalf("%d samples queued past the bound", k.playout.Queued())
		}
	})
}

// FuzzTwiML reads any webhook answer: a stream URL, or a protocol error.
func FuzzTwiML(f *testing.F) {
	for _, seed := range []string{
		`<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="wss://x/s"><Parameter name="a" value="b"/></Stream></Connect></Response>`,
		`<Response><Say>hi</Say></Response>`,
		`<Response><Connect><Stream/></Connect></Response>`,
		`not xml`, ``,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		u, params, err := parseTwiML([]byte(body))
		switch {
		case err != nil && !errors.Is(err, ErrProtocol):
			t.Fatalf("parseTwiML = %v, not a protocol error", err)
		case err == nil && (u == "" || len(params) > maxParameters):
			t.Fatalf("parseTwiML = %q with %d parameters", u, len(params))
		}
	})
}
