package elevenlabs

import (
	"testing"

	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/processors/upstream"
)

// The bounds are the speech defaults every TTS and STT client has (they
// were 10s, 15s, 15s here); a negative one stays off.
func TestDefaultTimeouts(t *testing.T) {
	want := upstream.Timeouts{Connect: llmhttp.DefaultConnectTimeout, FirstByte: llmhttp.DefaultSpeechFirstByteTimeout, Idle: llmhttp.DefaultSpeechIdleTimeout}
	if got := New(Options{}).opts.Timeouts; got != want {
		t.Errorf("timeouts %+v, want %+v", got, want)
	}
	off := upstream.Timeouts{Connect: -1, FirstByte: -1, Idle: -1}
	if got := New(Options{HTTP: upstream.HTTP{Timeouts: off}}).opts.Timeouts; got != off {
		t.Errorf("timeouts %+v, want %+v (negative is off)", got, off)
	}
}
