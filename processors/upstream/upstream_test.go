package upstream_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/upstream"
)

// A zero field takes the default, a negative one stays (no bound), a set
// one is kept.
func TestTimeoutsOr(t *testing.T) {
	got := upstream.Timeouts{FirstByte: -1, Idle: time.Second}.Or(upstream.SpeechTimeouts())
	want := upstream.Timeouts{Connect: 10 * time.Second, FirstByte: -1, Idle: time.Second}
	if got != want {
		t.Errorf("Or = %+v, want %+v", got, want)
	}
	s := upstream.SpeechTimeouts()
	if s.Bound(upstream.PhaseConnect) != 10*time.Second || s.Bound(upstream.PhaseFirstByte) != 10*time.Second || s.Bound(upstream.PhaseIdle) != 20*time.Second || s.Bound(0) != 0 {
		t.Errorf("speech bounds %+v", s)
	}
}

// A timeout says which bound ran out, is transient and is a net-style
// timeout, found through any wrapping.
func TestTimeoutErrorSaysWhichBound(t *testing.T) {
	for _, tc := range []struct {
		phase upstream.Phase
		want  string
	}{
		{upstream.PhaseConnect, "x: timed out connecting after 1s"},
		{upstream.PhaseFirstByte, "x: no first byte within 1s"},
		{upstream.PhaseIdle, "x: the stream stalled: nothing received for 1s"},
	} {
		err := fmt.Errorf("turn: %w", &upstream.TimeoutError{Provider: "x", Phase: tc.phase, After: time.Second})
		var te *upstream.TimeoutError
		if !errors.As(err, &te) || te.Error() != tc.want || !te.Timeout() || frames.CategoryOf(err) != frames.ErrorTransient {
			t.Errorf("%v: %q, category %v", tc.phase, err, frames.CategoryOf(err))
		}
	}
}
