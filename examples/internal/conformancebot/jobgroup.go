package conformancebot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	rtviwire "github.com/framewire/framewire/processors/rtvi/wire"
	"github.com/framewire/framewire/processors/uiagent"
)

// Row 7 of the conformance bot (docs/protocol.md §10): a client-message
// {t:"start-job-group", d:{workers, label?, cancellable?, hold_ms?}}
// starts a job group whose workers each send job_update {text:"working"},
// wait hold_ms, and complete with {worker:<name>}. The TaskGroups
// processor in the pipeline honours the client's cancel requests (row 8)
// and the RTVI observer words the envelopes for the client's version
// (row 13).

// startJobGroupType is the client-message type (t) that starts a
// conformance job group.
const startJobGroupType = "start-job-group"

// Bounds of a start-job-group request.
const (
	// maxGroupWorkers is the most workers one request may name.
	maxGroupWorkers = 32
	// maxHold is the longest hold_ms a request may ask for.
	maxHold = 10 * time.Minute
)

// startJobGroupRequest is the data (d) of a start-job-group client message.
type startJobGroupRequest struct {
	// Workers are the worker names, unique and non-empty.
	Workers []string
	// Label is the card label; empty for none.
	Label string
	// Cancellable defaults to true.
	Cancellable bool
	// Hold is how long each worker waits before it completes (hold_ms).
	Hold time.Duration
}

// parseStartJobGroup decodes and checks the data of a start-job-group
// client message: workers is a required array of 1 to maxGroupWorkers
// unique non-empty strings; label is an optional string; cancellable an
// optional boolean (default true); hold_ms an optional number of
// milliseconds from 0 to maxHold. Unknown members are ignored; null counts
// as absent.
func parseStartJobGroup(d rtviwire.RawJSON) (startJobGroupRequest, error) {
	var in struct {
		Workers     *[]json.RawMessage `json:"workers"`
		Label       *string            `json:"label"`
		Cancellable *bool              `json:"cancellable"`
		HoldMS      *float64           `json:"hold_ms"`
	}
	r := startJobGroupRequest{Cancellable: true}
	dec := json.NewDecoder(bytes.NewReader(d))
	if len(bytes.TrimSpace(d)) == 0 || bytes.TrimSpace(d)[0] != '{' {
		return r, errors.New("start-job-group: the data must be an object")
	}
	if err := dec.Decode(&in); err != nil {
		return r, fmt.Errorf("start-job-group: %w", err)
	}
	if in.Workers == nil {
		return r, errors.New("start-job-group: workers is required")
	}
	if n := len(*in.Workers); n == 0 || n > maxGroupWorkers {
		return r, fmt.Errorf("start-job-group: workers must list 1 to %d names, not %d", maxGroupWorkers, n)
	}
	seen := map[string]bool{}
	for i, raw := range *in.Workers {
		var name string
		if err := json.Unmarshal(raw, &name); err != nil || name == "" {
			return r, fmt.Errorf("start-job-group: workers[%d] is not a non-empty string", i)
		}
		if seen[name] {
			return r, fmt.Errorf("start-job-group: worker %q is listed twice", name)
		}
		seen[name] = true
		r.Workers = append(r.Workers, name)
	}
	if in.Label != nil {
		r.Label = *in.Label
	}
	if in.Cancellable != nil {
		r.Cancellable = *in.Cancellable
	}
	if in.HoldMS != nil {
		ms := *in.HoldMS
		if math.IsNaN(ms) || ms < 0 || ms > float64(maxHold/time.Millisecond) {
			return r, fmt.Errorf("start-job-group: hold_ms must be between 0 and %d", maxHold/time.Millisecond)
		}
		r.Hold = time.Duration(ms * float64(time.Millisecond))
	}
	return r, nil
}

// holdWorker is the conformance worker: it sends the update
// {"text":"working"}, waits hold (or until cancelled), and completes with
// {"worker": name}.
func holdWorker(name string, hold time.Duration) uiagent.Worker {
	return uiagent.Worker{Name: name, Work: func(ctx context.Context, update func(any)) (any, error) {
		update(map[string]string{"text": "working"})
		if hold > 0 {
			t := time.NewTimer(hold)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return map[string]string{"worker": name}, nil
	}}
}

// start starts the request's group on groups, one [holdWorker] per name.
func (r startJobGroupRequest) start(groups *uiagent.TaskGroups) (*uiagent.Group, error) {
	workers := make([]uiagent.Worker, len(r.Workers))
	for i, name := range r.Workers {
		workers[i] = holdWorker(name, r.Hold)
	}
	return groups.Start(uiagent.GroupOptions{Label: r.Label, NotCancellable: !r.Cancellable}, workers...)
}
