package uibus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/framewire/framewire/bus"
	"github.com/framewire/framewire/processors/rtvi/wire"
	"github.com/framewire/framewire/processors/uiagent"
)

// workerVersion is the "v" of the worker payloads.
const workerVersion = 1

// workerRequest starts a remote worker.
type workerRequest struct {
	V      int    `json:"v"`
	Worker string `json:"worker"`
}

// Worker statuses of a workerResult.
const (
	workerCompleted = "completed"
	workerFailed    = "failed"
	workerError     = "error"
)

// workerResult is a remote worker's end.
type workerResult struct {
	V        int             `json:"v"`
	Status   string          `json:"status"`
	Response json.RawMessage `json:"response,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// RemoteWorker returns a task-group worker named name whose work runs
// wherever [ServeWorker] serves subject. Its updates arrive as the
// remote's updates (as raw JSON), its response as the remote's; a remote
// error ends it "error"; cancelling the group cancels the remote work.
// When the remote dies or stops, or nobody serves subject, the worker
// returns an error (the group ends as on any worker's error), so the
// group still sends group_completed exactly once.
func RemoteWorker(b bus.Bus, name, subject string) uiagent.Worker {
	return uiagent.Worker{Name: name, Work: func(ctx context.Context, update func(any)) (any, error) {
		req, _ := json.Marshal(workerRequest{V: workerVersion, Worker: name}) // cannot fail
		out, err := b.Request(ctx, subject, req, func(p []byte) {
			if json.Valid(p) {
				update(json.RawMessage(p))
			}
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("remote worker %s: %w", name, err)
		}
		var r workerResult
		if err := json.Unmarshal(out, &r); err != nil || r.V != workerVersion {
			return nil, fmt.Errorf("remote worker %s: an unreadable result: %w", name, bus.ErrProtocol)
		}
		var resp any
		if r.Response != nil && json.Valid(r.Response) {
			resp = r.Response
		}
		switch r.Status {
		case workerCompleted:
			return resp, nil
		case workerFailed:
			return nil, uiagent.Failed(resp)
		}
		return nil, &bus.RemoteError{Subject: subject, Message: r.Error}
	}}
}

// ServeWorker serves work on subject for [RemoteWorker]s, until ctx ends
// or the service is stopped. work runs once per request, under a context
// that ends when the group cancels the worker, its caller goes away or
// the service stops; its updates go to the caller (updates over the
// bus's payload cap are dropped). A panic in work ends it with an error.
func ServeWorker(ctx context.Context, b bus.Bus, subject string, work uiagent.Work) (*bus.Service, error) {
	if work == nil {
		return nil, fmt.Errorf("uibus: serve worker %s: no work", subject)
	}
	return b.Serve(ctx, subject, func(ctx context.Context, req []byte, progress func([]byte)) ([]byte, error) {
		var wr workerRequest
		if err := json.Unmarshal(req, &wr); err != nil || wr.V != workerVersion {
			return nil, errors.New("not a worker request of version 1")
		}
		update := func(data any) {
			if p, err := encode(data); err == nil {
				progress(p)
			}
		}
		resp, err := work(ctx, update) // a panic: the bus makes it the call's error
		r := workerResult{V: workerVersion, Status: workerCompleted}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err() // cancelled: nobody waits for it
			}
			failed, ok := uiagent.FailedResponse(err)
			if !ok {
				r.Status, r.Error = workerError, errorText(err)
				return json.Marshal(r)
			}
			// The worker ran but could not do its job: "failed", with
			// its response.
			r.Status, resp = workerFailed, failed
		}
		out, err := encode(resp)
		if err != nil {
			r.Status, r.Error = workerError, errorText(err)
			return json.Marshal(r)
		}
		r.Response = out
		return json.Marshal(r)
	})
}

// encode encodes a worker's value as uiagent does: raw JSON and RTVI
// payloads as themselves, anything else with encoding/json.
func encode(v any) ([]byte, error) {
	switch x := v.(type) {
	case json.RawMessage:
		if !json.Valid(x) {
			return nil, errors.New("invalid raw JSON")
		}
		return x, nil
	case wire.Payload:
		b := x.AppendJSON(nil)
		if !json.Valid(b) {
			return nil, errors.New("invalid raw JSON")
		}
		return b, nil
	}
	return json.Marshal(v)
}
