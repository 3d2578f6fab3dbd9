package bus

import (
	"bytes"
	"context"
	"fmt"
	"sync"
)

// LocalBus is the in-process [Bus]: calls go to a service of the same
// process, through channels, with the same caps and errors as over NATS
// (a stopped service is seen at once, so it needs no heartbeats). Several
// services of one subject take the requests in turn.
type LocalBus struct {
	o  Options
	mu sync.Mutex
	// subs are the running services of each subject; next picks among them.
	subs map[string][]*localService
	next map[string]int
}

// Local returns an in-process bus with o.
func Local(o Options) *LocalBus {
	return &LocalBus{o: o.withDefaults(), subs: map[string][]*localService{}, next: map[string]int{}}
}

type localService struct {
	h     Handler
	ctx   context.Context // ends when the service stops
	calls calls
}

// Serve implements [Bus].
func (b *LocalBus) Serve(ctx context.Context, subject string, h Handler) (*Service, error) {
	if err := validSubject(subject); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, fmt.Errorf("bus: serve %s: no handler", subject)
	}
	s, sctx := newService(ctx, subject)
	ls := &localService{h: h, ctx: sctx, calls: calls{max: b.o.MaxCalls}}
	b.mu.Lock()
	b.subs[subject] = append(b.subs[subject], ls)
	b.mu.Unlock()
	go func() { // owned by s: Stop waits for done
		<-sctx.Done()
		b.remove(subject, ls)
		ls.calls.stop()
		close(s.done)
	}()
	return s, nil
}

func (b *LocalBus) remove(subject string, ls *localService) {
	b.mu.Lock()
	defer b.mu.Unlock()
	list := b.subs[subject]
	for i, x := range list {
		if x == ls {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(b.subs, subject)
		delete(b.next, subject)
		return
	}
	b.subs[subject] = list
}

// pick returns a service of subject, in turn, or nil.
func (b *LocalBus) pick(subject string) *localService {
	b.mu.Lock()
	defer b.mu.Unlock()
	list := b.subs[subject]
	if len(list) == 0 {
		return nil
	}
	i := b.next[subject] % len(list)
	b.next[subject] = i + 1
	return list[i]
}

type localResult struct {
	resp   []byte
	err    error
	tooBig int // the size of a result over the cap
}

// Request implements [Bus].
func (b *LocalBus) Request(ctx context.Context, subject string, req []byte, progress func([]byte)) ([]byte, error) {
	if err := validSubject(subject); err != nil {
		return nil, err
	}
	if len(req) > b.o.MaxPayload {
		return nil, tooLarge(subject, "request", len(req), b.o.MaxPayload)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ls := b.pick(subject)
	if ls == nil {
		return nil, fmt.Errorf("bus: %s: %w", subject, ErrNoResponders)
	}
	if err := ls.calls.acquire(); err != nil {
		if err == ErrGone {
			return nil, fmt.Errorf("bus: %s: %w", subject, ErrNoResponders)
		}
		return nil, fmt.Errorf("bus: %s: %w", subject, err)
	}
	cctx, cancel := context.WithCancel(ls.ctx)
	defer cancel() // the caller is done: the callee's ctx ends
	stop := context.AfterFunc(ctx, cancel)
	defer stop()

	updates := make(chan []byte, 16)
	done := make(chan localResult, 1)
	max := b.o.MaxPayload
	send := func(p []byte) {
		if len(p) > max {
			return
		}
		select {
		case updates <- bytes.Clone(p):
		case <-cctx.Done():
		}
	}
	reqCopy := bytes.Clone(req)
	go func() { // owned by the service: its Stop waits
		defer ls.calls.release()
		resp, err := call(cctx, ls.h, reqCopy, send)
		if err == nil && len(resp) > max {
			done <- localResult{tooBig: len(resp)}
			return
		}
		done <- localResult{resp: bytes.Clone(resp), err: err}
	}()

	deliver := func(p []byte) {
		if progress != nil {
			progress(p)
		}
	}
	for {
		select {
		case p := <-updates:
			deliver(p)
		case r := <-done:
			for len(updates) > 0 {
				deliver(<-updates)
			}
			if r.tooBig > 0 {
				return nil, tooLarge(subject, "result", r.tooBig, max)
			}
			if r.err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				if ls.ctx.Err() != nil {
					return nil, gone(subject, "the service stopped")
				}
				return nil, &RemoteError{Subject: subject, Message: errorText(r.err)}
			}
			return r.resp, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ls.ctx.Done():
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, gone(subject, "the service stopped")
		}
	}
}
