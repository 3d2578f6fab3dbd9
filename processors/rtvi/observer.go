package rtvi

import (
	"bytes"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// OutputTransport is implemented by output transport processors (the
// method does nothing). The observer takes bot text frames (AggregatedText,
// TTSText, AggregatedTextProgress) only from the hop where the output
// transport pushes them on, which is when their audio has been played, so
// bot-output follows speech; earlier hops of those frames are ignored. A
// pipeline without an output transport therefore sends no bot-output.
type OutputTransport interface {
	OutputTransport()
}

// ReportLevel says how much a function call's messages reveal (§3.3).
//
// Calls of a function the client runs (an [llm.Function] with Client set,
// whose service answers IsClientFunction with true; see [ClientFunctions])
// are reported at least at ReportArguments, whatever the level set for
// them, even ReportDisabled: client-js runs a handler registered with
// registerFunctionCallHandler only for an in-progress message that names
// the function, and passes it the arguments of that message, so at a lower
// level the call could only time out. Their results are revealed only at
// ReportFull, as for any function.
//
// [llm.Function]: https://pkg.go.dev/github.com/framewire/framewire/processors/llm#Function
type ReportLevel uint8

const (
	// ReportNone sends the messages with the tool_call_id only (started
	// gets an empty data object). It is the default. Client functions are
	// reported at ReportArguments instead (see [ReportLevel]).
	ReportNone ReportLevel = iota
	// ReportDisabled sends no function-call messages at all.
	ReportDisabled
	// ReportName adds the function name.
	ReportName
	// ReportArguments adds the arguments to in-progress.
	ReportArguments
	// ReportFull adds the arguments and the result (when not empty).
	ReportFull
)

// String returns the level's Pipecat name ("none", "full", ...).
func (l ReportLevel) String() string {
	switch l {
	case ReportDisabled:
		return "disabled"
	case ReportName:
		return "name"
	case ReportArguments:
		return "arguments"
	case ReportFull:
		return "full"
	}
	return "none"
}

func (l ReportLevel) name() bool      { return l == ReportName || l == ReportArguments || l == ReportFull }
func (l ReportLevel) arguments() bool { return l == ReportArguments || l == ReportFull }

// ClientFunctions is implemented by the processors that push function
// calls some of which the client runs (llm.Service). The observer asks the
// processor that pushed a call whether the client runs it: such calls are
// named to the client with their arguments at any report level, and only
// they may be answered with llm-function-call-result (see
// [Processor]).
type ClientFunctions interface {
	// IsClientFunction reports whether the client runs the function name.
	IsClientFunction(name string) bool
}

// clientFunction reports whether the processor of src says the client
// runs the function name.
func clientFunction(src observers.Node, name string) bool {
	if src == nil {
		return false
	}
	cf, ok := src.Processor().(ClientFunctions)
	return ok && cf.IsClientFunction(name)
}

// OutputText is bot text on its way into bot-output and bot-tts-text, as
// a [ObserverOptions.Transforms] function sees it.
type OutputText struct {
	// Text is the segment text.
	Text string
	// AggregatedBy is the aggregation ("sentence", "word", ...).
	AggregatedBy string
	// Progress is set for progress messages; the transform must keep it
	// consistent with Text.
	Progress *wire.SpokenProgress
}

// Transform rewrites bot text before it is sent, for one aggregation (or
// all, with AggregatedBy "*" or "").
type Transform struct {
	AggregatedBy string
	Func         func(OutputText) OutputText
}

// ObserverOptions configure an [Observer]. The zero value gives Pipecat's
// defaults: every message on except audio levels and the raw VAD events,
// function calls reported at ReportNone, audio levels every 150 ms.
type ObserverOptions struct {
	// Disable* turn off messages that are on by default.
	DisableBotOutput         bool // bot-output
	DisableBotLLM            bool // bot-llm-started/-stopped/-text, bot-transcription
	DisableBotTTS            bool // bot-tts-started/-stopped/-text
	DisableBotSpeaking       bool // bot-started/-stopped-speaking, bot-interrupted
	DisableUserLLM           bool // user-llm-text
	DisableUserSpeaking      bool // user-started/-stopped-speaking
	DisableUserMute          bool // user-mute-started/-stopped
	DisableUserTranscription bool // user-transcription
	DisableMetrics           bool // metrics

	// Enable* turn on messages that are off by default.
	EnableVADUserSpeaking bool // vad-user-started/-stopped-speaking
	EnableUserAudioLevel  bool // user-audio-level
	EnableBotAudioLevel   bool // bot-audio-level

	// AudioLevelPeriod is the minimum interval between audio level
	// messages of one kind. Default: 150ms.
	AudioLevelPeriod time.Duration
	// FunctionCallReportLevels maps function names to report levels; "*"
	// sets the level of unlisted functions. Default: ReportNone for all.
	FunctionCallReportLevels map[string]ReportLevel
	// SkipAggregatedBy lists aggregations whose bot-output and
	// bot-tts-text are not sent.
	SkipAggregatedBy []string
	// Transforms rewrite bot text before it is sent, in order.
	Transforms []Transform
	// IgnoreSource, when set, silences frames pushed by the processors it
	// returns true for (a side LLM, say).
	IgnoreSource func(processor any) bool
	// MaxQueuedText bounds the bot text held back until the bot starts
	// speaking; the oldest is dropped beyond it. Default: 256.
	MaxQueuedText int
	// Logger receives the observer's logs. Default: none.
	Logger *zap.Logger
}

// Observer is the outbound half of RTVI: it watches the pipeline and turns
// frames into RTVI messages (docs/protocol.md §6), sent through its [Processor].
// Each frame is reported once: on its first push (Event.FirstSeen), or for
// bot text on the output transport's push; of a broadcast pair only the
// downstream copy counts. Observe runs on the observer's own goroutine, so
// its state needs no locks.
type Observer struct {
	p    *Processor
	opts ObserverOptions
	log  *zap.Logger

	// Owned by the Observe goroutine.
	levels      map[string]ReportLevel
	vad         bool
	botSpeaking bool
	queued      []queuedText
	transcript  []byte
	userLevelAt time.Duration
	botLevelAt  time.Duration
	userLevel   bool // a user level has been sent
	botLevel    bool
	buf         []byte
	warned      bool // checkPaired has run
}

// queuedText is bot text held back until the bot starts speaking.
type queuedText struct {
	text, aggregatedBy string
	tts, willBeSpoken  bool
	segment            uint64
	contextID          string // the TTS request the text belongs to, if any
}

// checkPaired warns, once, when the pipeline starts without the observer's
// processor having been set up by a task: nothing the observer sends would
// reach the client.
func (o *Observer) checkPaired() {
	if o.warned {
		return
	}
	o.warned = true
	if o.p == nil || !o.p.setUp.Load() {
		log := o.opts.Logger
		if log == nil {
			log = zap.L() // no task has given the pair a logger
		}
		log.Warn("rtvi: the observer runs without its processor: the pipeline started but the " +
			"rtvi.Processor the observer sends through is not in it, so no RTVI message " +
			"(bot-ready, bot speech, transcripts, bot-output, ui-command, ...) reaches the client; " +
			"put the processor in the pipeline (it brings its observer)")
	}
}

// NewObserver returns the observer of p, configured with opts: it becomes
// the one p brings (see [Processor.Observer]), so a task that runs p adds
// it; adding it by hand as well is harmless (the task adds it once). Call
// it, if at all, before the task runs, once per processor.
func NewObserver(p *Processor, opts ObserverOptions) *Observer {
	o := newObserver(p, opts)
	if p != nil {
		p.obsOnce.Do(func() { p.obs = o })
	}
	return o
}

func newObserver(p *Processor, opts ObserverOptions) *Observer {
	if opts.Logger == nil && p != nil {
		opts.Logger = p.opts.Logger
	}
	if opts.AudioLevelPeriod <= 0 {
		opts.AudioLevelPeriod = 150 * time.Millisecond
	}
	if opts.MaxQueuedText <= 0 {
		opts.MaxQueuedText = 256
	}
	o := &Observer{p: p, opts: opts, log: opts.Logger, vad: opts.EnableVADUserSpeaking}
	if o.log == nil {
		o.log = zap.NewNop()
	}
	o.levels = copyLevels(opts.FunctionCallReportLevels)
	return o
}

func copyLevels(m map[string]ReportLevel) map[string]ReportLevel {
	c := make(map[string]ReportLevel, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Lossless implements observers.Lossless: what the observer sees becomes
// messages the client must get (answers, transcripts, commands, task-group
// lifecycles), so the pipeline waits for it rather than dropping events.
// It only encodes and hands messages to its processor, which never waits
// for the pipeline.
func (o *Observer) Lossless() bool { return true }

// Wants implements observers.Filter: push events of the frame types the
// observer maps. It runs on pipeline goroutines and reads only options
// fixed at construction.
func (o *Observer) Wants(kind observers.EventKind, f frames.Frame) bool {
	if kind != observers.Pushed {
		return false
	}
	switch f.(type) {
	case *frames.InputAudioRaw:
		return o.opts.EnableUserAudioLevel
	case *frames.TTSAudioRaw:
		return o.opts.EnableBotAudioLevel
	case *frames.UserStartedSpeaking, *frames.UserStoppedSpeaking,
		*frames.VADUserStartedSpeaking, *frames.VADUserStoppedSpeaking,
		*frames.UserMuteStarted, *frames.UserMuteStopped,
		*frames.BotStartedSpeaking, *frames.BotStoppedSpeaking, *frames.Interruption,
		*frames.Transcription, *frames.InterimTranscription, *frames.LLMContext,
		*frames.LLMFullResponseStart, *frames.LLMFullResponseEnd, *frames.LLMText,
		*frames.TTSStarted, *frames.TTSStopped, *frames.AggregatedText, *frames.TTSText,
		*frames.AggregatedTextProgress, *frames.Metrics,
		*frames.FunctionCallsStarted, *frames.FunctionCallInProgress,
		*frames.FunctionCallCancel, *frames.FunctionCallResult,
		*ServerMessageFrame, *ServerResponseFrame, *UICommandFrame, *UITaskFrame,
		*ConfigureObserverFrame:
		return true
	case *frames.Start:
		return true // to check, once, that the processor runs too
	}
	return false
}

// Observe implements observers.Observer.
func (o *Observer) Observe(e observers.Event) {
	if e.Kind != observers.Pushed || e.Frame == nil {
		return
	}
	if _, ok := e.Frame.(*frames.Start); ok {
		o.checkPaired()
		return
	}
	if o.opts.IgnoreSource != nil && e.Source != nil && o.opts.IgnoreSource(e.Source.Processor()) {
		return
	}
	if e.Frame.FrameBase().SiblingID != 0 && e.Direction != frames.Downstream {
		return
	}
	switch e.Frame.(type) {
	case *frames.AggregatedText, *frames.TTSText, *frames.AggregatedTextProgress:
		if !fromOutputTransport(e.Source) {
			return
		}
	case *frames.InputAudioRaw, *frames.TTSAudioRaw:
		if !e.FirstSeen {
			return
		}
		o.audioLevel(e)
		return
	default:
		if !e.FirstSeen {
			return
		}
	}
	o.handle(e.Frame, e.Source)
}

func fromOutputTransport(n observers.Node) bool {
	if n == nil {
		return false
	}
	_, ok := n.Processor().(OutputTransport)
	return ok
}

// handle maps one frame, pushed by src, to its messages.
func (o *Observer) handle(f frames.Frame, src observers.Node) {
	opts := &o.opts
	switch f := f.(type) {
	case *frames.UserStartedSpeaking:
		o.event(!opts.DisableUserSpeaking, wire.TypeUserStartedSpeaking)
	case *frames.UserStoppedSpeaking:
		o.event(!opts.DisableUserSpeaking, wire.TypeUserStoppedSpeaking)
	case *frames.VADUserStartedSpeaking:
		o.event(o.vad, wire.TypeVADUserStartedSpeaking)
	case *frames.VADUserStoppedSpeaking:
		o.event(o.vad, wire.TypeVADUserStoppedSpeaking)
	case *frames.UserMuteStarted:
		o.event(!opts.DisableUserMute, wire.TypeUserMuteStarted)
	case *frames.UserMuteStopped:
		o.event(!opts.DisableUserMute, wire.TypeUserMuteStopped)
	case *frames.BotStartedSpeaking:
		o.event(!opts.DisableBotSpeaking, wire.TypeBotStartedSpeaking)
		// Unlike Python, flush whatever the speaking flag says (§6.4).
		o.botSpeaking = true
		for _, q := range o.queued {
			o.sendAggregated(q)
		}
		clear(o.queued)
		o.queued = o.queued[:0]
	case *frames.BotStoppedSpeaking:
		o.event(!opts.DisableBotSpeaking, wire.TypeBotStoppedSpeaking)
		o.botSpeaking = false
	case *frames.Interruption:
		o.event(!opts.DisableBotSpeaking, wire.TypeBotInterrupted)
		// Text held for speech that was cut off is never spoken.
		clear(o.queued)
		o.queued = o.queued[:0]
	case *frames.Transcription:
		if !opts.DisableUserTranscription {
			o.sendData(wire.TypeUserTranscription, wire.Transcription{Text: f.Text, UserID: f.UserID, Timestamp: f.Timestamp, Final: true})
		}
	case *frames.InterimTranscription:
		if !opts.DisableUserTranscription {
			o.sendData(wire.TypeUserTranscription, wire.Transcription{Text: f.Text, UserID: f.UserID, Timestamp: f.Timestamp})
		}
	case *frames.LLMContext:
		if !opts.DisableUserLLM {
			o.userLLMText(f)
		}
	case *frames.LLMFullResponseStart:
		o.event(!opts.DisableBotLLM, wire.TypeBotLLMStarted)
	case *frames.LLMFullResponseEnd:
		if !opts.DisableBotLLM {
			o.event(true, wire.TypeBotLLMStopped)
			o.flushTranscript()
		}
	case *frames.LLMText:
		if !opts.DisableBotLLM {
			o.sendText(wire.TypeBotLLMText, f.Text)
			o.transcript = append(o.transcript, f.Text...)
			if endOfSentence(o.transcript) {
				o.flushTranscript()
			}
		}
	case *frames.TTSStarted:
		o.event(!opts.DisableBotTTS, wire.TypeBotTTSStarted)
	case *frames.TTSStopped:
		o.event(!opts.DisableBotTTS, wire.TypeBotTTSStopped)
	case *frames.AggregatedTextProgress:
		o.progress(f)
	case *frames.AggregatedText:
		o.aggregated(queuedText{text: f.Text, aggregatedBy: f.AggregatedBy, willBeSpoken: f.WillBeSpoken, segment: f.ID(), contextID: f.ContextID})
	case *frames.TTSText:
		if f.Unspoken {
			o.unspoken(f)
			return
		}
		o.aggregated(queuedText{text: f.Text, aggregatedBy: f.AggregatedBy, tts: true, willBeSpoken: true, segment: f.ID()})
	case *frames.Metrics:
		if !opts.DisableMetrics {
			o.sendData(wire.TypeMetrics, metricsData(f))
		}
	case *frames.FunctionCallsStarted:
		for _, c := range f.Calls {
			lvl := o.callLevel(c.Name, src)
			if lvl == ReportDisabled {
				continue
			}
			d := wire.FunctionCallStarted{}
			if lvl.name() {
				d.FunctionName = c.Name
			}
			o.sendData(wire.TypeLLMFunctionCallStarted, d)
		}
	case *frames.FunctionCallInProgress:
		lvl := o.level(f.Name)
		if clientFunction(src, f.Name) {
			lvl = clientLevel(lvl)
			// The client may answer this call from now on, before it
			// hears of it.
			o.p.awaitClient(f.ToolCallID)
		}
		if lvl == ReportDisabled {
			return
		}
		d := wire.FunctionCallInProgress{ToolCallID: f.ToolCallID}
		if lvl.name() {
			d.FunctionName = f.Name
		}
		if lvl.arguments() && len(f.Arguments) > 0 {
			d.Arguments = wire.RawJSON(f.Arguments)
		}
		o.sendData(wire.TypeLLMFunctionCallInProgress, d)
	case *frames.FunctionCallCancel:
		o.p.callSettled(f.ToolCallID)
		lvl := o.callLevel(f.Name, src)
		if lvl == ReportDisabled {
			return
		}
		d := wire.FunctionCallStopped{ToolCallID: f.ToolCallID, Cancelled: true}
		if lvl.name() {
			d.FunctionName = f.Name
		}
		o.sendData(wire.TypeLLMFunctionCallStopped, d)
	case *frames.FunctionCallResult:
		if o.p != nil && src != nil && src.Processor() == o.p {
			// The client's own answer, on its way to the LLM service,
			// which settles the call and pushes the result reported.
			return
		}
		o.p.callSettled(f.ToolCallID)
		lvl := o.callLevel(f.Name, src)
		if lvl == ReportDisabled {
			return
		}
		d := wire.FunctionCallStopped{ToolCallID: f.ToolCallID}
		if lvl.name() {
			d.FunctionName = f.Name
		}
		if lvl == ReportFull {
			if r := wire.RawJSON(wire.AppendAnyJSON(nil, f.Result)); !r.Falsy() {
				d.Result = r
			}
		}
		o.sendData(wire.TypeLLMFunctionCallStopped, d)
	case *ServerMessageFrame:
		o.send(wire.Message{Type: wire.TypeServerMessage, Data: f.Data})
	case *ServerResponseFrame:
		if f.Error != "" {
			o.send(wire.Message{Type: wire.TypeErrorResponse, ID: f.Request.ID, Data: wire.ErrorResponse{Error: f.Error}})
		} else {
			o.send(wire.Message{Type: wire.TypeServerResponse, ID: f.Request.ID, Data: wire.ServerResponse{T: f.Request.Type, D: f.Data}})
		}
	case *UICommandFrame:
		o.send(wire.Message{Type: wire.TypeUICommand, Data: wire.UICommand{Command: f.Command, Payload: f.Payload}})
	case *UITaskFrame:
		if f.Event != nil {
			m := wire.TaskMessage(f.Event, o.p.ClientVersion().Vocabulary())
			o.buf = m.AppendJSON(o.buf[:0])
			o.push(m.Type, taskKey(m.Type, f.Event))
		}
	case *ConfigureObserverFrame:
		if f.FunctionCallReportLevels != nil {
			o.levels = copyLevels(f.FunctionCallReportLevels)
		}
		if f.VADUserSpeaking != wire.OptUnset {
			o.vad = f.VADUserSpeaking == wire.OptTrue
		}
	}
}

// callLevel is the report level of a call of name pushed by src: a
// client function's is at least ReportArguments.
func (o *Observer) callLevel(name string, src observers.Node) ReportLevel {
	lvl := o.level(name)
	if clientFunction(src, name) {
		return clientLevel(lvl)
	}
	return lvl
}

// clientLevel raises l to what a client function needs: its name and
// arguments.
func clientLevel(l ReportLevel) ReportLevel {
	if l == ReportFull {
		return l
	}
	return ReportArguments
}

// level returns the report level of a function: its own, else "*", else
// ReportNone.
func (o *Observer) level(name string) ReportLevel {
	if l, ok := o.levels[name]; ok {
		return l
	}
	return o.levels["*"]
}

// push hands an encoded message (o.buf) of type typ and supersede key
// (0: none) to the processor in a buffer of its own.
func (o *Observer) push(typ string, key uint64) {
	o.p.sendBytes(bytes.Clone(o.buf), typ, key)
}

func (o *Observer) send(m wire.Message) {
	o.buf = m.AppendJSON(o.buf[:0])
	o.push(m.Type, 0)
}

// event sends a message without data when on is true.
func (o *Observer) event(on bool, typ string) {
	if on {
		o.send(wire.Message{Type: typ})
	}
}

// sendDataTo sends a message whose data is d, without boxing d.
func sendDataTo[T wire.Payload](o *Observer, typ string, d T) { sendKeyed(o, typ, 0, d) }

// sendKeyed is sendDataTo for a message with supersede key (0: none).
func sendKeyed[T wire.Payload](o *Observer, typ string, key uint64, d T) {
	o.buf = append(o.buf[:0], `{"label":"rtvi-ai","type":"`...)
	o.buf = append(o.buf, typ...)
	o.buf = append(o.buf, `","data":`...)
	o.buf = append(d.AppendJSON(o.buf), '}')
	o.push(typ, key)
}

func (o *Observer) sendData(typ string, d wire.Payload) { sendDataTo(o, typ, d) }

// sendText sends a text message on the hot path.
func (o *Observer) sendText(typ, text string) {
	o.buf = wire.AppendTextMessage(o.buf[:0], typ, text)
	o.push(typ, 0)
}

// flushTranscript sends the buffered LLM text as bot-transcription.
func (o *Observer) flushTranscript() {
	if len(bytes.TrimSpace(o.transcript)) > 0 {
		o.sendText(wire.TypeBotTranscription, string(o.transcript))
	}
	o.transcript = o.transcript[:0]
}

// userLLMText sends user-llm-text when the context ends with a user message.
func (o *Observer) userLLMText(f *frames.LLMContext) {
	if len(f.Messages) == 0 {
		return
	}
	m := &f.Messages[len(f.Messages)-1]
	if m.Role != "user" {
		return
	}
	text := m.Content
	if text == "" && len(m.Parts) > 0 {
		var sb strings.Builder
		n := 0
		for _, p := range m.Parts {
			if p.Type != "text" {
				continue
			}
			if n > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(p.Text)
			n++
		}
		text = sb.String()
	} else if text == "" && len(m.Raw) > 0 {
		return // a provider-specific message this observer cannot read
	}
	o.sendText(wire.TypeUserLLMText, text)
}

// aggregated queues bot text that will be spoken until the bot speaks, or
// sends it at once.
func (o *Observer) aggregated(q queuedText) {
	if o.opts.DisableBotOutput && o.opts.DisableBotTTS {
		return
	}
	// Text that will be spoken waits for the bot to start speaking, so the
	// client shows it in step with the audio; text that will not be spoken
	// (a text-only pipeline) has nothing to wait for, unless spoken text is
	// already waiting ahead of it.
	if o.botSpeaking || (!q.willBeSpoken && len(o.queued) == 0) {
		o.sendAggregated(q)
		return
	}
	if len(o.queued) >= o.opts.MaxQueuedText {
		o.log.Warn("too much bot text waiting for the bot to speak; dropping the oldest", zap.Int("max", o.opts.MaxQueuedText))
		copy(o.queued, o.queued[1:])
		o.queued = o.queued[:len(o.queued)-1]
	}
	o.queued = append(o.queued, q)
}

// unspoken sends text that the TTS could not speak as bot text at once:
// nothing will play, so nothing waits for the bot to speak. What was held
// for speech ahead of it goes first, in order, except the announcement of
// the same request, which this text replaces.
func (o *Observer) unspoken(f *frames.TTSText) {
	for _, q := range o.queued {
		if f.ContextID == "" || q.contextID != f.ContextID {
			o.sendAggregated(q)
		}
	}
	clear(o.queued)
	o.queued = o.queued[:0]
	o.sendAggregated(queuedText{text: f.Text, aggregatedBy: f.AggregatedBy, segment: f.ID()})
}

// transform applies the matching transforms.
func (o *Observer) transform(t OutputText) OutputText {
	for _, tr := range o.opts.Transforms {
		if tr.Func != nil && (tr.AggregatedBy == "" || tr.AggregatedBy == "*" || tr.AggregatedBy == t.AggregatedBy) {
			t = tr.Func(t)
		}
	}
	return t
}

// sendAggregated sends the full-segment bot-output and bot-tts-text (§6.4).
func (o *Observer) sendAggregated(q queuedText) {
	for _, s := range o.opts.SkipAggregatedBy {
		if s == q.aggregatedBy {
			return
		}
	}
	legacy := o.p.ClientVersion().Legacy()
	suppress := !legacy && (q.aggregatedBy == "word" || q.aggregatedBy == "token")
	text := o.transform(OutputText{Text: q.text, AggregatedBy: q.aggregatedBy}).Text
	if !o.opts.DisableBotOutput && !suppress {
		d := wire.BotOutput{Text: text, AggregatedBy: q.aggregatedBy, Spoken: wire.OptBoolOf(q.tts)}
		if !legacy {
			d.SegmentID = q.segment
			d.WillBeSpoken = wire.OptBoolOf(q.willBeSpoken)
			switch {
			case q.willBeSpoken && q.tts:
				d.SpokenStatus = wire.SpokenCompleted
				d.SpokenProgress = &wire.SpokenProgress{AccumulatedText: text}
			case q.willBeSpoken:
				d.SpokenStatus = wire.SpokenNew
				d.SpokenProgress = &wire.SpokenProgress{RemainingText: text}
			}
		}
		sendDataTo(o, wire.TypeBotOutput, d)
	}
	if q.tts && !o.opts.DisableBotTTS {
		o.sendText(wire.TypeBotTTSText, text)
	}
}

// progress sends a bot-output progress message; 1.x clients get none.
func (o *Observer) progress(f *frames.AggregatedTextProgress) {
	if o.opts.DisableBotOutput || o.p.ClientVersion().Legacy() {
		return
	}
	t := o.transform(OutputText{Text: f.Text, AggregatedBy: f.AggregatedBy,
		Progress: &wire.SpokenProgress{AccumulatedText: f.AccumulatedText, RemainingText: f.RemainingText}})
	prog := wire.SpokenProgress{AccumulatedText: f.AccumulatedText, RemainingText: f.RemainingText}
	if t.Progress != nil {
		prog = *t.Progress
	}
	status := wire.SpokenInProgress
	if prog.RemainingText == "" {
		status = wire.SpokenCompleted
	}
	sendDataTo(o, wire.TypeBotOutput, wire.BotOutput{
		Text: t.Text, AggregatedBy: f.AggregatedBy, SegmentID: f.SegmentID,
		WillBeSpoken: wire.OptTrue, SpokenStatus: status, SpokenProgress: &prog,
	})
}

// audioLevel sends user-audio-level or bot-audio-level, at most once per
// AudioLevelPeriod of task time.
func (o *Observer) audioLevel(e observers.Event) {
	var (
		a    *frames.Audio
		typ  string
		last *time.Duration
		sent *bool
	)
	switch f := e.Frame.(type) {
	case *frames.InputAudioRaw:
		if !o.opts.EnableUserAudioLevel {
			return
		}
		a, typ, last, sent = &f.Audio, wire.TypeUserAudioLevel, &o.userLevelAt, &o.userLevel
	case *frames.TTSAudioRaw:
		if !o.opts.EnableBotAudioLevel {
			return
		}
		a, typ, last, sent = &f.Audio, wire.TypeBotAudioLevel, &o.botLevelAt, &o.botLevel
	default:
		return
	}
	if *sent && e.At-*last <= o.opts.AudioLevelPeriod {
		return
	}
	*last, *sent = e.At, true
	sendKeyed(o, typ, levelKey(typ), wire.AudioLevel{Value: audioLevel(a.PCM)})
}

// audioLevel maps the RMS of 16-bit PCM to [0, 1]: -60 dBFS and below is
// 0, full scale is 1.
func audioLevel(pcm []byte) float64 {
	n := len(pcm) / 2
	if n == 0 {
		return 0
	}
	var sum float64
	for i := 0; i < n; i++ {
		s := float64(int16(uint16(pcm[2*i]) | uint16(pcm[2*i+1])<<8))
		sum += s * s
	}
	rms := math.Sqrt(sum/float64(n)) / 32768
	if rms <= 0 {
		return 0
	}
	level := (20*math.Log10(rms) + 60) / 60
	level = math.Max(0, math.Min(1, level))
	return math.Round(level*1000) / 1000
}

// metricsData groups a metrics frame's entries by kind (§6.5). Kinds the
// protocol has no key for are dropped.
func metricsData(f *frames.Metrics) wire.Metrics {
	var d wire.Metrics
	for i := range f.Data {
		m := &f.Data[i]
		switch m.Kind {
		case frames.MetricTTFB:
			d.TTFB = append(d.TTFB, wire.TimingMetric{Processor: m.Processor, Model: m.Model, Value: m.Value.Seconds()})
		case frames.MetricProcessing:
			d.Processing = append(d.Processing, wire.TimingMetric{Processor: m.Processor, Model: m.Model, Value: m.Value.Seconds()})
		case frames.MetricLLMUsage:
			d.Tokens = append(d.Tokens, wire.TokenUsage{
				PromptTokens: m.Usage.PromptTokens, CompletionTokens: m.Usage.CompletionTokens,
				TotalTokens: m.Usage.TotalTokens, CacheReadInputTokens: m.Usage.CacheReadTokens,
				ReasoningTokens: m.Usage.ReasoningTokens,
			})
		case frames.MetricSTTUsage:
			d.STTUsage = append(d.STTUsage, wire.STTUsageMetric{Processor: m.Processor, Model: m.Model, AudioSeconds: m.AudioSeconds})
		case frames.MetricTTSUsage:
			d.Characters = append(d.Characters, wire.CharactersMetric{Processor: m.Processor, Model: m.Model, Value: m.Characters})
		}
	}
	return d
}

// endOfSentence reports whether text ends a sentence, with the rules of
// Pipecat's classic pattern: a final . ? ! : or ; that does not follow a
// capital letter (initials), a digit (a list number), "a"/"p" after a
// time, or Mr/Ms/Dr/Mrs/Prof; or a full-width ending. Trailing spaces do
// not count.
func endOfSentence(text []byte) bool {
	t := bytes.TrimRightFunc(text, unicode.IsSpace)
	if len(t) == 0 {
		return false
	}
	r, size := utf8.DecodeLastRune(t)
	switch r {
	case '。', '？', '！', '：', '；', '।':
		return true
	case '.', '?', '!', ':', ';':
	default:
		return false
	}
	before := t[:len(t)-size]
	if len(before) == 0 {
		return true
	}
	prev := before[len(before)-1]
	if (prev >= 'A' && prev <= 'Z') || (prev >= '0' && prev <= '9') {
		return false
	}
	if len(before) >= 3 && (prev == 'a' || prev == 'p') && before[len(before)-2] == ' ' &&
		before[len(before)-3] >= '0' && before[len(before)-3] <= '9' {
		return false
	}
	for _, abbr := range []string{"Mr", "Ms", "Dr", "Mrs", "Prof"} {
		if bytes.HasSuffix(before, []byte(abbr)) {
			return false
		}
	}
	return true
}

// The supersede keys of the messages a newer one makes worthless to the
// client, which a transport may leave out of the queue of a client that
// reads slowly (frames.OutputTransportMessageUrgent.Supersede): the user's
// and the bot's audio level, keyed by type, and a task group's progress
// update (job_update, or task_update for RTVI 1.3 clients), keyed by type,
// group and worker. Every other message has key 0 and is never coalesced:
// answers, transcripts, the group lifecycle (group_started,
// job_completed, group_completed), commands, errors, metrics (each carries
// one processor's figures) and bot-output (its in-progress messages carry
// words the client adds up).

// levelKey is the key of an audio level message of type typ.
func levelKey(typ string) uint64 { return nonZero(fnv(fnvOffset, typ)) }

// taskKey is the key of the task lifecycle message of type typ that
// carries e: non-zero for a progress update only.
func taskKey(typ string, e wire.TaskEvent) uint64 {
	var u wire.TaskUpdate
	switch e := e.(type) {
	case wire.TaskUpdate:
		u = e
	case *wire.TaskUpdate:
		if e == nil {
			return 0
		}
		u = *e
	default:
		return 0
	}
	h := fnv(fnvOffset, typ)
	h = fnv(h^0xff, u.TaskID) // separators no string byte can forge
	h = fnv(h^0xfe, u.AgentName)
	return nonZero(h)
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnv folds s into the FNV-1a hash h.
func fnv(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

func nonZero(h uint64) uint64 {
	if h == 0 {
		return 1
	}
	return h
}
