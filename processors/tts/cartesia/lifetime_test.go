package cartesia

import (
	"testing"

	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/tts/internal/ttstest"
)

// The connection a TTS service warmed up lives as long as its task: when
// the task is cancelled or ends, the service closes the client and the
// connection's reader has stopped by the time Run returns.
func TestConnectionEndsWithTheServicesTask(t *testing.T) {
	ttstest.CheckConnectionEndsWithTheTask(t, func(t *testing.T) (tts.Synthesizer, func() *conn) {
		// The script wants one generation on the connection.
		f := newFake(t, "hello.ws")
		t.Cleanup(f.close)
		c := newClient(f)
		return c, c.current
	})
}
