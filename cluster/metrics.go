package cluster

import "context"

// Metrics receives a front door's counters. *telemetry.Metrics
// implements it; the front door does not import telemetry.
type Metrics interface {
	// SignallingResponse counts one response by status code: the ones the
	// front door gives itself and the workers' answers it relays.
	SignallingResponse(ctx context.Context, status int)
	// LimitRefused counts one request refused by a limit:
	// "frontdoor_in_flight" (FrontDoorOptions.MaxInFlight) or
	// "cluster_capacity" (no worker could take a new session).
	LimitRefused(ctx context.Context, limit string)
}

// Limit names reported to Metrics.LimitRefused.
const (
	limitInFlight = "frontdoor_in_flight"
	limitCapacity = "cluster_capacity"
)

// nopMetrics is the Metrics of a front door without one.
type nopMetrics struct{}

func (nopMetrics) SignallingResponse(context.Context, int) {}
func (nopMetrics) LimitRefused(context.Context, string)    {}
