package openaiapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/framewire/framewire/frames"
)

// Retry says how often and how patiently a failed request is retried. The
// zero value never retries.
type Retry struct {
	// Max is how many times a failed request is retried; 0 or less: never.
	Max int
	// Backoff is the wait before the first retry; it doubles after each
	// one, up to MaxBackoff.
	Backoff time.Duration
	// MaxBackoff caps every wait, including one asked by Retry-After.
	MaxBackoff time.Duration
}

// Retryable reports whether an HTTP status is worth a retry: 429 and 5xx.
func Retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// Do sends requests with send until one answers 200 OK and returns that
// response. A connection error is passed through connErr (which adds the
// client's context) and retried; a non-200 answer is turned into an error by
// failed, which must read and close its body, and retried only when its
// status is [Retryable]. When ctx ends, Do returns ctx.Err().
func (r Retry) Do(ctx context.Context, send func(context.Context) (*http.Response, error), connErr func(error) error, failed func(*http.Response) error) (*http.Response, error) {
	backoff := r.Backoff
	for attempt := 0; ; attempt++ {
		resp, err := send(ctx)
		var wait time.Duration
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			err = connErr(err)
		case resp.StatusCode == http.StatusOK:
			return resp, nil
		default:
			wait = ParseRetryAfter(resp.Header.Get("Retry-After"))
			err = failed(resp)
			if !Retryable(resp.StatusCode) {
				return nil, err
			}
		}
		if attempt >= r.Max {
			return nil, err
		}
		if wait <= 0 {
			wait = backoff
		}
		t := time.NewTimer(min(wait, r.MaxBackoff))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		backoff = min(2*backoff, r.MaxBackoff)
	}
}

// ParseRetryAfter reads a Retry-After header: seconds or an HTTP date. It
// returns 0 (or a negative duration for a past date) when there is no usable
// wait.
func ParseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t)
	}
	return 0
}

// Send posts p with hc under r: [Retry.Do] with a sender built from p.
func (r Retry) Send(ctx context.Context, hc *http.Client, p Post, connErr func(error) error, failed func(*http.Response) error) (*http.Response, error) {
	return r.Do(ctx, func(ctx context.Context) (*http.Response, error) {
		req, err := p.NewRequest(ctx)
		if err != nil {
			return nil, err
		}
		return hc.Do(req)
	}, connErr, failed)
}

// Category classifies an error status for the pipeline: 429 and 5xx are
// transient; 401 and 403 (bad or missing credentials) are permanent when
// authPermanent is set; anything else is unknown.
func Category(status int, authPermanent bool) frames.ErrorCategory {
	switch {
	case Retryable(status):
		return frames.ErrorTransient
	case authPermanent && (status == http.StatusUnauthorized || status == http.StatusForbidden):
		return frames.ErrorPermanent
	}
	return frames.ErrorUnknown
}
