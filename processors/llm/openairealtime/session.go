package openairealtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/stt"
	"github.com/framewire/framewire/processors/tts"
)

// maxMessageBytes bounds one server event.
const maxMessageBytes = 8 << 20

// stableSession is how long a session must have worked for its loss to
// start the reconnection attempts from zero.
const stableSession = 10 * time.Second

// maxRetryAfter bounds the wait a refused handshake's Retry-After asks for.
const maxRetryAfter = 30 * time.Second

// retryAfter reads a Retry-After header given in seconds; 0 when absent
// or in another form.
func retryAfter(v string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0
	}
	return time.Duration(min(n, 3600)) * time.Second
}

// maxCallsInFlight bounds the function calls waiting to settle.
const maxCallsInFlight = 256

// maxSystemItems bounds the system messages remembered as sent.
const maxSystemItems = 64

// state is the session goroutine's: the connection, the protocol state
// and the audio converters. Only that goroutine touches it.
type state struct {
	p       *realtime
	outRate int
	metrics bool
	usage   bool

	ws        *websocket.Conn
	ctx       context.Context // the connection's
	wdog      *time.Timer     // closes ws when a write hangs
	wdogFired atomic.Bool

	inRS     map[int]*dsp.Resampler // by input rate, at most maxInputResamplers
	outRS    *dsp.Resampler
	badAudio uint64 // input frames dropped for their format

	ev        event
	pcm       []byte // decoded audio delta
	scratch   []byte // unescaped base64
	resampled []byte // resampled input or output audio
	wbuf      []byte // an encoded client event
	cmdBuf    []command
	text      []byte // decoded transcript delta
	mono      []byte // the first channel of multichannel input

	audioFrames frames.Block[frames.TTSAudioRaw]
	audioBytes  frames.ByteBlock

	// The response being streamed, and the one an interruption cut off
	// (its late deltas are dropped).
	resp     *response
	active   string // id of the response between response.created and response.done
	dropResp string
	awaiting bool      // the server owes an answer: response.created after a response.create, committed after a commit
	dueAt    time.Time // when it began to owe it, for Timeouts.FirstByte
	askedAt  time.Time // when a response was asked for, for TTFB

	// The server runs one response at a time and refuses a response.create
	// while one is active (the error conversation_already_has_active_response):
	// creating is the event id of the response.create sent and not yet
	// answered, waitDone says that a response the processor cut or a
	// refusal named has not ended yet, and queued holds the responses asked
	// for meanwhile (nil asks for a plain response), sent one by one as each
	// response.done arrives.
	creating  string
	waitDone  bool
	queued    []*responseParams
	sent      [4]sentCreate // the latest response.create sent, newest at sentNext-1
	sentNext  int
	createSeq int

	greeted    bool      // the server has sent an event on this connection
	openedAt   time.Time // when the connection opened, for its first event
	quietSince time.Time // the server's last event, or when a wait for its next began

	// The model's audio item playing, for truncation.
	item        string
	itemSamples int64 // at the API's rate
	itemFirst   time.Time
	botStarted  time.Time

	userSpeaking bool
	groups       map[string]*group // function calls in flight, by call id

	toolsSent  string   // the tools update matching what the session has
	sentSystem []string // system messages sent, oldest first
	devItems   []string // the previous user turn's per-turn items (the <ui_state> block)
	seq        int
	interimID  string
	interim    []byte
}

// sentCreate is a response.create sent: what it asked for, by event id.
type sentCreate struct {
	id     string
	params *responseParams
}

// maxQueuedResponses bounds the responses waiting for the active one to
// end; past it the oldest is dropped.
const maxQueuedResponses = 32

// response is one model response with output the pipeline sees.
type response struct {
	id      string
	item    string
	started bool // LLMFullResponseStart and TTSStarted pushed
	// sentences holds the transcript (or text) not yet released as whole
	// sentences; textOnly says the response is text (output_text), whose
	// sentences go out as unspoken frames.AggregatedText.
	sentences tts.SentenceAggregator
	textOnly  bool
}

// group is the function calls of one model response: the follow-up
// response is asked for once, when the last of them settles.
type group struct {
	pending map[string]bool
	wantRun bool
}

// run is the session: it connects, and reconnects after a lost
// connection up to Options.MaxReconnects times. It returns when ctx ends
// (the task's), or after a failure it cannot recover from, which it has
// reported.
func (st *state) run(ctx context.Context) error {
	o := st.p.s.opts
	if st.p.s.err != nil {
		st.p.out.PushError(fmt.Errorf("%w (%w)", st.p.s.err, frames.ErrPermanent))
		return nil
	}
	for attempt := 0; ; attempt++ {
		st.reset()
		began := time.Now()
		connected, err := st.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		st.endResponse(false)
		if err == nil {
			return nil
		}
		st.p.out.PushError(err)
		if frames.CategoryOf(err) == frames.ErrorPermanent {
			return nil
		}
		if connected {
			st.p.log.Warn("realtime: reconnecting; the new server session starts with an empty conversation")
			if time.Since(began) >= stableSession {
				attempt = 0 // a session that worked for a while: a fresh start
			}
		}
		if o.MaxReconnects < 0 || attempt >= o.MaxReconnects {
			st.p.out.PushError(fmt.Errorf("openairealtime: no session after %d attempts (%w)", attempt+1, frames.ErrPermanent))
			return nil
		}
		backoff := time.Duration(1<<min(attempt, 5)) * 250 * time.Millisecond
		var apiErr *Error
		if errors.As(err, &apiErr) && apiErr.RetryAfter > backoff {
			backoff = min(apiErr.RetryAfter, maxRetryAfter)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// reset forgets what the previous server session knew: a new one starts
// with an empty conversation.
func (st *state) reset() {
	st.active, st.dropResp, st.awaiting, st.askedAt = "", "", false, time.Time{}
	st.creating, st.waitDone, st.greeted = "", false, false
	clear(st.queued)
	st.queued = st.queued[:0]
	st.item, st.itemSamples = "", 0
	st.userSpeaking = false
	st.groups = map[string]*group{}
	st.sentSystem, st.devItems = nil, nil
	st.interimID, st.interim = "", st.interim[:0]
	for _, rs := range st.inRS {
		rs.Reset()
	}
	if st.outRS != nil {
		st.outRS.Reset()
	}
}

// dial opens the WebSocket.
func (st *state) dial(ctx context.Context) (*websocket.Conn, error) {
	o := st.p.s.opts
	h := http.Header{}
	if o.APIKey != "" {
		h.Set("Authorization", "Bearer "+o.APIKey)
	}
	dctx, cancel := ctx, context.CancelFunc(func() {})
	if d := o.Timeouts.Connect; d > 0 {
		dctx, cancel = context.WithTimeout(ctx, d)
	}
	defer cancel()
	ws, resp, err := websocket.Dial(dctx, st.p.s.url, &websocket.DialOptions{HTTPClient: o.HTTPClient, HTTPHeader: h})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if resp == nil && dctx.Err() != nil {
			return nil, &llmhttp.TimeoutError{Provider: providerName, Phase: llmhttp.PhaseConnect, After: o.Timeouts.Connect}
		}
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			e := &Error{Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
			if resp.Body != nil {
				b, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
				resp.Body.Close()
				e.Body = string(b)
				var body struct {
					Error *apiError `json:"error"`
				}
				if json.Unmarshal(b, &body) == nil && body.Error != nil {
					e.Type, e.Code, e.Message = body.Error.Type, body.Error.Code, body.Error.Message
				}
			}
			return nil, e
		}
		return nil, &connError{err: err}
	}
	ws.SetReadLimit(maxMessageBytes)
	return ws, nil
}

// session runs one connection until it fails or ctx ends; connected says
// whether it got as far as configuring the session.
func (st *state) session(ctx context.Context) (connected bool, err error) {
	ws, err := st.dial(ctx)
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	st.wdogFired.Store(false)
	st.wdog = time.AfterFunc(time.Hour, func() {
		st.wdogFired.Store(true)
		ws.CloseNow()
	})
	st.wdog.Stop()
	defer func() {
		st.wdog.Stop()
		cancel()
		ws.CloseNow()
		wg.Wait()
		st.ws = nil
	}()
	st.ws, st.ctx = ws, ctx
	// One channel for messages and the read error, so the error cannot
	// overtake the last messages before it. Message buffers come back on
	// free once handled, so audio deltas do not allocate.
	msgs := make(chan readResult, 64)
	free := make(chan []byte, cap(msgs)+2)
	fail := make(chan error, 1)
	wg.Add(2)
	go func() { // the reader; the session waits for it
		defer wg.Done()
		for {
			var buf []byte
			select {
			case buf = <-free:
			default:
			}
			b, err := readMessage(ctx, ws, buf[:0])
			if err == errSkip {
				continue
			}
			select {
			case msgs <- readResult{b, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { // the pinger; the session waits for it
		defer wg.Done()
		every := st.p.s.opts.PingInterval
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				pctx, pcancel := context.WithTimeout(ctx, every)
				err := ws.Ping(pctx)
				pcancel()
				if err != nil {
					if ctx.Err() == nil {
						fail <- fmt.Errorf("ping: %w", err)
					}
					return
				}
			}
		}
	}()

	if err := st.configure(); err != nil {
		return false, err
	}
	st.openedAt = time.Now()
	st.quietSince = st.openedAt
	var watch <-chan time.Time
	if every := watchInterval(st.p.s.opts.Timeouts); every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		watch = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return true, nil
		case err := <-fail:
			if ctx.Err() != nil {
				return true, nil
			}
			return true, &connError{err: err}
		case m := <-msgs:
			if m.err != nil {
				if ctx.Err() != nil {
					return true, nil
				}
				return true, &connError{err: m.err}
			}
			st.quietSince, st.greeted = time.Now(), true
			err := st.handle(m.msg)
			select {
			case free <- m.msg:
			default:
			}
			if err != nil {
				return true, err
			}
		case a := <-st.p.audio:
			if err := st.sendAudio(a); err != nil {
				return true, err
			}
		case <-st.p.wake:
			// Audio queued before the commands goes first: a commit
			// must follow the audio of its turn.
			if err := st.drainAudio(); err != nil {
				return true, err
			}
			st.cmdBuf = st.p.takeCommands(st.cmdBuf)
			for i := range st.cmdBuf {
				if err := st.apply(&st.cmdBuf[i]); err != nil {
					return true, err
				}
				st.cmdBuf[i] = command{}
			}
		case now := <-watch:
			if err := st.checkBounds(now); err != nil {
				return true, err
			}
		}
	}
}

// providerName names the client in timeout errors.
const providerName = "openairealtime"

// watchInterval is how often the session checks its first-byte and idle
// bounds: a quarter of the shorter one; 0 when both are off.
func watchInterval(t Timeouts) time.Duration {
	d := time.Duration(0)
	for _, b := range []time.Duration{t.FirstByte, t.Idle} {
		if b > 0 && (d == 0 || b < d) {
			d = b
		}
	}
	if d == 0 {
		return 0
	}
	return max(d/4, 5*time.Millisecond)
}

// checkBounds applies Options.Timeouts at now. A connection whose server
// has said nothing within FirstByte ends (the error is returned); a
// response that does not start within FirstByte, or stalls for Idle, is
// given up and the session goes on.
func (st *state) checkBounds(now time.Time) error {
	t := st.p.s.opts.Timeouts
	if !st.greeted {
		if t.FirstByte > 0 && now.Sub(st.openedAt) > t.FirstByte {
			return &llmhttp.TimeoutError{Provider: providerName, Phase: llmhttp.PhaseFirstByte, After: t.FirstByte}
		}
		return nil
	}
	if st.awaiting && t.FirstByte > 0 && now.Sub(st.dueAt) > t.FirstByte {
		st.p.out.PushError(&llmhttp.TimeoutError{Provider: providerName, Phase: llmhttp.PhaseFirstByte, After: t.FirstByte})
		st.awaiting, st.creating = false, ""
		return st.pump()
	}
	if t.Idle <= 0 || now.Sub(st.quietSince) <= t.Idle {
		return nil
	}
	switch {
	case st.active != "":
		st.p.out.PushError(&llmhttp.TimeoutError{Provider: providerName, Phase: llmhttp.PhaseIdle, After: t.Idle})
		st.dropResp, st.active, st.waitDone, st.quietSince = st.active, "", true, now
		st.endResponse(false)
		return st.write(msgResponseCancel)
	case st.waitDone:
		// The response cut or named by a refusal never ended: stop
		// waiting for it.
		st.p.log.Warn("realtime: a response the server was running never ended; going on without its response.done",
			zap.Duration("waited", now.Sub(st.quietSince)))
		st.waitDone = false
		return st.pump()
	}
	return nil
}

// errSkip marks a binary message, which the API never sends.
var errSkip = errors.New("binary message skipped")

// readMessage reads the next text message into buf (grown as needed).
func readMessage(ctx context.Context, ws *websocket.Conn, buf []byte) ([]byte, error) {
	typ, r, err := ws.Reader(ctx)
	if err != nil {
		return nil, err
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if typ != websocket.MessageText {
		return nil, errSkip
	}
	return buf, nil
}

// readResult is one message from the reader, or the error that ended it.
type readResult struct {
	msg []byte
	err error
}

// drainAudio sends the user audio that waits.
func (st *state) drainAudio() error {
	for {
		select {
		case a := <-st.p.audio:
			if err := st.sendAudio(a); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// write sends one client event. The connection's watchdog closes the
// connection when the write takes longer than Options.WriteTimeout (a
// timer reset per write: no allocation per audio frame).
func (st *state) write(b []byte) error {
	st.wdog.Reset(st.p.s.opts.WriteTimeout)
	err := st.ws.Write(st.ctx, websocket.MessageText, b)
	st.wdog.Stop()
	if err != nil {
		if st.wdogFired.Load() {
			err = fmt.Errorf("a write took longer than %v: %w", st.p.s.opts.WriteTimeout, err)
		}
		return &connError{err: err}
	}
	return nil
}

// writeJSON encodes v and sends it.
func (st *state) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("openairealtime: encoding a client event: %w", err)
	}
	return st.write(b)
}

// configure sends session.update.
func (st *state) configure() error {
	decls := st.p.s.tools()
	if b, err := json.Marshal(toolsUpdate(decls)); err == nil {
		st.toolsSent = string(b)
	}
	return st.writeJSON(sessionConfig(st.p.s.opts, decls))
}

// The user audio the session takes: the rates and channel counts real
// audio has. Other frames are dropped (a client's raw-audio may claim any
// rate), so no filter is designed for a rate no one records at.
const (
	minInputRate       = 8000
	maxInputRate       = 48000
	maxInputChannels   = 2
	maxInputResamplers = 4 // input rates kept resamplers for at once
)

// sendAudio appends one frame of user audio to the server's input buffer,
// as 24 kHz mono.
func (st *state) sendAudio(a *frames.InputAudioRaw) error {
	pcm := st.inputPCM(a)
	if len(pcm) == 0 {
		return nil
	}
	st.wbuf = appendAudioEvent(st.wbuf[:0], pcm)
	return st.write(st.wbuf)
}

// inputPCM returns a's audio as 24 kHz mono PCM16, or nothing for a frame
// outside the rates and channel counts the session takes. Its first
// channel goes through a resampler kept per input rate, so a stream that
// switches rates builds each resampler once and a frame costs no
// allocation once the buffers have grown.
func (st *state) inputPCM(a *frames.InputAudioRaw) []byte {
	if len(a.PCM) == 0 {
		return nil
	}
	if a.SampleRate < minInputRate || a.SampleRate > maxInputRate || a.Channels < 1 || a.Channels > maxInputChannels {
		if st.badAudio++; st.badAudio == 1 || st.badAudio%500 == 0 {
			st.p.log.Warn("realtime: dropping user audio in a format the session does not take",
				zap.Int("rate", a.SampleRate), zap.Int("channels", a.Channels), zap.Uint64("dropped", st.badAudio),
				zap.Int("min_rate", minInputRate), zap.Int("max_rate", maxInputRate), zap.Int("max_channels", maxInputChannels))
		}
		return nil
	}
	pcm := a.PCM
	if a.Channels > 1 {
		// Keep the first channel.
		n := a.NumFrames()
		st.mono = st.mono[:0]
		for i := 0; i < n; i++ {
			o := i * 2 * a.Channels
			st.mono = append(st.mono, pcm[o], pcm[o+1])
		}
		pcm = st.mono
	}
	if a.SampleRate == apiRate {
		return pcm
	}
	rs := st.inRS[a.SampleRate]
	if rs == nil {
		var err error
		rs, err = dsp.NewResampler(a.SampleRate, apiRate, 1, dsp.ResamplerOptions{})
		if err != nil {
			st.p.log.Warn("realtime: user audio at a rate the resampler refuses", zap.Int("rate", a.SampleRate), zap.Error(err))
			return nil
		}
		if st.inRS == nil || len(st.inRS) >= maxInputResamplers {
			st.inRS = make(map[int]*dsp.Resampler, maxInputResamplers)
		}
		st.inRS[a.SampleRate] = rs
	}
	st.resampled = rs.Resample(st.resampled[:0], pcm)
	return st.resampled
}

// apply carries out one command from the node.
func (st *state) apply(c *command) error {
	switch c.kind {
	case cmdUserStarted:
		st.userSpeaking = true
		return st.interrupt(false)
	case cmdUserStopped:
		st.userSpeaking = false
		st.due()
		return st.write(msgCommit)
	case cmdInterrupted:
		return st.interrupt(false)
	case cmdBotStarted:
		st.botStarted = c.at
	case cmdBotStopped:
		st.botStarted = time.Time{}
	case cmdResult:
		r := c.result
		if r.Properties.Intermediate {
			return nil
		}
		content, empty := resultContent(r.Result)
		run := !empty
		if r.Properties.RunLLM != nil {
			run = *r.Properties.RunLLM
		}
		return st.settled(r.ToolCallID, content, run)
	case cmdCancelled:
		return st.settled(c.cancel.ToolCallID, llm.ToolCancelled, false)
	case cmdSpeak:
		return st.speak(c.text)
	case cmdAppend:
		return st.appendMessages(c.msgs, c.run)
	case cmdRun:
		return st.createResponse(nil)
	case cmdTools:
		b, err := json.Marshal(toolsUpdate(st.p.s.tools()))
		if err != nil {
			return fmt.Errorf("openairealtime: encoding tools: %w", err)
		}
		if string(b) == st.toolsSent {
			return nil // what the session has already
		}
		st.toolsSent = string(b)
		return st.write(b)
	}
	return nil
}

// handle reacts to one server event.
func (st *state) handle(msg []byte) error {
	ev := &st.ev
	if err := parseEvent(msg, ev); err != nil {
		st.p.log.Warn("realtime: skipping a malformed server event", zap.Error(err), zap.Int("bytes", len(msg)))
		return nil
	}
	switch ev.kind {
	case evSpeechStarted:
		st.userSpeaking = true
		pipeline.Broadcast(&st.p.out, func() *frames.UserStartedSpeaking { return &frames.UserStartedSpeaking{} })
		return st.interrupt(true)
	case evSpeechStopped:
		st.userSpeaking = false
		pipeline.Broadcast(&st.p.out, func() *frames.UserStoppedSpeaking { return &frames.UserStoppedSpeaking{} })
	case evCommitted:
		st.awaiting = false
		if st.p.s.opts.BeforeResponse != nil || st.p.s.opts.TurnDetection == FrameworkTurns {
			return st.userTurn(str(ev.prevItemID))
		}
		// Server VAD starts the response itself.
		st.due()
		st.askedAt = st.dueAt
	case evResponseCreated:
		var r struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(ev.response, &r)
		// The answer to the response.create in flight, or a response the
		// server started itself (server VAD) while it was; if so, the
		// server refuses the create next and it waits its turn.
		st.active, st.awaiting, st.creating = r.ID, false, ""
	case evAudioDelta:
		return st.audioDelta(ev)
	case evTranscriptDelta:
		if st.dropped(ev) {
			return nil
		}
		r := st.open(ev)
		st.text = appendStr(st.text[:0], ev.delta)
		if len(st.text) == 0 {
			return nil
		}
		t := string(st.text)
		st.p.out.Push(&frames.LLMText{Text: t}, frames.Downstream)
		r.sentences.Add(t)
		st.releaseSentences(r, false)
	case evTextDelta:
		if st.dropped(ev) {
			return nil
		}
		r := st.open(ev)
		if t := str(ev.delta); t != "" {
			r.textOnly = true
			st.p.out.Push(&frames.LLMText{Text: t}, frames.Downstream)
			r.sentences.Add(t)
			st.releaseSentences(r, false)
		}
	case evInputTranscriptDelta:
		id := str(ev.itemID)
		if id != st.interimID {
			st.interimID, st.interim = id, st.interim[:0]
		}
		st.interim = appendStr(st.interim, ev.delta)
		if t := strings.TrimSpace(string(st.interim)); t != "" {
			st.p.out.Push(&frames.InterimTranscription{Text: t, Timestamp: stt.Timestamp(time.Now())}, frames.Downstream)
		}
	case evInputTranscriptDone:
		if str(ev.itemID) == st.interimID {
			st.interimID, st.interim = "", st.interim[:0]
		}
		if t := strings.TrimSpace(str(ev.transcript)); t != "" {
			st.p.out.Push(&frames.Transcription{Text: t, Timestamp: stt.Timestamp(time.Now()), Finalized: true}, frames.Downstream)
			st.announce(t)
		}
	case evInputTranscriptFailed:
		st.p.log.Info("realtime: the user's audio could not be transcribed", zap.ByteString("item", ev.itemID))
	case evResponseDone:
		if err := st.responseDone(ev); err != nil {
			return err
		}
		return st.pump()
	case evError:
		return st.serverError(ev)
	case evSessionCreated, evSessionUpdated, evRateLimits, evItemAdded, evArgumentsDone, evOther:
	}
	return nil
}

// dropped reports whether ev belongs to a response an interruption cut off.
func (st *state) dropped(ev *event) bool {
	return st.dropResp != "" && string(ev.responseID) == st.dropResp
}

// open returns the response ev belongs to, pushing its opening frames the
// first time it has output.
func (st *state) open(ev *event) *response {
	r := st.resp
	if r == nil || string(ev.responseID) != r.id {
		if r != nil {
			st.endResponse(true)
		}
		r = &response{id: string(ev.responseID), item: string(ev.itemID)}
		st.resp = r
	}
	if !r.started {
		r.started = true
		if st.metrics && !st.askedAt.IsZero() {
			st.p.out.Push(&frames.Metrics{Data: []frames.Metric{{Kind: frames.MetricTTFB, Processor: st.p.name, Model: st.p.s.opts.Model, Value: time.Since(st.askedAt)}}}, frames.Downstream)
			st.askedAt = time.Time{}
		}
		st.p.out.Push(&frames.LLMFullResponseStart{}, frames.Downstream)
		st.p.out.Push(&frames.TTSStarted{ContextID: r.item}, frames.Downstream)
	}
	return r
}

// releaseSentences pushes the whole sentences of r's transcript (all of
// it when final) as a TTS service without word timestamps does: a
// TTSText per sentence, in line with the audio, which the output
// transport releases as it plays and the RTVI observer sends as
// bot-output (spoken) and bot-tts-text. A text response's sentences go
// out as unspoken AggregatedText (bot-output, spoken false).
func (st *state) releaseSentences(r *response, final bool) {
	for {
		s, ok := r.sentences.Next()
		if !ok {
			break
		}
		st.pushSentence(r, s)
	}
	if final {
		if s := r.sentences.Flush(); s != "" {
			st.pushSentence(r, s)
		}
	}
}

func (st *state) pushSentence(r *response, text string) {
	if r.textOnly {
		st.p.out.Push(&frames.AggregatedText{Text: text, AggregatedBy: tts.AggregatedBySentence, ContextID: r.item}, frames.Downstream)
		return
	}
	st.p.out.Push(&frames.TTSText{Text: text, AggregatedBy: tts.AggregatedBySentence, ContextID: r.item}, frames.Downstream)
}

// endResponse pushes the closing frames of the open response, releasing
// the rest of its transcript when it was spoken to the end.
func (st *state) endResponse(complete bool) {
	r := st.resp
	st.resp = nil
	if r == nil || !r.started {
		return
	}
	if complete {
		st.releaseSentences(r, true)
	}
	st.p.out.Push(&frames.TTSStopped{ContextID: r.item}, frames.Downstream)
	st.p.out.Push(&frames.LLMFullResponseEnd{}, frames.Downstream)
}

// audioDelta turns one chunk of the model's audio into a TTSAudioRaw at
// the pipeline's output rate.
func (st *state) audioDelta(ev *event) error {
	if st.dropped(ev) {
		return nil
	}
	r := st.open(ev)
	var err error
	st.pcm, st.scratch, err = decodeAudio(st.pcm, st.scratch, ev.delta)
	if err != nil {
		st.p.log.Warn("realtime: skipping a bad audio delta", zap.Error(err))
		return nil
	}
	pcm := st.pcm[:len(st.pcm)&^1]
	if len(pcm) == 0 {
		return nil
	}
	item := r.item
	if len(ev.itemID) > 0 && string(ev.itemID) != item {
		item = string(ev.itemID)
		r.item = item
	}
	if item != st.item {
		st.item, st.itemSamples, st.itemFirst = item, 0, time.Now()
	}
	st.itemSamples += int64(len(pcm) / 2)
	if st.outRate != apiRate {
		if st.outRS == nil {
			rs, err := dsp.NewResampler(apiRate, st.outRate, 1, dsp.ResamplerOptions{})
			if err != nil {
				return fmt.Errorf("openairealtime: output rate %d: %w (%w)", st.outRate, err, frames.ErrPermanent)
			}
			st.outRS = rs
		}
		st.resampled = st.outRS.Resample(st.resampled[:0], pcm)
		pcm = st.resampled
	}
	f := st.audioFrames.New()
	f.PCM = st.audioBytes.Take(len(pcm))
	copy(f.PCM, pcm)
	f.SampleRate, f.Channels, f.ContextID = st.outRate, 1, item
	st.p.out.Push(f, frames.Downstream)
	return nil
}

// played returns how much of the current item the user has heard.
func (st *state) played() time.Duration {
	sent := time.Duration(st.itemSamples) * time.Second / apiRate
	if d, ok := st.p.s.tap.played(st.item); ok {
		return min(d, sent)
	}
	from := st.itemFirst
	if st.botStarted.After(from) {
		from = st.botStarted
	}
	return min(time.Since(from), sent)
}

// interrupt stops the bot: the model's item is truncated where the user
// stopped hearing it and its response cancelled. With broadcast it also
// sends the interruption through the pipeline (server VAD found the
// user's speech; otherwise the pipeline already knows).
func (st *state) interrupt(broadcast bool) error {
	if broadcast {
		pipeline.Broadcast(&st.p.out, func() *frames.Interruption { return &frames.Interruption{} })
	}
	if st.item != "" {
		played := st.played()
		sent := time.Duration(st.itemSamples) * time.Second / apiRate
		if played < sent || st.active != "" {
			if err := st.writeJSON(truncate{Type: "conversation.item.truncate", ItemID: st.item, AudioEndMS: played.Milliseconds()}); err != nil {
				return err
			}
		}
		st.item, st.itemSamples = "", 0
	}
	// What was asked for before the interruption is not wanted any more,
	// as a cascaded pipeline's interruption flushes what waits for the
	// LLM and the TTS.
	clear(st.queued)
	st.queued = st.queued[:0]
	if st.active != "" {
		st.dropResp = st.active
		st.active = ""
		st.waitDone, st.quietSince = true, time.Now() // until its response.done
		if err := st.write(msgResponseCancel); err != nil {
			return err
		}
	}
	st.endResponse(false)
	return nil
}

// responseDone closes a response and hands its function calls to the
// function node.
func (st *state) responseDone(ev *event) error {
	var r responseObj
	if err := json.Unmarshal(ev.response, &r); err != nil {
		st.p.log.Warn("realtime: a response.done that does not parse", zap.Error(err))
	}
	cut := r.ID != "" && r.ID == st.dropResp
	if cut {
		st.dropResp = ""
	}
	// The server runs one response at a time: whichever this was, none
	// runs now.
	st.active, st.waitDone = "", false
	if st.resp != nil && (st.resp.id == r.ID || r.ID == "") {
		if st.usage && r.Usage != nil {
			st.p.out.Push(&frames.Metrics{Data: []frames.Metric{{Kind: frames.MetricLLMUsage, Processor: st.p.name, Model: st.p.s.opts.Model, Usage: frames.LLMTokenUsage{
				PromptTokens: r.Usage.InputTokens, CompletionTokens: r.Usage.OutputTokens, TotalTokens: r.Usage.TotalTokens,
				CacheReadTokens: r.Usage.InputTokenDetails.CachedTokens,
			}}}}, frames.Downstream)
		}
		st.endResponse(!cut)
	}
	if r.Status == "failed" {
		e := &Error{Type: "response_failed"}
		if d := r.StatusDetails.Error; d != nil {
			e.Type, e.Code, e.Message = d.Type, d.Code, d.Message
		}
		if e.Type == "" {
			e.Type = "response_failed"
		}
		st.p.out.PushError(e)
		return nil
	}
	if cut || r.Status == "cancelled" {
		return nil
	}
	var calls []frames.LLMToolCall
	for _, o := range r.Output {
		if o.Type == "function_call" && o.CallID != "" {
			calls = append(calls, frames.LLMToolCall{ID: o.CallID, Name: o.Name, Arguments: o.Arguments})
		}
	}
	if len(calls) == 0 {
		return nil
	}
	if len(st.groups) >= maxCallsInFlight {
		clear(st.groups) // calls whose request an interruption flushed
	}
	g := &group{pending: map[string]bool{}}
	for _, c := range calls {
		g.pending[c.ID] = true
		st.groups[c.ID] = g
	}
	st.p.out.Push(st.p.s.putCalls(calls), frames.Downstream)
	return nil
}

// settled sends a call's output and, once its group has settled and one
// of its results asked for it, the follow-up response.
func (st *state) settled(id, output string, run bool) error {
	g := st.groups[id]
	if g == nil {
		return nil // not this session's, or settled already
	}
	delete(st.groups, id)
	delete(g.pending, id)
	if err := st.writeJSON(itemCreate{Type: "conversation.item.create", Item: item{Type: "function_call_output", CallID: id, Output: &output}}); err != nil {
		return err
	}
	g.wantRun = g.wantRun || run
	if len(g.pending) > 0 || !g.wantRun || st.userSpeaking {
		return nil
	}
	return st.createResponse(nil)
}

// createResponse asks for a response (params nil: a plain one). While the
// server runs a response, or one asked for has not started, the request
// waits in the queue: the server would refuse it (Realtime API reference,
// client event response.create: "the server will respond with a
// response.created event"; one response at a time per conversation, a
// second one answered with the error conversation_already_has_active_response).
func (st *state) createResponse(params *responseParams) error {
	if st.responding() {
		st.enqueue(params)
		return nil
	}
	return st.sendCreate(params)
}

// responding reports whether the server runs, or is about to run, a
// response.
func (st *state) responding() bool {
	return st.creating != "" || st.active != "" || st.waitDone
}

// enqueue keeps a response request for when the server's response ends.
func (st *state) enqueue(params *responseParams) {
	if n := len(st.queued); params == nil && n > 0 && st.queued[n-1] == nil {
		// A plain response answers everything the conversation holds by
		// the time it runs: one is enough.
		return
	}
	if len(st.queued) >= maxQueuedResponses {
		st.p.log.Warn("realtime: too many responses wait for the active one to end; dropping the oldest", zap.Int("max", maxQueuedResponses))
		copy(st.queued, st.queued[1:])
		st.queued = st.queued[:len(st.queued)-1]
	}
	st.queued = append(st.queued, params)
	st.p.log.Debug("realtime: a response waits for the server's active one to end",
		zap.Bool("verbatim", params != nil), zap.Int("waiting", len(st.queued)))
}

// pump sends the next queued response request once the server runs none.
func (st *state) pump() error {
	if len(st.queued) == 0 || st.responding() {
		return nil
	}
	params := st.queued[0]
	copy(st.queued, st.queued[1:])
	st.queued[len(st.queued)-1] = nil
	st.queued = st.queued[:len(st.queued)-1]
	return st.sendCreate(params)
}

// sendCreate sends one response.create, with an event id that a refusal
// names (error.event_id).
func (st *state) sendCreate(params *responseParams) error {
	st.createSeq++
	id := "fw_resp_" + strconv.Itoa(st.createSeq)
	st.sent[st.sentNext%len(st.sent)] = sentCreate{id: id, params: params}
	st.sentNext++
	st.creating = id
	st.due()
	st.askedAt = st.dueAt
	return st.writeJSON(responseCreate{Type: "response.create", EventID: id, Response: params})
}

// due notes that the server owes an answer from now (Timeouts.FirstByte).
func (st *state) due() { st.awaiting, st.dueAt = true, time.Now() }

// codeActiveResponse is the error code of a response.create refused
// because a response is active ("Conversation already has an active
// response in progress: resp_…. Wait until the response is finished
// before creating a new one.", type invalid_request_error).
const codeActiveResponse = "conversation_already_has_active_response"

// refused puts the response.create the server refused back at the head
// of the queue: it goes again when the server's response ends. The error
// names the create by its event id when the server says (error.event_id);
// otherwise it is the latest one sent.
func (st *state) refused(eventID string) {
	for i := 1; i <= len(st.sent) && i <= st.sentNext; i++ {
		c := &st.sent[(st.sentNext-i)%len(st.sent)]
		if c.id == "" || (eventID != "" && c.id != eventID) {
			continue
		}
		if st.creating == c.id {
			st.creating, st.awaiting = "", false
		}
		st.queued = slices.Insert(st.queued, 0, c.params)
		*c = sentCreate{}
		st.waitDone, st.quietSince = true, time.Now() // until the server's response.done
		st.p.log.Debug("realtime: a response was asked for while the server ran one; it waits for that one to end")
		return
	}
	st.p.log.Debug("realtime: a refused response.create that is not this session's", zap.String("event_id", eventID))
}

// speak has the model say text verbatim (a TTSSpeak: the UI agent's
// answers, greetings).
func (st *state) speak(text string) error {
	return st.createResponse(&responseParams{
		Instructions: "Say exactly the following to the user, word for word, and nothing else:\n\n" + text,
		ToolChoice:   json.RawMessage(`"none"`),
	})
}

// appendMessages adds messages to the conversation; with run it asks for
// a response, as a user turn when the last message is the user's.
func (st *state) appendMessages(msgs []frames.LLMMessage, run bool) error {
	userTurn := run && len(msgs) > 0 && msgs[len(msgs)-1].Role == llm.RoleUser
	if userTurn {
		if err := st.hookItems(""); err != nil {
			return err
		}
	}
	for _, m := range msgs {
		it, ok := messageItem(m, "")
		if !ok {
			continue
		}
		if err := st.writeJSON(itemCreate{Type: "conversation.item.create", Item: it}); err != nil {
			return err
		}
	}
	if !run {
		return nil
	}
	if userTurn {
		st.announce(msgs[len(msgs)-1].Content)
	}
	return st.createResponse(nil)
}

// announce tells the pipeline what the user's turn said, as a cascaded
// pipeline's user aggregator does: a one-message frames.LLMContext, which
// the RTVI observer reports as user-llm-text. The server keeps the real
// conversation; the function node lets the frame pass.
func (st *state) announce(text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	st.p.out.Push(&frames.LLMContext{Messages: []frames.LLMMessage{llm.UserMessage(text)}}, frames.Downstream)
}

// userTurn asks for the response to the user's committed audio, after the
// BeforeResponse items.
func (st *state) userTurn(prevItemID string) error {
	if err := st.hookItems(prevItemID); err != nil {
		return err
	}
	return st.createResponse(nil)
}

// hookItems runs Options.BeforeResponse and sends what it added: system
// messages once, the others (the UI agent's <ui_state> and <ui_event>
// blocks, developer or user messages) in place of the previous turn's,
// inserted after prevItemID (before the user's item) when known.
func (st *state) hookItems(prevItemID string) error {
	hook := st.p.s.opts.BeforeResponse
	if hook == nil {
		return nil
	}
	instr := st.p.s.opts.Instructions
	c := llm.NewContext()
	if instr != "" {
		c.Add(llm.SystemMessage(instr))
	}
	c.Add(llm.UserMessage(""))
	hook(c)
	msgs := c.Messages()
	placeholder := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser && msgs[i].Content == "" && len(msgs[i].Parts) == 0 {
			placeholder = i
			break
		}
	}
	for _, id := range st.devItems {
		if err := st.writeJSON(itemDelete{Type: "conversation.item.delete", ItemID: id}); err != nil {
			return err
		}
	}
	st.devItems = st.devItems[:0]
	prev := prevItemID
	for i, m := range msgs {
		if i == placeholder || (m.Role == llm.RoleSystem && m.Content == instr) {
			continue
		}
		if m.Role == llm.RoleSystem {
			if st.sentSystemMessage(m.Content) {
				continue
			}
		}
		st.seq++
		id := "fw_item_" + strconv.Itoa(st.seq)
		it, ok := messageItem(m, id)
		if !ok {
			continue
		}
		if err := st.writeJSON(itemCreate{Type: "conversation.item.create", PreviousItemID: prev, Item: it}); err != nil {
			return err
		}
		if prev != "" {
			prev = id
		}
		if m.Role != llm.RoleSystem {
			st.devItems = append(st.devItems, id)
		}
	}
	return nil
}

// sentSystemMessage reports whether text was sent as a system item
// already, remembering it if not.
func (st *state) sentSystemMessage(text string) bool {
	for _, s := range st.sentSystem {
		if s == text {
			return true
		}
	}
	if len(st.sentSystem) >= maxSystemItems {
		st.sentSystem = st.sentSystem[1:]
	}
	st.sentSystem = append(st.sentSystem, text)
	return false
}

// serverError reports an error event.
func (st *state) serverError(ev *event) error {
	var e apiError
	if err := json.Unmarshal(ev.err, &e); err != nil {
		e.Type = "error"
	}
	if e.Code == codeActiveResponse {
		st.refused(e.EventID)
		return nil
	}
	if benign(e.Code) {
		if e.Code == "input_audio_buffer_commit_empty" {
			st.awaiting = false // nothing was said: no response follows
		}
		st.p.log.Debug("realtime: benign server error", zap.String("code", e.Code), zap.String("message", e.Message))
	} else {
		st.awaiting = false
		st.p.log.Warn("realtime: server error", zap.String("type", e.Type), zap.String("code", e.Code),
			zap.String("message", e.Message), zap.String("param", e.Param), zap.String("event_id", e.EventID))
		st.p.out.PushError(&Error{Type: e.Type, Code: e.Code, Message: e.Message, Param: e.Param, EventID: e.EventID})
	}
	if st.creating != "" && (e.EventID == "" || e.EventID == st.creating) {
		// The response.create in flight may be what failed: no response
		// follows it, and the next request may go.
		st.creating = ""
		return st.pump()
	}
	return nil
}

// resultContent renders a function result as the function_call_output's
// output, as the assistant aggregator renders tool messages, and reports
// whether it was empty.
func resultContent(v any) (string, bool) {
	switch r := v.(type) {
	case nil:
		return llm.ToolCompleted, true
	case string:
		if r == "" {
			return llm.ToolCompleted, true
		}
		return r, false
	case json.RawMessage:
		if s := strings.TrimSpace(string(r)); s != "" && s != "null" {
			return s, false
		}
		return llm.ToolCompleted, true
	}
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(llm.ErrorResult{Error: "The function's result could not be encoded."})
		return string(b), false
	}
	if string(b) == "null" {
		return llm.ToolCompleted, true
	}
	return string(b), false
}
