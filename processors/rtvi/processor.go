package rtvi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/errorid"
	"github.com/framewire/framewire/internal/logsample"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// LibraryVersion is the framewire version announced in bot-ready's default
// about object.
const LibraryVersion = "0.1.0"

// Options configure a [Processor]. The zero value is ready to use.
type Options struct {
	// About is the about object of bot-ready. Default:
	// {"library":"framewire","library_version":LibraryVersion}.
	About wire.Payload
	// ManualBotReady leaves bot-ready to the application, which calls
	// [Processor.SetBotReady]. By default the processor sends it right
	// before the OnClientReady handlers run, so what they send follows it.
	ManualBotReady bool
	// FlushTimeout bounds how long send-text waits for the pipeline to
	// drain after interrupting the bot, before it appends the text anyway.
	// Default: 5s, as Pipecat's flush_pipeline.
	FlushTimeout time.Duration
	// DrainTimeout bounds how long End (or Stop) waits for the client
	// messages queued ahead of it to be handled. Default: 5s.
	DrainTimeout time.Duration
	// MaxQueuedMessages and MaxQueuedBytes bound the client messages
	// waiting for the message worker. A message past either bound is
	// dropped: a request (a message with an id) is answered with an
	// error-response naming the bound, and the client gets a non-fatal
	// error saying how many were dropped (at most one a second), so a
	// client that floods its own session cannot grow its memory.
	// Defaults: 256 messages, 4 MiB.
	MaxQueuedMessages int
	MaxQueuedBytes    int64
	// MaxQueueDelay bounds how long a client message may wait in the queue
	// before the worker takes it up. An older message is not handled: a
	// request is answered with an error-response saying it expired. With
	// FlushTimeout it bounds the backlog in time: a message is taken up or
	// refused within MaxQueueDelay + FlushTimeout of its arrival (15 s at
	// the defaults; without it, 256 queued send-texts each waiting out a
	// 5 s flush made 21 min), as long as the application's handlers
	// return promptly. Default: 10s.
	MaxQueueDelay time.Duration
	// Logger receives the processor's logs. Default: the task's logger.
	// Lines about single bad client messages are sampled (the first 5 of
	// each kind a second, then one in 100), so a flood of them cannot
	// flood the log.
	Logger *zap.Logger
	// Observer configures the processor's observer (see
	// [Processor.Observer]) unless [NewObserver] made it. Its Logger
	// defaults to this Options' Logger.
	Observer ObserverOptions
}

// Processor is the inbound half of RTVI. It sits at the head of the
// pipeline (before or after the input transport: it takes
// frames.InputTransportMessage in either direction), decodes client
// messages, runs the client-ready handshake, pushes the frames for client
// requests downstream and answers with RTVI messages, which leave as
// frames.OutputTransportMessageUrgent pushed downstream. Frames it does
// not handle pass through.
//
// Client messages are handled one at a time, in arrival order, on a
// worker of the processor's node, so handlers may block (send-text waits
// for the pipeline to drain) without stalling the frames that flow
// through. Handlers registered with OnClientReady, OnClientMessage and
// OnUIMessage run on that worker. The Send methods may be called from any
// goroutine, even before the task runs (what they send then waits for it).
// The processor brings its [Observer]: a pipeline.Task adds it.
//
// A client's llm-function-call-result goes on as a frames.FunctionCallResult
// only for a call the observer announced to the client as one the client
// runs (see [ClientFunctions]) and that has not settled, and only the
// first answer to it; others are dropped with a sampled log line and no
// reply, so a client cannot write tool results for calls it was not asked
// to run.
type Processor struct {
	opts Options
	id   atomic.Uint64

	// out is how everything the processor says leaves, from any goroutine
	// and before the task runs (then it waits and goes out at Setup).
	out pipeline.Outlet
	// sink replaces out in unit tests that drive the processor without a
	// task.
	sink pipeline.Pusher
	// obs is the processor's observer, which the task adds (ObserverProvider).
	obs      *Observer
	obsOnce  sync.Once
	obsTaken atomic.Bool // the task asked for the observer
	setUp    atomic.Bool // a task has set the processor up
	log      atomic.Pointer[zap.Logger]
	msgLog   atomic.Pointer[zap.Logger] // log, sampled, for per-message lines
	version  atomic.Pointer[wire.ClientVersion]
	skipTTS  atomic.Bool

	inbox       pipeline.FrameQueue
	pending     atomic.Int64  // messages queued or being handled
	queuedBytes atomic.Int64  // bytes of the messages in inbox
	dropped     int           // messages dropped since the last busy error; node goroutine only
	lastBusy    time.Time     // when the last busy error went out; node goroutine only
	drained     chan struct{} // signalled when pending drops to zero
	drainedOnce sync.Once

	mu            sync.Mutex // guards the fields below
	readyID       string
	clientReady   bool
	botReady      bool
	onReady       []func(context.Context, *ClientReadyFrame)
	onMessage     []func(context.Context, ClientMessage)
	onUI          []func(context.Context, UIMessage)
	flushToken    uint64
	flushReturned chan struct{}

	// callMu guards the client function calls that the observer has
	// announced to the client and that have not settled or been answered:
	// the only calls the client may answer (at most maxClientCalls, the
	// oldest forgotten first).
	callMu      sync.Mutex
	clientCalls map[string]struct{}
	callOrder   []string
}

// maxClientCalls bounds the client function calls awaiting an answer.
const maxClientCalls = 256

// NewProcessor returns a processor with opts. The zero Processor is a
// processor with zero Options.
func NewProcessor(opts Options) *Processor {
	p := &Processor{opts: opts}
	if opts.Logger != nil {
		p.setLogger(opts.Logger)
	}
	return p
}

// setLogger makes l the processor's logger, and a sampled copy of it the
// logger of per-message lines.
func (p *Processor) setLogger(l *zap.Logger) {
	p.log.Store(l)
	p.msgLog.Store(logsample.Logger(l))
}

// messageLogger is the logger of lines about single client messages.
func (p *Processor) messageLogger() *zap.Logger {
	if l := p.msgLog.Load(); l != nil {
		return l
	}
	return nopLogger
}

func (p *Processor) maxQueued() (int64, int64) {
	n, b := int64(p.opts.MaxQueuedMessages), p.opts.MaxQueuedBytes
	if n <= 0 {
		n = 256
	}
	if b <= 0 {
		b = 4 << 20
	}
	return n, b
}

// Name implements pipeline.Namer.
func (p *Processor) Name() string {
	p.id.CompareAndSwap(0, frames.NextID())
	return fmt.Sprintf("RTVIProcessor#%d", p.id.Load())
}

func (p *Processor) flushTimeout() time.Duration {
	if p.opts.FlushTimeout > 0 {
		return p.opts.FlushTimeout
	}
	return 5 * time.Second
}

func (p *Processor) maxQueueDelay() time.Duration {
	if p.opts.MaxQueueDelay > 0 {
		return p.opts.MaxQueueDelay
	}
	return 10 * time.Second
}

func (p *Processor) drainTimeout() time.Duration {
	if p.opts.DrainTimeout > 0 {
		return p.opts.DrainTimeout
	}
	return 5 * time.Second
}

// drainedCh returns the channel the worker signals when it runs out of
// queued messages.
func (p *Processor) drainedCh() chan struct{} {
	p.drainedOnce.Do(func() { p.drained = make(chan struct{}, 1) })
	return p.drained
}

// Setup implements pipeline.Setupper: it attaches the processor's outlet,
// so what was sent before the task ran goes out now, in order. It warns
// once when the task has not taken the processor's observer.
func (p *Processor) Setup(_ context.Context, s pipeline.Setup) error {
	if p.opts.Logger == nil && s.Logger != nil {
		p.setLogger(s.Logger)
	}
	s.Attach(&p.out)
	p.setUp.Store(true)
	if !p.obsTaken.Load() {
		p.logger().Warn("rtvi: the processor runs without its observer: bot speech, transcripts, " +
			"LLM and TTS text, bot-output, function calls, metrics, ui-command and ui-task messages " +
			"will not reach the client; run the processor in a pipeline.Task (which adds " +
			"Processor.Observer itself) or add Processor.Observer() to TaskOptions.Observers")
	}
	return nil
}

// Observer implements pipeline.ObserverProvider: it returns the processor's
// observer (the one [NewObserver] made for it, or one configured from
// Options.Observer), which a pipeline.Task adds when it runs the processor.
func (p *Processor) Observer() observers.Observer {
	p.obsTaken.Store(true)
	return p.observer()
}

func (p *Processor) observer() *Observer {
	p.obsOnce.Do(func() {
		if p.obs == nil {
			p.obs = newObserver(p, p.opts.Observer)
		}
	})
	return p.obs
}

var nopLogger = zap.NewNop()

func (p *Processor) logger() *zap.Logger {
	if l := p.log.Load(); l != nil {
		return l
	}
	return nopLogger
}

// OnClientReady registers fn to run when a client-ready has been handled
// (after the version check, before bot-ready is sent). fn gets the frame
// pushed downstream; it must not change it.
func (p *Processor) OnClientReady(fn func(ctx context.Context, r *ClientReadyFrame)) {
	p.mu.Lock()
	p.onReady = append(p.onReady, fn)
	p.mu.Unlock()
}

// OnClientMessage registers fn for client-message requests. fn runs after
// the ClientMessageFrame has been pushed; answer with SendServerResponse
// or SendErrorResponse.
func (p *Processor) OnClientMessage(fn func(ctx context.Context, m ClientMessage)) {
	p.mu.Lock()
	p.onMessage = append(p.onMessage, fn)
	p.mu.Unlock()
}

// OnUIMessage registers fn for ui-event, ui-snapshot and the cancel
// messages. fn gets the frame that was pushed downstream.
func (p *Processor) OnUIMessage(fn func(ctx context.Context, m UIMessage)) {
	p.mu.Lock()
	p.onUI = append(p.onUI, fn)
	p.mu.Unlock()
}

// ClientVersion returns the version of the connected client (zero until a
// client-ready with a parseable version has arrived). It is safe to call
// from any goroutine.
func (p *Processor) ClientVersion() wire.ClientVersion {
	if v := p.version.Load(); v != nil {
		return *v
	}
	return wire.ClientVersion{}
}

// ClientReadyReceived reports whether the client has sent client-ready.
func (p *Processor) ClientReadyReceived() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clientReady
}

// BotReadySent reports whether bot-ready has been sent.
func (p *Processor) BotReadySent() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.botReady
}

// ProcessFrame implements pipeline.Processor.
func (p *Processor) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	switch f := f.(type) {
	case *frames.Start:
		h.Forward()
		h.GoBackground(p.work)
	case *frames.InputTransportMessage:
		h.Consume()
		p.enqueue(f, dir)
	case *frames.End, *frames.Stop:
		// Let the messages queued ahead of End be handled first, so what
		// they push goes out before the pipeline ends.
		if p.pending.Load() > 0 {
			h.Consume()
			h.GoBackground(func(ctx context.Context, out pipeline.Pusher) error {
				p.waitDrained(ctx)
				out.Push(f, dir)
				return nil
			})
		}
	case *frames.Flush:
		if dir == frames.Upstream && p.flushReturnedHere(f.Token) {
			h.Consume()
		}
	case *frames.Error:
		p.sendErrorFrame(f)
	case *frames.InputTransportRefused:
		p.refused(f)
	case *frames.LLMConfigureOutput:
		p.skipTTS.Store(f.SkipTTS)
	case *frames.Cancel:
		p.pending.Add(-int64(p.inbox.Clear()))
		p.queuedBytes.Store(0)
	}
	return nil
}

// refused answers what the transport refused, in RTVI: the refused
// request by its id (a message without one gets no answer), the notice as
// a non-fatal error, the end of the session as a fatal one. The frame goes
// on downstream, behind what it made, to the output transport.
func (p *Processor) refused(f *frames.InputTransportRefused) {
	if f.Answer != "" {
		if id, ok := wire.PeekID(f.Message); ok {
			p.sendErrorResponse(id, f.Answer)
		}
	}
	if f.Notice != "" {
		p.SendError(f.Notice)
	}
	if f.End != "" {
		p.Send(wire.Message{Type: wire.TypeError, Data: wire.Error{Error: "session ended: " + f.End, Fatal: true}})
	}
}

// queuedMessage is a client message waiting for the worker, with the time
// it arrived. It never leaves the processor.
type queuedMessage struct {
	frames.Base
	frames.System
	msg []byte
	at  time.Time
}

// enqueue queues a client message for the worker, or drops it when the
// queue is at its bounds. It runs on the node's goroutine.
func (p *Processor) enqueue(f *frames.InputTransportMessage, dir frames.Direction) {
	maxN, maxB := p.maxQueued()
	size := int64(len(f.Message))
	if p.pending.Load() >= maxN || p.queuedBytes.Load()+size > maxB {
		if id, ok := wire.PeekID(f.Message); ok {
			p.sendErrorResponse(id, fmt.Sprintf("busy: at most %d messages or %d bytes may wait for the bot; this request was dropped, send it again later", maxN, maxB))
		}
		p.dropped++
		if now := time.Now(); now.Sub(p.lastBusy) >= time.Second {
			p.lastBusy = now
			p.logger().Warn("client messages dropped: the client sends faster than the bot handles them",
				zap.Int("dropped", p.dropped), zap.Int64("queued", p.pending.Load()), zap.Int64("queued_bytes", p.queuedBytes.Load()))
			p.SendError(fmt.Sprintf("too many messages: %d dropped; slow down", p.dropped))
			p.dropped = 0
		}
		return
	}
	p.pending.Add(1)
	p.queuedBytes.Add(size)
	p.inbox.Push(&queuedMessage{msg: f.Message, at: time.Now()}, dir)
}

// expire refuses a client message that waited longer than MaxQueueDelay:
// a request gets an error-response, anything else is dropped.
func (p *Processor) expire(raw []byte, waited time.Duration) {
	p.messageLogger().Warn("dropping a client message that waited too long in the queue",
		zap.Duration("waited", waited), zap.Duration("max_queue_delay", p.maxQueueDelay()))
	if id, ok := wire.PeekID(raw); ok {
		p.sendErrorResponse(id, fmt.Sprintf("expired: the request waited %v behind earlier ones, more than %v; send it again",
			waited.Round(time.Millisecond), p.maxQueueDelay()))
	}
}

// waitDrained waits until no client message is queued or being handled,
// for at most DrainTimeout.
func (p *Processor) waitDrained(ctx context.Context) {
	t := time.NewTimer(p.drainTimeout())
	defer t.Stop()
	for p.pending.Load() > 0 {
		select {
		case <-p.drainedCh():
		case <-t.C:
			p.logger().Warn("ending with client messages still queued", zap.Int64("pending", p.pending.Load()))
			return
		case <-ctx.Done():
			return
		}
	}
}

// Send encodes m and pushes it downstream as an urgent transport message.
// Before the task runs the message waits and goes out when the task has
// set the processor up (after the task ended it is dropped). It never
// blocks.
func (p *Processor) Send(m wire.Message) {
	p.sendBytes(m.Encode(), m.Type, 0)
}

// sendBytes pushes an encoded message of type typ downstream, with
// supersede key (0: none; see the observer's levelKey).
func (p *Processor) sendBytes(b []byte, typ string, key uint64) {
	p.pusher().Push(&frames.OutputTransportMessageUrgent{Message: b, Type: typ, Supersede: key}, frames.Downstream)
}

// pusher is the outlet, or the unit tests' sink.
func (p *Processor) pusher() pipeline.Pusher {
	if p.sink != nil {
		return p.sink
	}
	return &p.out
}

// SendServerMessage sends server-message with data (nil omits it).
func (p *Processor) SendServerMessage(data wire.Payload) {
	p.Send(wire.Message{Type: wire.TypeServerMessage, Data: data})
}

// SendServerResponse answers the client message req with server-response
// {t: req.Type, d: data}.
func (p *Processor) SendServerResponse(req ClientMessage, data wire.Payload) {
	p.Send(wire.Message{Type: wire.TypeServerResponse, ID: req.ID, Data: wire.ServerResponse{T: req.Type, D: data}})
}

// SendErrorResponse answers the client message req with error-response.
func (p *Processor) SendErrorResponse(req ClientMessage, text string) {
	p.sendErrorResponse(req.ID, text)
}

func (p *Processor) sendErrorResponse(id, text string) {
	p.Send(wire.Message{Type: wire.TypeErrorResponse, ID: id, Data: wire.ErrorResponse{Error: text}})
}

// SendError sends error {error: text, fatal: false}. (A fatal error makes
// the client disconnect; push a permanent frames.Error for that.)
func (p *Processor) SendError(text string) {
	p.Send(wire.Message{Type: wire.TypeError, Data: wire.Error{Error: text}})
}

// sendErrorFrame reports an error frame passing through, fatal when the
// error is permanent. The client gets a short generic text and an error
// id; the error itself, which may carry an upstream body, an address or a
// key fragment, goes only to the server log, under the same id.
func (p *Processor) sendErrorFrame(e *frames.Error) {
	id := errorid.New()
	p.logger().Warn("error reported to the client", zap.String("error_id", id), zap.String("processor", e.Processor),
		zap.Stringer("category", e.Category), zap.Error(e.Err))
	p.Send(wire.Message{Type: wire.TypeError, Data: wire.Error{Error: ClientErrorText(e, id), Fatal: e.Permanent()}})
}

// ClientErrorText is the text a client is told for e: what failed, in
// words a user understands (e.Subject), whether it may come back, and the
// id under which the server logged the details. It never includes e's own
// text.
func ClientErrorText(e *frames.Error, id string) string {
	what := e.Subject
	if what == "" {
		what = "The bot"
	}
	switch e.Category {
	case frames.ErrorTransient:
		return what + " is unavailable for the moment (error id " + id + ")"
	case frames.ErrorPermanent:
		return what + " is unavailable (error id " + id + ")"
	}
	return what + " ran into a problem (error id " + id + ")"
}

// SetBotReady sends bot-ready: the id of the client's client-ready ("" if
// none has arrived), the version rule of §2.3, and about (nil: the
// Options' About, or framewire's default).
func (p *Processor) SetBotReady(about wire.Payload) {
	if !wire.Present(about) {
		about = p.opts.About
	}
	if !wire.Present(about) {
		about = defaultAbout
	}
	p.mu.Lock()
	p.botReady = true
	id := p.readyID
	p.mu.Unlock()
	p.Send(wire.Message{Type: wire.TypeBotReady, ID: id, Data: wire.BotReady{
		Version: p.ClientVersion().BotReadyVersion(),
		About:   about,
	}})
}

var defaultAbout = wire.RawJSON(`{"library":"framewire","library_version":"` + LibraryVersion + `"}`)

// InterruptBot interrupts the bot: it pushes an interruption both
// upstream and downstream (a broadcast pair), as Pipecat's interrupt_bot.
func (p *Processor) InterruptBot() {
	pipeline.Broadcast(p.pusher(), func() *frames.Interruption { return &frames.Interruption{} })
}

// work is the message worker: it handles queued client messages in order
// until the node stops.
func (p *Processor) work(ctx context.Context, out pipeline.Pusher) error {
	for {
		f, _, ok := p.inbox.Pop()
		if !ok {
			select {
			case <-ctx.Done():
				return nil
			case <-p.inbox.Ready():
				continue
			}
		}
		if m, ok := f.(*queuedMessage); ok {
			p.queuedBytes.Add(-int64(len(m.msg)))
			if waited := time.Since(m.at); waited > p.maxQueueDelay() {
				p.expire(m.msg, waited)
			} else {
				p.handleRaw(ctx, out, m.msg)
			}
		}
		if p.pending.Add(-1) <= 0 {
			select {
			case p.drainedCh() <- struct{}{}:
			default:
			}
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// handleRaw decodes and dispatches one client message, answering errors
// as §5.1 prescribes.
func (p *Processor) handleRaw(ctx context.Context, out pipeline.Pusher, raw []byte) {
	log := p.messageLogger()
	m, err := wire.Decode(raw)
	if err != nil {
		var (
			envErr  *wire.EnvelopeError
			dataErr *wire.DataError
		)
		switch {
		case errors.Is(err, wire.ErrInvalidJSON):
			if bytes.HasPrefix(raw, []byte("ping")) { // a transport keep-alive that got through
				log.Debug("dropping keep-alive", zap.Int("bytes", len(raw)))
			} else {
				log.Warn("dropping transport message that is not JSON", zap.Error(err), zap.Int("bytes", len(raw)))
			}
		case errors.Is(err, wire.ErrNotRTVI):
			log.Warn("ignoring transport message that is not RTVI", zap.Int("bytes", len(raw)))
		case errors.As(err, &envErr):
			log.Warn("invalid RTVI transport message", zap.Error(err))
			p.SendError(envErr.Error())
		case errors.As(err, &dataErr):
			switch m.Type {
			case wire.TypeRawAudio, wire.TypeRawAudioBatch:
				// Python only logs audio problems; a rate or channel count
				// out of bounds is answered, so the client learns the bound.
				log.Error("invalid audio message", zap.String("id", m.ID), zap.Error(err))
				if errors.Is(err, wire.ErrAudioFormat) {
					p.sendErrorResponse(m.ID, dataErr.Error())
				}
			default:
				log.Warn("invalid RTVI message", zap.String("type", m.Type), zap.String("id", m.ID), zap.Error(err))
				p.sendErrorResponse(m.ID, dataErr.Error())
			}
		default:
			log.Warn("undecodable RTVI message", zap.Error(err))
		}
		return
	}
	defer func() {
		if r := recover(); r != nil {
			id := errorid.New()
			p.logger().Error("panic while handling RTVI message", zap.String("error_id", id), zap.String("message", m.String()),
				zap.Any("panic", r), zap.Stack("stack"))
			p.sendErrorResponse(m.ID, "Exception processing message (error id "+id+")")
		}
	}()
	p.dispatch(ctx, out, m, len(raw))
}

// dispatch handles m, a message of size bytes.
func (p *Processor) dispatch(ctx context.Context, out pipeline.Pusher, m wire.Message, size int) {
	switch d := m.Data.(type) {
	case *wire.ClientReady:
		p.handleClientReady(ctx, out, m.ID, d)
		return
	case nil:
		switch m.Type {
		case wire.TypeClientReady:
			p.handleClientReady(ctx, out, m.ID, nil)
			return
		case wire.TypeDisconnectBot:
			out.Push(&frames.EndTask{Reason: "client sent disconnect-bot"}, frames.Upstream)
			return
		}
	case *wire.Empty:
		if m.Type == wire.TypeDisconnectBot {
			out.Push(&frames.EndTask{Reason: "client sent disconnect-bot"}, frames.Upstream)
			return
		}
	case *wire.ClientMessage:
		cm := ClientMessage{ID: m.ID, Type: d.T, Data: d.D}
		out.Push(&ClientMessageFrame{ClientMessage: cm}, frames.Downstream)
		for _, fn := range handlersCopy(&p.mu, &p.onMessage) {
			fn(ctx, cm)
		}
		return
	case *wire.SendText:
		p.handleSendText(ctx, out, d)
		return
	case *wire.FunctionCallResult:
		if !p.takeClientCall(d.ToolCallID) {
			p.messageLogger().Info("dropping llm-function-call-result: no call with this id awaits the client "+
				"(it settled, was answered already, or is not a client function)",
				zap.String("id", m.ID), zap.String("function", d.FunctionName), zap.String("tool_call_id", d.ToolCallID))
			return
		}
		out.Push(functionCallResult(d), frames.Downstream)
		return
	case *wire.DTMF:
		for _, k := range d.Keys() {
			out.Push(&frames.InputDTMF{Button: k}, frames.Downstream)
		}
		return
	case *wire.RawAudio:
		p.pushAudio(out, []string{d.Base64Audio}, d.SampleRate, d.NumChannels)
		return
	case *wire.RawAudioBatch:
		p.pushAudio(out, d.Base64AudioBatch, d.SampleRate, d.NumChannels)
		return
	case *wire.UIEvent:
		p.pushUI(ctx, out, &UIEventFrame{MsgID: m.ID, Event: d.Event, Payload: d.Payload})
		return
	case *wire.UISnapshot:
		p.pushUI(ctx, out, &UISnapshotFrame{MsgID: m.ID, Tree: d.Tree, Bytes: size})
		return
	case *wire.UICancel:
		p.pushUI(ctx, out, &UICancelTaskFrame{MsgID: m.ID, TaskID: d.TaskID, Reason: d.Reason, Vocabulary: d.Vocabulary})
		return
	}
	// Unknown types, and append-to-context (removed in pipecat 1.0).
	p.sendErrorResponse(m.ID, "Unsupported type "+m.Type)
}

func handlersCopy[T any](mu *sync.Mutex, list *[]T) []T {
	mu.Lock()
	defer mu.Unlock()
	return append([]T(nil), *list...)
}

func (p *Processor) pushUI(ctx context.Context, out pipeline.Pusher, f UIMessage) {
	out.Push(f, frames.Downstream)
	for _, fn := range handlersCopy(&p.mu, &p.onUI) {
		fn(ctx, f)
	}
}

// handleClientReady runs the handshake of §2: version check (error-response
// first), ClientReadyFrame, OnClientReady, then bot-ready.
func (p *Processor) handleClientReady(ctx context.Context, out pipeline.Pusher, id string, d *wire.ClientReady) {
	log := p.messageLogger()
	ready := &ClientReadyFrame{MsgID: id, About: wire.AboutClient{Library: "unknown"}}
	if d != nil {
		ready.Version = d.Version
		switch {
		case d.About != nil:
			ready.About = *d.About
		case d.AboutError() != nil:
			log.Warn("invalid about in client-ready; ignoring it", zap.Error(d.AboutError()))
		}
	}
	ready.Parsed, ready.VersionError = wire.CheckClientVersion(ready.Version)
	log.Debug("client-ready", zap.String("version", ready.Version), zap.String("library", ready.About.Library),
		zap.String("library_version", ready.About.LibraryVersion))
	if ready.VersionError != "" {
		log.Warn("client version check failed", zap.String("error", ready.VersionError))
		p.sendErrorResponse(id, ready.VersionError)
	}
	v := ready.Parsed
	p.version.Store(&v)
	out.Push(ready, frames.Downstream)
	p.mu.Lock()
	p.readyID = id
	p.clientReady = true
	p.mu.Unlock()
	// bot-ready goes out before the handlers run, so whatever they send (a
	// greeting) reaches the client after it.
	if !p.opts.ManualBotReady {
		p.SetBotReady(nil)
	}
	for _, fn := range handlersCopy(&p.mu, &p.onReady) {
		fn(ctx, ready)
	}
}

// handleSendText maps send-text onto core frames (§3.1): with
// run_immediately, interrupt the bot and wait for the pipeline to drain;
// toggle skip-TTS around the append when audio_response asks for it; then
// append the user message (and run the LLM with run_immediately).
func (p *Processor) handleSendText(ctx context.Context, out pipeline.Pusher, d *wire.SendText) {
	var opts wire.SendTextOptions
	if d.Options != nil {
		opts = *d.Options
	}
	run := opts.RunImmediately.Or(true)
	audio := opts.AudioResponse.Or(true)
	if run {
		p.InterruptBot()
		p.flushPipeline(ctx, out)
	}
	cur := p.skipTTS.Load()
	want := !audio
	toggle := cur != want
	if toggle {
		out.Push(&frames.LLMConfigureOutput{SkipTTS: want}, frames.Downstream)
	}
	out.Push(&frames.LLMMessagesAppend{
		Messages: []frames.LLMMessage{{Role: "user", Content: d.Content}},
		RunLLM:   run,
	}, frames.Downstream)
	if toggle {
		out.Push(&frames.LLMConfigureOutput{SkipTTS: cur}, frames.Downstream)
	}
}

// flushPipeline sends a flush probe downstream and waits until it comes
// back up through this processor (everything ahead of it, the
// interruption included, has then been handled), the timeout expires, or
// ctx ends.
func (p *Processor) flushPipeline(ctx context.Context, out pipeline.Pusher) {
	token := frames.NextID()
	returned := make(chan struct{})
	p.mu.Lock()
	p.flushToken, p.flushReturned = token, returned
	p.mu.Unlock()
	out.Push(&frames.Flush{Token: token}, frames.Downstream)
	t := time.NewTimer(p.flushTimeout())
	defer t.Stop()
	select {
	case <-returned:
	case <-t.C:
		p.logger().Warn("pipeline flush timed out; appending the text anyway", zap.Duration("timeout", p.flushTimeout()))
	case <-ctx.Done():
	}
	p.mu.Lock()
	if p.flushToken == token {
		p.flushToken, p.flushReturned = 0, nil
	}
	p.mu.Unlock()
}

// flushReturnedHere reports whether token is the probe flushPipeline is
// waiting for, and wakes it.
func (p *Processor) flushReturnedHere(token uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if token == 0 || token != p.flushToken || p.flushReturned == nil {
		return false
	}
	close(p.flushReturned)
	p.flushToken, p.flushReturned = 0, nil
	return true
}

// awaitClient records that the client has been asked to run the call id.
// It runs on the observer's goroutine; a nil p does nothing.
func (p *Processor) awaitClient(id string) {
	if p == nil || id == "" {
		return
	}
	p.callMu.Lock()
	defer p.callMu.Unlock()
	if p.clientCalls == nil {
		p.clientCalls = map[string]struct{}{}
	}
	if _, ok := p.clientCalls[id]; ok {
		return
	}
	for len(p.callOrder) >= maxClientCalls {
		delete(p.clientCalls, p.callOrder[0])
		p.callOrder = append(p.callOrder[:0], p.callOrder[1:]...)
	}
	p.clientCalls[id] = struct{}{}
	p.callOrder = append(p.callOrder, id)
}

// callSettled forgets the call id: it settled, so the client may no
// longer answer it. A nil p does nothing.
func (p *Processor) callSettled(id string) {
	if p == nil {
		return
	}
	p.callMu.Lock()
	defer p.callMu.Unlock()
	p.forgetCallLocked(id)
}

// takeClientCall reports whether the client may answer the call id, and
// if so forgets it: the first answer is the one that counts.
func (p *Processor) takeClientCall(id string) bool {
	p.callMu.Lock()
	defer p.callMu.Unlock()
	return p.forgetCallLocked(id)
}

func (p *Processor) forgetCallLocked(id string) bool {
	if _, ok := p.clientCalls[id]; !ok {
		return false
	}
	delete(p.clientCalls, id)
	for i, v := range p.callOrder {
		if v == id {
			p.callOrder = append(p.callOrder[:i], p.callOrder[i+1:]...)
			break
		}
	}
	return true
}

// functionCallResult builds the core frame for a client function result:
// an object result stays raw JSON, a string result becomes a Go string.
func functionCallResult(d *wire.FunctionCallResult) *frames.FunctionCallResult {
	var result any = json.RawMessage(d.Result)
	var s string
	if len(d.Result) > 0 && d.Result[0] == '"' && json.Unmarshal(d.Result, &s) == nil {
		result = s
	}
	return &frames.FunctionCallResult{
		FunctionCall: frames.FunctionCall{
			Name:       d.FunctionName,
			ToolCallID: d.ToolCallID,
			Arguments:  json.RawMessage(d.Arguments),
		},
		Result:     result,
		Properties: frames.FunctionCallResultProperties{},
	}
}

// pushAudio decodes base64 PCM16 buffers into input audio frames. Bad
// buffers are logged and skipped, as in Python.
func (p *Processor) pushAudio(out pipeline.Pusher, buffers []string, rate, channels int) {
	for i, b64 := range buffers {
		if b64 == "" {
			continue
		}
		pcm, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			pcm, err = base64.RawStdEncoding.DecodeString(b64)
		}
		if err != nil {
			p.messageLogger().Error("invalid base64 audio", zap.Int("index", i), zap.Error(err))
			continue
		}
		out.Push(&frames.InputAudioRaw{Audio: frames.Audio{PCM: pcm, SampleRate: rate, Channels: channels}}, frames.Downstream)
	}
}
