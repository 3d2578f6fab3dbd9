// Package signalmetrics holds the two instruments every framewire server
// that answers signalling owns: framewire.signalling.responses (by HTTP
// status code) and framewire.limits.refused (by limit). The WebRTC
// transport and the cluster's front door both count into them, so each
// metric has one definition.
package signalmetrics

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// Attribute keys, as docs/observability.md names them.
const (
	keyStatusCode = attribute.Key("http.response.status_code")
	keyLimit      = attribute.Key("limit")
)

// Instruments counts signalling responses and refusals on the meter it was
// made from. Methods are safe for concurrent use; each label set is built
// once, and counting allocates nothing after the first time.
type Instruments struct {
	responses metric.Int64Counter
	refusals  metric.Int64Counter

	mu sync.Mutex
	// statuses and limits hold each label set as a ready slice: passing
	// it with ... allocates nothing, where a fresh variadic would.
	statuses map[int][]metric.AddOption
	limits   map[string][]metric.AddOption
}

// New creates the instruments on m; a nil m makes no-op ones.
func New(m metric.Meter) (*Instruments, error) {
	if m == nil {
		m = noop.Meter{}
	}
	var (
		in  Instruments
		err error
	)
	if in.responses, err = m.Int64Counter("framewire.signalling.responses", metric.WithUnit("{response}"),
		metric.WithDescription("Signalling (SDP offer and ICE) responses, by HTTP status code.")); err != nil {
		return nil, err
	}
	if in.refusals, err = m.Int64Counter("framewire.limits.refused", metric.WithUnit("{refusal}"),
		metric.WithDescription("Requests a limit refused, by limit.")); err != nil {
		return nil, err
	}
	in.statuses = map[int][]metric.AddOption{}
	in.limits = map[string][]metric.AddOption{}
	return &in, nil
}

// Response counts one response with its HTTP status.
func (in *Instruments) Response(ctx context.Context, status int) {
	in.mu.Lock()
	o, ok := in.statuses[status]
	if !ok {
		o = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(keyStatusCode.Int(status)))}
		if len(in.statuses) < 1000 { // status codes are three digits
			in.statuses[status] = o
		}
	}
	in.mu.Unlock()
	in.responses.Add(ctx, 1, o...)
}

// Refused counts one request that limit (a fixed name the caller owns)
// refused.
func (in *Instruments) Refused(ctx context.Context, limit string) {
	in.mu.Lock()
	o, ok := in.limits[limit]
	if !ok {
		o = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(keyLimit.String(limit)))}
		if len(in.limits) < 64 {
			in.limits[limit] = o
		}
	}
	in.mu.Unlock()
	in.refusals.Add(ctx, 1, o...)
}
