package webrtc

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/framewire/framewire/transports/webrtc/internal/testclient"
)

func TestClientReadyIsAnsweredWithBotReadyOverTheChatChannel(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, testclient.Options{})
	if err := c.Send(`{"label":"rtvi-ai","type":"client-ready","id":"abcd1234","data":{"version":"2.1.0","about":{"library":"@pipecat-ai/client-js"}}}`); err != nil {
		t.Fatal(err)
	}
	msg, err := c.Next(ctx, isType("bot-ready"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Label, Type, ID string
		Data            struct{ Version string }
	}
	if err := json.Unmarshal([]byte(msg), &got); err != nil {
		t.Fatal(err)
	}
	if got.Label != "rtvi-ai" || got.ID != "abcd1234" || got.Data.Version != "2.1.0" {
		t.Errorf("bot-ready = %s", msg)
	}
	s, b, _ := h.session(c)
	// trackStatus (mic on, camera off) is consumed by the transport; pings
	// never reach the pipeline.
	eventually(t, 5*time.Second, "camera trackStatus applied", func() bool { return !s.TrackEnabled(1) })
	if !s.TrackEnabled(0) {
		t.Error("the mic is reported disabled")
	}
	for _, m := range b.gotMessages() {
		if m != `{"label":"rtvi-ai","type":"client-ready","id":"abcd1234","data":{"version":"2.1.0","about":{"library":"@pipecat-ai/client-js"}}}` {
			t.Errorf("the pipeline got %q", m)
		}
	}
}
