package llmtest

import (
	"context"
	"iter"
	"sync"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
)

// Provider is a scripted [llm.Provider]. Requests are numbered from 0 in
// the order their streams start being read; each stream yields the events
// Respond gives for its number, then either hangs (when Hang says so) or
// ends, with Err when that is set.
//
// The zero value answers every request with an empty, successful
// response. A Provider is safe for concurrent streams; set its fields
// before the first one.
type Provider struct {
	// Respond gives the events of the n-th request; it may read the
	// request. Nil, or a nil result, is a response with no events.
	// Script builds a Respond from a list of responses.
	Respond func(n int, req *frames.LLMContext) []llm.Event
	// Hang, when it returns true for the n-th request, keeps that stream
	// open after its events until its context ends, and then yields the
	// context's error, as a model that is slow to answer. Always hangs
	// every request; nil hangs none. To hang before any event, let
	// Respond give no events for that request.
	Hang func(n int) bool
	// Err, when set, is yielded after the events of every stream that
	// does not hang, as a model failing mid-response.
	Err error

	mu   sync.Mutex
	reqs []*frames.LLMContext
}

// Stream implements [llm.Provider]. The request is recorded when the
// returned sequence starts being read. Like a real provider, the stream
// stops once ctx ends: instead of the next event it yields ctx's error and
// ends.
func (p *Provider) Stream(ctx context.Context, req *frames.LLMContext) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		p.mu.Lock()
		n := len(p.reqs)
		p.reqs = append(p.reqs, req)
		p.mu.Unlock()
		if p.Respond != nil {
			for _, ev := range p.Respond(n, req) {
				if ctx.Err() != nil {
					yield(llm.Event{}, ctx.Err())
					return
				}
				if !yield(ev, nil) {
					return
				}
			}
		}
		if p.Hang != nil && p.Hang(n) {
			<-ctx.Done()
			yield(llm.Event{}, ctx.Err())
			return
		}
		if p.Err != nil {
			yield(llm.Event{}, p.Err)
		}
	}
}

// Requests returns the requests so far, in order: the n-th is the one
// Respond and Hang were asked about as n.
func (p *Provider) Requests() []*frames.LLMContext {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*frames.LLMContext(nil), p.reqs...)
}

// Script returns a Respond that answers the n-th request with the n-th
// response of the list, and any request after the list with no events.
func Script(responses ...[]llm.Event) func(n int, req *frames.LLMContext) []llm.Event {
	return func(n int, _ *frames.LLMContext) []llm.Event {
		if n < len(responses) {
			return responses[n]
		}
		return nil
	}
}

// Always is a Hang that hangs every request.
func Always(int) bool { return true }
