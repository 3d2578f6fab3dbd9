package elevenlabs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/upstream"
)

// maxLineBytes bounds one line of the HTTP stream (a chunk of base64
// audio with its alignment).
const maxLineBytes = 4 << 20

// httpURL is the HTTP transport's endpoint for output at rate.
func (c *Client) httpURL(rate int) string {
	return c.opts.BaseURL + "/v1/text-to-speech/" + url.PathEscape(c.opts.VoiceID) +
		"/stream/with-timestamps?output_format=pcm_" + strconv.Itoa(rate)
}

// watchdog cancels a request's context when the bound of its phase runs
// out, with a [llmhttp.TimeoutError] as the cause.
type watchdog struct {
	t      upstream.Timeouts
	cancel context.CancelCauseFunc
	timer  *time.Timer
	phase  atomic.Uint32
}

func newWatchdog(t upstream.Timeouts, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{t: t, cancel: cancel}
	w.phase.Store(uint32(llmhttp.PhaseConnect))
	w.timer = time.AfterFunc(time.Hour, w.fire)
	w.enter(llmhttp.PhaseConnect)
	return w
}

func (w *watchdog) bound(p llmhttp.Phase) time.Duration {
	switch p {
	case llmhttp.PhaseConnect:
		return w.t.Connect
	case llmhttp.PhaseFirstByte:
		return w.t.FirstByte
	}
	return w.t.Idle
}

// enter starts phase p's bound, replacing the running one.
func (w *watchdog) enter(p llmhttp.Phase) {
	w.phase.Store(uint32(p))
	if d := w.bound(p); d > 0 {
		w.timer.Reset(d)
	} else {
		w.timer.Stop()
	}
}

func (w *watchdog) fire() {
	p := llmhttp.Phase(w.phase.Load())
	w.cancel(&llmhttp.TimeoutError{Provider: "elevenlabs", Phase: p, After: w.bound(p)})
}

func (w *watchdog) stop() { w.timer.Stop() }

// timeout returns the TimeoutError that ended ctx, if one did.
func timeout(ctx context.Context) error {
	var te *llmhttp.TimeoutError
	if errors.As(context.Cause(ctx), &te) {
		return te
	}
	return nil
}

// streamHTTP runs one attempt of a request over HTTP: it posts the text
// and yields the audio and words of each line of the answer.
func (c *Client) streamHTTP(ctx context.Context, text string, rate int, yield func(tts.Chunk, error) bool) (started bool, err error) {
	body, err := c.httpRequestBody(text)
	if err != nil {
		return false, err
	}
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := newWatchdog(c.opts.Timeouts, cancel)
	defer w.stop()
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) {
		if llmhttp.Phase(w.phase.Load()) == llmhttp.PhaseConnect {
			w.enter(llmhttp.PhaseFirstByte)
		}
	}}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(actx, trace), http.MethodPost, c.httpURL(rate), bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("elevenlabs: building the request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("xi-api-key", c.opts.APIKey)
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		if te := timeout(actx); te != nil {
			return false, te
		}
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, &connError{fmt.Errorf("elevenlabs: POST %s: %w", c.opts.BaseURL, err)}
	}
	defer resp.Body.Close()
	if llmhttp.Phase(w.phase.Load()) == llmhttp.PhaseConnect {
		w.enter(llmhttp.PhaseFirstByte)
	}
	if resp.StatusCode != http.StatusOK {
		e := readAPIError(resp)
		if te := timeout(actx); te != nil {
			return false, te
		}
		return false, e
	}

	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	var (
		m  message
		wb wordBuilder
	)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		w.enter(llmhttp.PhaseIdle)
		if err := m.decode(line); err != nil {
			// A line cut short by a broken stream is the last token the
			// scanner hands out: report the break rather than the JSON.
			if !sc.Scan() && sc.Err() != nil {
				break
			}
			return started, err
		}
		if m.isError() {
			return started, &APIError{Code: m.errCode, Message: m.errText}
		}
		// The stream's times count from the start of the request's audio.
		words := wb.add(nil, m.timing(), 0)
		if len(m.audio) == 0 && len(words) == 0 {
			continue
		}
		started = true
		ch := tts.Chunk{Words: words}
		if len(m.audio) > 0 {
			ch.Audio, ch.SampleRate = m.audio, rate
		}
		if !yield(ch, nil) {
			return started, errStopped
		}
	}
	if err := sc.Err(); err != nil {
		if te := timeout(actx); te != nil {
			return started, te
		}
		if ctx.Err() != nil {
			return started, ctx.Err()
		}
		if errors.Is(err, bufio.ErrTooLong) {
			return started, fmt.Errorf("elevenlabs: a line of the stream is over %d bytes", maxLineBytes)
		}
		return started, &connError{fmt.Errorf("elevenlabs: reading the stream: %w", err)}
	}
	if !started {
		return false, &connError{errors.New("elevenlabs: the stream ended before any audio")}
	}
	if words := wb.flush(nil); len(words) > 0 {
		started = true
		if !yield(tts.Chunk{Words: words}, nil) {
			return started, errStopped
		}
	}
	return started, nil
}
