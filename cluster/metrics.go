package cluster

import (
	"fmt"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/framewire/framewire/internal/signalmetrics"
)

// ScopeName is the instrumentation scope of the front door's meter.
const ScopeName = "github.com/framewire/framewire/cluster"

// Limit names of framewire.limits.refused.
const (
	limitInFlight = "frontdoor_in_flight" // FrontDoorOptions.MaxInFlight
	limitCapacity = "cluster_capacity"    // no worker could take a new session
)

// newInstruments creates the front door's instruments on mp (no-ops when
// mp is nil).
func newInstruments(mp metric.MeterProvider) (*signalmetrics.Instruments, error) {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	in, err := signalmetrics.New(mp.Meter(ScopeName))
	if err != nil {
		return nil, fmt.Errorf("cluster: instruments: %w", err)
	}
	return in, nil
}
