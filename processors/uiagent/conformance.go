package uiagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// This file holds what examples/conformance needs for its UI rows
// (docs/protocol.md §10, rows 5, 6, 7, 8, 10 and 13):
//
//	groups := uiagent.NewTaskGroups(uiagent.TaskGroupsOptions{})
//	rt := rtvi.NewProcessor(rtvi.Options{})
//	uiagent.WireConformance(rt, groups)
//	p := pipeline.New(transportIn, rt, groups, ..., transportOut)
//	// (rt brings its observer: the task adds it)
//
// Row 5/10: every ui-snapshot is answered with server-message
// {type:"ui_state", text:<RenderUIState>}. Row 6: every ui-event with
// server-message {type:"ui_event", event, payload}. Row 7: client-message
// {t:"start-job-group", d:{workers, label?, cancellable?, hold_ms?}}
// starts a group whose workers each send job_update {text:"working"},
// wait hold_ms, and complete with {worker:<name>}. Row 8: the TaskGroups
// processor in the pipeline honours ui-cancel-job-group (and
// ui-cancel-task) for cancellable groups. Row 13: the RTVI observer words
// the envelopes for each client's version.

// StartJobGroupType is the client-message type (t) that starts a
// conformance job group.
const StartJobGroupType = "start-job-group"

// Bounds of a start-job-group request.
const (
	// MaxGroupWorkers is the most workers one request may name.
	MaxGroupWorkers = 32
	// MaxHold is the longest hold_ms a request may ask for.
	MaxHold = 10 * time.Minute
)

// StartJobGroupRequest is the data (d) of a start-job-group client message.
type StartJobGroupRequest struct {
	// Workers are the worker names, unique and non-empty.
	Workers []string
	// Label is the card label; empty for none.
	Label string
	// Cancellable defaults to true.
	Cancellable bool
	// Hold is how long each worker waits before it completes (hold_ms).
	Hold time.Duration
}

// ParseStartJobGroup decodes and checks the data of a start-job-group
// client message: workers is a required array of 1 to MaxGroupWorkers
// unique non-empty strings; label is an optional string; cancellable an
// optional boolean (default true); hold_ms an optional number of
// milliseconds from 0 to MaxHold. Unknown members are ignored; null counts
// as absent.
func ParseStartJobGroup(d wire.RawJSON) (StartJobGroupRequest, error) {
	var in struct {
		Workers     *[]json.RawMessage `json:"workers"`
		Label       *string            `json:"label"`
		Cancellable *bool              `json:"cancellable"`
		HoldMS      *float64           `json:"hold_ms"`
	}
	r := StartJobGroupRequest{Cancellable: true}
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
	if n := len(*in.Workers); n == 0 || n > MaxGroupWorkers {
		return r, fmt.Errorf("start-job-group: workers must list 1 to %d names, not %d", MaxGroupWorkers, n)
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
		if math.IsNaN(ms) || ms < 0 || ms > float64(MaxHold/time.Millisecond) {
			return r, fmt.Errorf("start-job-group: hold_ms must be between 0 and %d", MaxHold/time.Millisecond)
		}
		r.Hold = time.Duration(ms * float64(time.Millisecond))
	}
	return r, nil
}

// HoldWorker is the conformance worker: it sends the update
// {"text":"working"}, waits hold (or until cancelled), and completes with
// {"worker": name}.
func HoldWorker(name string, hold time.Duration) Worker {
	return Worker{Name: name, Work: func(ctx context.Context, update func(any)) (any, error) {
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

// Start starts the request's group on groups, one [HoldWorker] per name.
func (r StartJobGroupRequest) Start(groups *TaskGroups) (*Group, error) {
	workers := make([]Worker, len(r.Workers))
	for i, name := range r.Workers {
		workers[i] = HoldWorker(name, r.Hold)
	}
	return groups.Start(GroupOptions{Label: r.Label, NotCancellable: !r.Cancellable}, workers...)
}

// WireConformance registers the conformance bot's UI behaviours on p:
// ui_state and ui_event server-messages for every snapshot and event, and
// start-job-group client messages started on groups (which must also be
// in the pipeline, downstream of p, for the cancel requests). A bad
// start-job-group request gets an error-response that says why; a good
// one gets no response (the lifecycle is the answer).
func WireConformance(p *rtvi.Processor, groups *TaskGroups) {
	p.OnUIMessage(func(_ context.Context, m rtvi.UIMessage) {
		switch m := m.(type) {
		case *rtvi.UISnapshotFrame:
			_ = p.SendServerMessage(UIStateMessage{Text: RenderUIState(m.Tree)})
		case *rtvi.UIEventFrame:
			_ = p.SendServerMessage(UIEventMessage{Event: m.Event, Payload: m.Payload})
		}
	})
	p.OnClientMessage(func(_ context.Context, m rtvi.ClientMessage) {
		if m.Type != StartJobGroupType {
			return
		}
		req, err := ParseStartJobGroup(m.Data)
		if err == nil {
			_, err = req.Start(groups)
		}
		if err != nil {
			_ = p.SendErrorResponse(m, err.Error())
		}
	})
}
