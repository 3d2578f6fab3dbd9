package main

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzDataChannel sends arbitrary data-channel text to one running bot:
// whatever comes back is a labelled RTVI message (or transport
// signalling), never a fatal error, and the bot still answers an echo
// afterwards (row 10: never a disconnect).
func FuzzDataChannel(f *testing.F) {
	for _, seed := range []string{
		"{this is not json", "ping: 1700000000000", "",
		`{"type":"signalling","message":{"type":"trackStatus","receiver_index":0,"enabled":true}}`,
		`{"label":"rtvi-ai","type":"client-message","data":{"t":"echo","d":1}}`,
		`{"label":"rtvi-ai","type":"frobnicate","id":"hfrob001"}`,
		`{"label":"rtvi-ai","type":"ui-event","id":"hevt0001","data":{"payload":{}}}`,
		`{"label":"rtvi-ai","type":"ui-snapshot","id":"s1","data":{"tree":{"root":{"ref":"e1","role":"main","children":[{"ref":"e2","role":"heading","name":"Hi"}]}}}}`,
		`{"label":"rtvi-ai","type":"client-message","id":"g1","data":{"t":"start-job-group","d":{"workers":["a","b"],"hold_ms":5}}}`,
		`{"label":"rtvi-ai","type":"ui-cancel-job-group","id":"c1","data":{"job_id":"nope"}}`,
		`{"label":"rtvi-ai","type":"client-message","id":"u1","data":{"t":"ui-command","d":{"command":"toast"}}}`,
		`{"label":"rtvi-ai","type":"client-ready","id":"r2","data":{"version":"9.9.9"}}`,
		`{"label":"rtvi-ai","type":"send-text","id":"t1","data":{"content":"hi","options":{"run_immediately":false}}}`,
	} {
		f.Add(seed)
	}
	b := startBot(f)
	b.ready("2.1.0")
	n := 0
	f.Fuzz(func(t *testing.T, text string) {
		if strings.Contains(text, "disconnect-bot") {
			return // ends the session, as it must
		}
		b.t = t
		n++
		id := fmt.Sprintf("alive%d", n)
		b.sendRaw(text)
		b.send("client-message", id, map[string]any{"t": "echo", "d": n})
		for {
			m := b.next(nil)
			if m.Type == "error" && m.data(t)["fatal"] == true {
				t.Fatalf("%q got a fatal error: %s", text, m.raw)
			}
			if m.Label != "rtvi-ai" && !strings.HasPrefix(m.raw, `{"type":"signalling"`) {
				t.Fatalf("%q got an unlabelled message %s", text, m.raw)
			}
			if m.ID != nil && *m.ID == id {
				if m.Type != "server-response" {
					t.Fatalf("after %q the echo got %s", text, m.raw)
				}
				return
			}
		}
	})
}
