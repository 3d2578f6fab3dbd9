package bus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// Wire protocol v1 (docs/decisions/agent-bus.md): the payloads travel
// verbatim as NATS message data; what kind of message it is travels in
// headers.
const (
	// Version is the bus's wire protocol version, the value of the
	// Framewire-Bus header of every message.
	Version = "1"

	hdrVersion = "Framewire-Bus"
	hdrKind    = "Framewire-Bus-Kind"
	hdrCode    = "Framewire-Bus-Code"
	hdrStatus  = "Status" // set by the NATS server: 503 for no responders

	kindBeat     = "beat"
	kindProgress = "progress"
	kindResult   = "result"
	kindError    = "error"
	kindCancel   = "cancel"

	codeFailed   = "failed"
	codeTooLarge = "too_large"
	codeBusy     = "busy"
	codeStopped  = "stopped"
	codeVersion  = "version"
)

// NATSBus is the [Bus] over a NATS connection. Requests are NATS
// messages to the subject with a reply inbox; the callee answers on the
// inbox with heartbeats, progress and one result or error, each with a
// control subject of the call as its reply subject, where the caller sends
// a cancel. The NATS server's "no responders" status tells the caller that
// nobody serves the subject, and tells the callee that its caller's inbox
// is gone (it then cancels the work).
type NATSBus struct {
	nc *nats.Conn
	o  Options
}

// NATS returns a bus over nc with o. The connection must support headers
// (any NATS server since 2.2); the bus does not close it.
func NATS(nc *nats.Conn, o Options) *NATSBus { return &NATSBus{nc: nc, o: o.withDefaults()} }

// Request implements [Bus].
func (b *NATSBus) Request(ctx context.Context, subject string, req []byte, progress func([]byte)) ([]byte, error) {
	if err := validSubject(subject); err != nil {
		return nil, err
	}
	if len(req) > b.o.MaxPayload {
		return nil, tooLarge(subject, "request", len(req), b.o.MaxPayload)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	silence := b.o.silence()
	dog := time.NewTimer(silence) // the callee's silence
	defer dog.Stop()
	done := make(chan struct{}) // the call is over: drop what still comes
	defer close(done)

	// An async subscription keeps what the caller has not taken yet in the
	// client's own bounded pending list; a sync one would allocate a
	// channel of SubChanLen (64 Ki) pointers per call.
	msgs := make(chan *nats.Msg, 16)
	inbox := b.nc.NewInbox()
	sub, err := b.nc.Subscribe(inbox, func(m *nats.Msg) {
		select {
		case msgs <- m:
		case <-done:
		}
	})
	if err != nil {
		return nil, fmt.Errorf("bus: %s: subscribing to the reply inbox: %w", subject, err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	// What the caller has not taken yet is bounded: past it the client
	// drops messages (a slow consumer), and a call that lost its result
	// ends with ErrGone once the beats stop.
	if err := sub.SetPendingLimits(1024, 4*b.o.MaxPayload); err != nil {
		return nil, fmt.Errorf("bus: %s: %w", subject, err)
	}

	m := &nats.Msg{Subject: subject, Reply: inbox, Header: nats.Header{hdrVersion: {Version}}, Data: req}
	if err := b.nc.PublishMsg(m); err != nil {
		if errors.Is(err, nats.ErrMaxPayload) {
			return nil, fmt.Errorf("bus: %s: the request is over the server's max_payload (%d bytes): %w",
				subject, b.nc.MaxPayload(), ErrTooLarge)
		}
		return nil, fmt.Errorf("bus: %s: sending the request: %w", subject, err)
	}
	ctl := "" // the call's control subject, once the callee said it
	for {
		var m *nats.Msg
		select {
		case m = <-msgs:
		case <-ctx.Done():
			b.cancelRemote(ctl)
			return nil, ctx.Err()
		case <-dog.C:
			if len(msgs) > 0 { // the caller was slow, not the callee
				dog.Reset(silence)
				continue
			}
			if b.nc.IsClosed() {
				return nil, fmt.Errorf("bus: %s: waiting for the callee: %w", subject, nats.ErrConnectionClosed)
			}
			b.cancelRemote(ctl)
			if !b.nc.IsConnected() { // the callee may be fine: the caller cannot hear it
				return nil, gone(subject, fmt.Sprintf("no word from it for %v: the NATS connection is down (%s)",
					silence, strings.ToLower(b.nc.Status().String())))
			}
			return nil, gone(subject, fmt.Sprintf("no word from it for %v", silence))
		}
		dog.Reset(silence)
		if m.Header.Get(hdrStatus) == "503" {
			return nil, fmt.Errorf("bus: %s: %w", subject, ErrNoResponders)
		}
		if v := m.Header.Get(hdrVersion); v != Version {
			b.cancelRemote(m.Reply)
			return nil, fmt.Errorf("bus: %s: a message of version %q: %w", subject, v, ErrProtocol)
		}
		if m.Reply != "" {
			ctl = m.Reply
		}
		switch k := m.Header.Get(hdrKind); k {
		case kindBeat:
		case kindProgress:
			if progress != nil && len(m.Data) <= b.o.MaxPayload {
				progress(m.Data)
			}
		case kindResult:
			if len(m.Data) > b.o.MaxPayload {
				return nil, tooLarge(subject, "result", len(m.Data), b.o.MaxPayload)
			}
			return m.Data, nil
		case kindError:
			return nil, remoteErr(subject, m.Header.Get(hdrCode), m.Data)
		default:
			b.cancelRemote(ctl)
			return nil, fmt.Errorf("bus: %s: a message of kind %q: %w", subject, k, ErrProtocol)
		}
	}
}

// remoteErr is the caller's error for an error message.
func remoteErr(subject, code string, text []byte) error {
	if len(text) > MaxErrorText {
		text = text[:MaxErrorText]
	}
	switch code {
	case codeTooLarge:
		return fmt.Errorf("bus: %s: %s: %w", subject, text, ErrTooLarge)
	case codeBusy:
		return fmt.Errorf("bus: %s: %w", subject, ErrBusy)
	case codeStopped:
		return gone(subject, "the service stopped")
	case codeVersion:
		return fmt.Errorf("bus: %s: the callee does not speak version %s: %w", subject, Version, ErrProtocol)
	}
	return &RemoteError{Subject: subject, Message: string(text)}
}

// cancelRemote tells the callee to stop the call, best effort.
func (b *NATSBus) cancelRemote(ctl string) {
	if ctl == "" {
		return
	}
	_ = b.nc.PublishMsg(&nats.Msg{Subject: ctl, Header: nats.Header{hdrVersion: {Version}, hdrKind: {kindCancel}}})
}

// natsService serves one subject.
type natsService struct {
	b       *NATSBus
	subject string
	h       Handler
	ctx     context.Context // ends when the service stops
	ctl     string          // prefix of the calls' control subjects
	calls   calls
	seq     atomic.Uint64

	mu     sync.Mutex
	active map[string]*natsCall // by call id
}

// natsCall is one running call.
type natsCall struct {
	reply  string // the caller's inbox
	ctl    string // the call's control subject
	cancel context.CancelFunc
}

// Serve implements [Bus]. Services of one subject share a NATS queue
// group, so each request goes to one of them.
func (b *NATSBus) Serve(ctx context.Context, subject string, h Handler) (*Service, error) {
	if err := validSubject(subject); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, fmt.Errorf("bus: serve %s: no handler", subject)
	}
	s, sctx := newService(ctx, subject)
	ns := &natsService{b: b, subject: subject, h: h, ctx: sctx, ctl: b.nc.NewInbox(),
		calls: calls{max: b.o.MaxCalls}, active: map[string]*natsCall{}}
	ctlSub, err := b.nc.Subscribe(ns.ctl+".*", ns.control)
	if err != nil {
		s.cancel()
		return nil, fmt.Errorf("bus: serve %s: %w", subject, err)
	}
	sub, err := b.nc.QueueSubscribe(subject, b.o.QueueGroup, ns.request)
	if err == nil {
		err = b.nc.FlushTimeout(b.o.silence()) // the server knows the subscriptions
	}
	if err != nil {
		s.cancel()
		if sub != nil {
			_ = sub.Unsubscribe()
		}
		_ = ctlSub.Unsubscribe()
		return nil, fmt.Errorf("bus: serve %s: %w", subject, err)
	}
	go ns.run(s, sub, ctlSub) // owned by s: Stop waits for done
	return s, nil
}

// run beats for the running calls until the service stops, then tears
// it down.
func (ns *natsService) run(s *Service, sub, ctlSub *nats.Subscription) {
	t := time.NewTicker(ns.b.o.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ns.ctx.Done():
			_ = sub.Unsubscribe()
			ns.calls.stop() // the calls' contexts have ended with ns.ctx
			_ = ctlSub.Unsubscribe()
			// Once Stop returns, the server routes no request to this
			// service: a new one finds no responder instead of a callee
			// that went away.
			_ = ns.b.nc.FlushTimeout(ns.b.o.silence())
			close(s.done)
			return
		case <-t.C:
			if ns.b.nc.IsClosed() {
				s.err = fmt.Errorf("bus: serve %s: %w", ns.subject, nats.ErrConnectionClosed)
				s.cancel()
				continue
			}
			ns.mu.Lock()
			for _, c := range ns.active {
				_ = ns.send(c, kindBeat, "", nil)
			}
			ns.mu.Unlock()
		}
	}
}

// send publishes one message of a call to its caller.
func (ns *natsService) send(c *natsCall, kind, code string, data []byte) error {
	h := nats.Header{hdrVersion: {Version}, hdrKind: {kind}}
	if code != "" {
		h[hdrCode] = []string{code}
	}
	return ns.b.nc.PublishMsg(&nats.Msg{Subject: c.reply, Reply: c.ctl, Header: h, Data: data})
}

// reject answers a request that does not run.
func (ns *natsService) reject(reply, code, text string) {
	_ = ns.send(&natsCall{reply: reply}, kindError, code, []byte(text))
}

// request starts a call (on the subscription's goroutine: it must not
// block).
func (ns *natsService) request(m *nats.Msg) {
	if m.Reply == "" {
		return // nobody to answer
	}
	max := ns.b.o.MaxPayload
	switch {
	case m.Header.Get(hdrVersion) != Version:
		ns.reject(m.Reply, codeVersion, "unsupported version")
		return
	case len(m.Data) > max:
		ns.reject(m.Reply, codeTooLarge, fmt.Sprintf("the request has %d bytes, over the cap of %d", len(m.Data), max))
		return
	}
	if err := ns.calls.acquire(); err != nil {
		code := codeBusy
		if errors.Is(err, ErrGone) {
			code = codeStopped
		}
		ns.reject(m.Reply, code, err.Error())
		return
	}
	id := strconv.FormatUint(ns.seq.Add(1), 36)
	cctx, cancel := context.WithCancel(ns.ctx)
	c := &natsCall{reply: m.Reply, ctl: ns.ctl + "." + id, cancel: cancel}
	ns.mu.Lock()
	ns.active[id] = c
	ns.mu.Unlock()
	_ = ns.send(c, kindBeat, "", nil) // accepted: the caller learns the control subject

	go func() { // owned by the service: calls.stop waits
		defer ns.calls.release()
		defer cancel()
		progress := func(p []byte) {
			if len(p) <= max && cctx.Err() == nil {
				_ = ns.send(c, kindProgress, "", p) // too big for the server: dropped like any oversized progress
			}
		}
		resp, err := call(cctx, ns.h, m.Data, progress)
		ns.mu.Lock()
		delete(ns.active, id)
		ns.mu.Unlock()
		switch {
		case ns.ctx.Err() != nil:
			_ = ns.send(c, kindError, codeStopped, []byte("the service stopped"))
		case cctx.Err() != nil:
			// The caller cancelled or went away: nobody listens.
		case err != nil:
			_ = ns.send(c, kindError, codeFailed, []byte(errorText(err)))
		case len(resp) > max:
			_ = ns.send(c, kindError, codeTooLarge, fmt.Appendf(nil, "the result has %d bytes, over the cap of %d", len(resp), max))
		default:
			if err := ns.send(c, kindResult, "", resp); errors.Is(err, nats.ErrMaxPayload) {
				_ = ns.send(c, kindError, codeTooLarge, fmt.Appendf(nil,
					"the result has %d bytes, over the server's max_payload of %d", len(resp), ns.b.nc.MaxPayload()))
			}
		}
	}()
}

// control handles a call's control messages: the caller's cancel, and the
// NATS server's "no responders" when the caller's inbox is gone.
func (ns *natsService) control(m *nats.Msg) {
	id := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
	if m.Header.Get(hdrStatus) != "503" && m.Header.Get(hdrKind) != kindCancel {
		return
	}
	ns.mu.Lock()
	c := ns.active[id]
	ns.mu.Unlock()
	if c != nil {
		c.cancel()
	}
}
