package websocket

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/framewire/framewire/internal/outputmetrics"
	"github.com/framewire/framewire/internal/signalmetrics"
)

// ScopeName is the instrumentation scope of the transport's meter.
const ScopeName = "github.com/framewire/framewire/transports/websocket"

// Limit names of framewire.limits.refused.
const (
	limitSessions    = "sessions"     // Options.MaxSessions
	limitInboundRate = "inbound_rate" // Options.Inbound
	limitHost        = "host"         // Options.AllowHosts
	limitOrigin      = "origin"       // Options.AllowOrigins
	limitAdmit       = "admit"        // Options.Admit
)

// instruments are the transport's metrics, made from
// Options.MeterProvider; without one they are no-ops. The output's series
// carry transport="websocket", so that they sit beside WebRTC's under the
// same names.
type instruments struct {
	output   *outputmetrics.Instruments
	signal   *signalmetrics.Instruments
	outbound []metric.RecordOption
}

func newInstruments(mp metric.MeterProvider) (*instruments, error) {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	m := mp.Meter(ScopeName)
	var (
		in  instruments
		err error
	)
	wrap := func(err error) error { return fmt.Errorf("websocket: instruments: %w", err) }
	if in.output, err = outputmetrics.New(m, "websocket"); err != nil {
		return nil, wrap(err)
	}
	if in.signal, err = signalmetrics.New(m); err != nil {
		return nil, wrap(err)
	}
	in.outbound = outputmetrics.Queue("websocket.outbound")
	return &in, nil
}

// refused counts a request or message a limit refused.
func (in *instruments) refused(ctx context.Context, limit string) { in.signal.Refused(ctx, limit) }
