package llmhttp

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
)

// The reader returns each event's data and type, joins multi-line data,
// skips comments, and bounds lines.
func TestReaderFraming(t *testing.T) {
	r := NewReader(strings.NewReader(": hi\nevent: a\ndata: 1\ndata:2\n\nid: 3\r\ndata: x\r\n\r\nevent: lost\n\ndata: last"), 0)
	type ev struct{ data, event string }
	var got []ev
	for {
		d, e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev{string(d), string(e)})
	}
	want := []ev{{"1\n2", "a"}, {"x", ""}, {"last", ""}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(ev{})); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	_, _, err := NewReader(strings.NewReader("data: "+strings.Repeat("x", 100)+"\n\n"), 32).Next()
	if !errors.Is(err, ErrLineTooLong) {
		t.Errorf("err = %v, want ErrLineTooLong", err)
	}
}

func TestClipKeepsOneShortLine(t *testing.T) {
	if got := Clip("  a\nb\tcé…more  ", 6); got != "a b c…" {
		t.Errorf("Clip = %q", got)
	}
}

func TestParseRetryAfter(t *testing.T) {
	if got := ParseRetryAfter("1.5"); got != 1500*time.Millisecond {
		t.Errorf("seconds: %v", got)
	}
	for _, v := range []string{"", "soon", "-3", "1e300"} {
		if got := ParseRetryAfter(v); got != 0 {
			t.Errorf("ParseRetryAfter(%q) = %v, want 0", v, got)
		}
	}
	if got := ParseRetryAfter(time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)); got < 50*time.Minute {
		t.Errorf("date: %v", got)
	}
}

func TestTimeoutErrorIsATransientTimeout(t *testing.T) {
	e := &TimeoutError{Provider: "p", Phase: PhaseIdle, After: time.Second}
	var c frames.Categorizer
	if !errors.As(error(e), &c) || c.Category() != frames.ErrorTransient || !e.Timeout() {
		t.Errorf("%v: category or Timeout wrong", e)
	}
	if e.Error() != "p: the stream stalled: nothing received for 1s" || Phase(9).String() != "phase 9" {
		t.Errorf("texts %q %q", e.Error(), Phase(9))
	}
}
