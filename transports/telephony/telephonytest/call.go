package telephonytest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/transports/telephony/twilio"
)

// Options describe a simulated call. Only AnswerURL is required.
type Options struct {
	// AnswerURL is the bot's incoming-call webhook (POST).
	AnswerURL string
	// StreamURL, when set, is dialled instead of the TwiML's stream URL
	// (a bot behind a tunnel answers with its public URL).
	StreamURL string
	// AuthToken, when set, signs the webhook as Twilio does
	// (X-Twilio-Signature, twilio.Sign).
	AuthToken string
	// AccountSID, CallSID, From and To are the call's. Defaults: made-up
	// ids of Twilio's shape and two example numbers.
	AccountSID, CallSID, From, To string
	// Speech is the caller's audio, mono 8 kHz, said once the bot's
	// greeting is over. Default: none (the caller only listens).
	Speech []int16
	// BargeIn, when set, has the caller speak over the greeting: it
	// starts once it has heard BargeIn of the bot's voice, instead of
	// waiting for the greeting to end. Result.ClearAfter says how soon the
	// bot cleared what it was saying.
	BargeIn time.Duration
	// DTMF are the keys pressed, one at a time, after the speech and the
	// bot's answer to it, each followed by the bot's answer.
	DTMF string
	// Quiet is how long the bot must have been silent after speaking for
	// its turn to be over. Default: 800ms.
	Quiet time.Duration
	// GreetingTimeout bounds the wait for the bot's greeting before the
	// caller speaks anyway; ReplyTimeout the wait for each answer.
	// Defaults: 10s and 15s.
	GreetingTimeout, ReplyTimeout time.Duration
	// Linger is how long the caller stays on the line after its last
	// turn, so a bot that ends the call can hang up first. Default: 2s.
	Linger time.Duration
	// MaxCall bounds the whole call. Default: 2m.
	MaxCall time.Duration
	// MaxMessageBytes bounds one message from the bot and the webhook's
	// answer. Default: 64 KiB.
	MaxMessageBytes int64
	// MaxQueue bounds the bot's audio waiting to play, in samples.
	// Default: DefaultMaxQueue.
	MaxQueue int
	// HTTPClient posts the webhook. Default: a client with a 10s timeout.
	HTTPClient *http.Client
	// Logf, when set, receives what happens on the call, a line at a time.
	Logf func(format string, args ...any)
}

// Result is what the caller heard and saw.
type Result struct {
	// StreamURL is the stream dialled; Parameters the TwiML's custom
	// parameters, sent back in the start.
	StreamURL  string
	Parameters map[string]string
	// Heard is what the caller heard, mono 8 kHz, from the stream's start
	// to the hang-up (silence where the bot said nothing).
	Heard []int16
	// BotAudio is how much of the bot's audio played; Dropped how much a
	// clear dropped before it played.
	BotAudio, Dropped time.Duration
	// SpeechStart and SpeechEnd are when the caller's speech (by energy)
	// started and ended, from the stream's start; zero without speech.
	SpeechStart, SpeechEnd time.Duration
	// Answered says the bot spoke after the caller's speech ended;
	// VoiceToVoice is the time from the end of the speech to the bot's
	// first voiced audio after it, as the caller heard it.
	Answered     bool
	VoiceToVoice time.Duration
	// KeyAnswers is, for each key pressed, the time from the key to the
	// bot's first voiced audio after it (-1: none). Both latencies are
	// counted in the caller's 20 ms ticks: 0 means the bot's voice played
	// in the first tick after, within 20 to 40 ms of the key or the end
	// of the speech.
	KeyAnswers []time.Duration
	// Cleared says a clear came after the caller's speech started;
	// ClearAfter is the time from the start of the speech (by energy) to
	// the first clear after it, as the caller received it.
	Cleared    bool
	ClearAfter time.Duration
	// Media, Marks and Clears count the bot's messages; MarkEchoes the
	// marks echoed.
	Media, Marks, Clears, MarkEchoes int
	// BotHungUp says the bot ended the stream (with a normal close)
	// before the caller hung up.
	BotHungUp bool
	// LateTicks counts the caller's 20 ms ticks that ran more than a
	// frame late (the machine was too busy to keep real time).
	LateTicks int
}

// ErrProtocol is wrapped by the errors of a bot that did not speak the
// provider's protocol (an unknown message, another stream's id, bad
// base64, an abnormal close, a webhook answer without a stream).
var ErrProtocol = errors.New("protocol error")

func protocolErr(format string, args ...any) error {
	return fmt.Errorf("telephonytest: %w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}

func (o *Options) defaults() {
	if o.AccountSID == "" {
		o.AccountSID = "AC00000000000000000000000000000000"
	}
	if o.CallSID == "" {
		o.CallSID = "CA00000000000000000000000000000001"
	}
	if o.From == "" {
		o.From = "+15005550006"
	}
	if o.To == "" {
		o.To = "+15005550001"
	}
	if o.Quiet <= 0 {
		o.Quiet = 800 * time.Millisecond
	}
	if o.GreetingTimeout <= 0 {
		o.GreetingTimeout = 10 * time.Second
	}
	if o.ReplyTimeout <= 0 {
		o.ReplyTimeout = 15 * time.Second
	}
	if o.Linger <= 0 {
		o.Linger = 2 * time.Second
	}
	if o.MaxCall <= 0 {
		o.MaxCall = 2 * time.Minute
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = 64 << 10
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
}

// maxParameters bounds a stream's custom parameters.
const maxParameters = 64

// frame is the call's tick: 20 ms, 160 samples at 8 kHz.
const (
	frame        = 20 * time.Millisecond
	frameSamples = 160
)

// Call makes one simulated call to the bot and returns what the caller
// heard. Its error wraps ErrProtocol when the bot broke the protocol; the
// Result holds what was heard until then.
func Call(ctx context.Context, o Options) (*Result, error) {
	o.defaults()
	if o.AnswerURL == "" {
		return nil, errors.New("telephonytest: Options.AnswerURL is required")
	}
	ctx, cancel := context.WithTimeout(ctx, o.MaxCall)
	defer cancel()
	streamURL, params, err := answer(ctx, &o)
	if err != nil {
		return nil, err
	}
	if o.StreamURL != "" {
		streamURL = o.StreamURL
	}
	res := &Result{StreamURL: streamURL, Parameters: params}
	dialCtx, cancelDial := context.WithTimeout(ctx, 10*time.Second)
	c, _, err := websocket.Dial(dialCtx, streamURL, &websocket.DialOptions{HTTPClient: o.HTTPClient})
	cancelDial()
	if err != nil {
		return res, fmt.Errorf("telephonytest: dialling the stream %s: %w", streamURL, err)
	}
	defer c.CloseNow()
	c.SetReadLimit(o.MaxMessageBytes)
	k := &call{o: o, c: c, res: res, sid: "MZ" + strings.Repeat("0", 31) + "1", in: make(chan inbound, 64)}
	k.playout.MaxQueue = o.MaxQueue
	err = k.run(ctx, params)
	return res, err
}

// answer posts the incoming-call webhook as Twilio does and reads the
// stream URL and parameters from the TwiML.
func answer(ctx context.Context, o *Options) (string, map[string]string, error) {
	form := url.Values{
		"AccountSid": {o.AccountSID}, "ApiVersion": {"2010-04-01"}, "CallSid": {o.CallSID}, "CallStatus": {"ringing"},
		"Called": {o.To}, "Caller": {o.From}, "Direction": {"inbound"}, "From": {o.From}, "To": {o.To},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.AnswerURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", nil, fmt.Errorf("telephonytest: the answer URL %q: %w", o.AnswerURL, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if o.AuthToken != "" {
		req.Header.Set(twilio.SignatureHeader, twilio.Sign(o.AuthToken, o.AnswerURL, form))
	}
	resp, err := o.HTTPClient.Do(req)
	if err != nil {
		return "", nil, fmt.Errorf("telephonytest: posting the webhook: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, o.MaxMessageBytes+1))
	if err != nil {
		return "", nil, fmt.Errorf("telephonytest: reading the webhook's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", nil, fmt.Errorf("telephonytest: the webhook answered %s", resp.Status)
	}
	if int64(len(body)) > o.MaxMessageBytes {
		return "", nil, protocolErr("the webhook's answer is larger than %d bytes", o.MaxMessageBytes)
	}
	return parseTwiML(body)
}

// parseTwiML reads the stream's URL and parameters from an answer's
// TwiML: <Response><Connect><Stream url><Parameter name value/>, as
// Twilio's "TwiML Voice: <Stream>" page shows it.
func parseTwiML(body []byte) (string, map[string]string, error) {
	var t struct {
		XMLName xml.Name `xml:"Response"`
		Stream  struct {
			URL        string `xml:"url,attr"`
			Parameters []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"Parameter"`
		} `xml:"Connect>Stream"`
	}
	if err := xml.Unmarshal(body, &t); err != nil {
		return "", nil, protocolErr("the webhook's answer is not TwiML: %v", err)
	}
	if t.Stream.URL == "" {
		return "", nil, protocolErr("the webhook's TwiML has no <Connect><Stream url>")
	}
	if len(t.Stream.Parameters) > maxParameters {
		return "", nil, protocolErr("the webhook's TwiML has %d stream parameters, more than %d", len(t.Stream.Parameters), maxParameters)
	}
	params := map[string]string{}
	for _, p := range t.Stream.Parameters {
		params[p.Name] = p.Value
	}
	return t.Stream.URL, params, nil
}

// inbound is one message from the bot, or the reader's end.
type inbound struct {
	typ websocket.MessageType
	msg []byte
	err error
	at  time.Time // when it was read
}

// call is the state of one call: the loop's, but for in (the reader's
// channel to it).
type call struct {
	o       Options
	c       *websocket.Conn
	res     *Result
	sid     string
	seq     int
	chunk   int
	in      chan inbound
	playout Playout
	start   time.Time // the call's clock: when tick 0 was due
	pcm     []int16
	ulaw    []byte
	closed  bool // the reader ended
}

// The phases of the caller's script.
const (
	greeting  = iota // listening to the bot's greeting
	speaking         // saying Speech
	waiting          // listening to the bot's answer
	lingering        // on the line a moment more: the bot may hang up
	done             // hanging up
)

func (k *call) run(ctx context.Context, params map[string]string) error {
	var wg sync.WaitGroup
	rctx, stopReading := context.WithCancel(ctx)
	wg.Add(1)
	go func() { defer wg.Done(); k.read(rctx) }()
	defer wg.Wait()
	defer stopReading()
	defer k.c.CloseNow()

	if err := k.send(ctx, connectedMessage()); err != nil {
		return err
	}
	if err := k.send(ctx, k.startMessage(params)); err != nil {
		return err
	}
	k.o.Logf("call %s: stream %s started", k.o.CallSID, k.sid)

	speechFrom, speechTo, hasSpeech := SpeechSpan(k.o.Speech, 8000)
	var (
		phase       = greeting
		phaseTicks  int  // ticks in this phase
		spoken      int  // samples of Speech sent
		heard       bool // the bot's voice was heard in this phase
		quietTicks  int  // ticks since the bot's voice
		voicedTicks int  // ticks of the bot's voice in this phase
		keys        = []byte(k.o.DTMF)
		keyAt       time.Duration // when the last key was pressed
	)
	quiet := int(k.o.Quiet / frame)
	// next moves to the script's next phase, at (from the call's start).
	next := func(at time.Duration) error {
		switch {
		case phase == greeting && len(k.o.Speech) > 0:
			k.o.Logf("call %s: speaking at %v", k.o.CallSID, at)
			phase = speaking
			if hasSpeech {
				k.res.SpeechStart, k.res.SpeechEnd = at+speechFrom, at+speechTo
			}
		case phase == speaking:
			phase = waiting
		case len(keys) > 0:
			if err := k.dtmf(ctx, keys[0]); err != nil {
				return err
			}
			keys, keyAt, phase = keys[1:], at, waiting
			k.res.KeyAnswers = append(k.res.KeyAnswers, -1)
		case phase != lingering:
			phase = lingering
		default:
			phase = done
		}
		phaseTicks, heard, quietTicks, voicedTicks = 0, false, 0, 0
		return nil
	}
	start := time.Now()
	k.start = start
	timer := time.NewTimer(0)
	defer timer.Stop()
	for tick := 0; ; tick++ {
		// The caller's clock: tick n is due at start + n×20 ms, whatever
		// the previous ticks took.
		due := start.Add(time.Duration(tick) * frame)
		if late := time.Since(due); late > frame {
			k.res.LateTicks++
		} else if late < 0 {
			timer.Reset(-late)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return k.hangUp(ctx, fmt.Errorf("telephonytest: the call ran past its bound: %w", ctx.Err()))
			}
		}
		if err := k.drain(ctx); err != nil {
			return err
		}
		if k.closed {
			k.res.BotHungUp = true
			k.o.Logf("call %s: the bot ended the stream", k.o.CallSID)
			return nil
		}
		if phase == done {
			return k.hangUp(ctx, nil)
		}
		at := time.Duration(tick) * frame // the start of this tick, in the call
		// The caller's side of the tick: speech, or the line's silence.
		var out []int16
		if phase == speaking {
			out = k.o.Speech[spoken:min(spoken+frameSamples, len(k.o.Speech))]
			spoken += len(out)
		}
		if err := k.media(ctx, out, tick); err != nil {
			return k.failed(ctx, err)
		}
		// The bot's side: one frame played.
		played, bot, echoes := k.playout.Tick()
		k.res.Heard = append(k.res.Heard, played...)
		k.res.BotAudio += time.Duration(bot) * time.Second / 8000
		for _, name := range echoes {
			if err := k.echo(ctx, name); err != nil {
				return k.failed(ctx, err)
			}
		}
		if voiced(played) {
			r := k.res
			switch {
			case len(r.KeyAnswers) > 0 && r.KeyAnswers[len(r.KeyAnswers)-1] < 0:
				r.KeyAnswers[len(r.KeyAnswers)-1] = at - keyAt
				k.o.Logf("call %s: the bot answered the key %v after it", k.o.CallSID, at-keyAt)
			case hasSpeech && !r.Answered && len(r.KeyAnswers) == 0 && phase != greeting && at >= r.SpeechEnd:
				r.Answered, r.VoiceToVoice = true, at-r.SpeechEnd
				k.o.Logf("call %s: the bot answered %v after the speech ended", k.o.CallSID, r.VoiceToVoice)
			}
			heard, quietTicks = true, 0
			voicedTicks++
		} else {
			quietTicks++
		}
		phaseTicks++
		waited := time.Duration(phaseTicks) * frame
		var over bool
		switch phase {
		case greeting:
			over = (heard && quietTicks >= quiet) || waited >= k.o.GreetingTimeout ||
				(k.o.BargeIn > 0 && time.Duration(voicedTicks)*frame >= k.o.BargeIn)
		case speaking:
			over = spoken >= len(k.o.Speech)
		case waiting:
			over = (heard && quietTicks >= quiet) || waited >= k.o.ReplyTimeout
		case lingering:
			over = waited >= k.o.Linger
		}
		if over {
			if err := next(at + frame); err != nil {
				return err
			}
		}
	}
}

// failed returns why the stream failed when a write to it did: a
// protocol error in what the bot sent before it went away explains it
// better than the broken write.
func (k *call) failed(ctx context.Context, err error) error {
	deadline := time.Now().Add(time.Second)
	for !k.closed {
		if perr := k.drain(ctx); errors.Is(perr, ErrProtocol) {
			return perr
		}
		if time.Now().After(deadline) {
			_ = k.c.CloseNow() // the reader ends
		}
		if !k.closed {
			time.Sleep(time.Millisecond) // the reader is handing over the end
		}
	}
	return err
}

// read is the reader: it hands each message to the loop.
func (k *call) read(ctx context.Context) {
	defer close(k.in)
	for {
		typ, msg, err := k.c.Read(ctx)
		select {
		case k.in <- inbound{typ, msg, err, time.Now()}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// drain takes the bot's messages that came since the last tick.
func (k *call) drain(ctx context.Context) error {
	for !k.closed {
		select {
		case m, ok := <-k.in:
			if !ok {
				k.closed = true
				return nil
			}
			if m.err != nil {
				k.closed = true
				switch websocket.CloseStatus(m.err) {
				case websocket.StatusNormalClosure, websocket.StatusGoingAway:
					return nil
				case -1:
					return fmt.Errorf("telephonytest: reading the stream: %w", m.err)
				}
				return protocolErr("the bot closed the stream: %v", m.err)
			}
			echoes, err := k.handle(m.typ, m.msg, m.at)
			if err != nil {
				return err
			}
			for _, name := range echoes {
				if err := k.echo(ctx, name); err != nil {
					return err
				}
			}
		default:
			return nil
		}
	}
	return nil
}

// botMessage is what the bot may send: media, mark and clear, as Twilio's
// "Media Streams - WebSocket Messages" page defines them (messages to
// Twilio).
type botMessage struct {
	Event     string `json:"event"`
	StreamSID string `json:"streamSid"`
	Media     *struct {
		Payload string `json:"payload"`
	} `json:"media"`
	Mark *struct {
		Name string `json:"name"`
	} `json:"mark"`
}

// handle acts on one message from the bot; it returns the marks to echo
// at once (a clear's).
func (k *call) handle(typ websocket.MessageType, msg []byte, at time.Time) ([]string, error) {
	if typ != websocket.MessageText {
		return nil, protocolErr("a binary message: Twilio's Media Streams take JSON text")
	}
	var m botMessage
	if err := json.Unmarshal(msg, &m); err != nil {
		return nil, protocolErr("a message that is not JSON: %v", err)
	}
	if m.StreamSID != k.sid {
		return nil, protocolErr("a %q message names stream %q, not the call's %q", m.Event, m.StreamSID, k.sid)
	}
	switch m.Event {
	case "media":
		if m.Media == nil {
			return nil, protocolErr("a media message without media")
		}
		var err error
		if k.ulaw, err = base64.StdEncoding.AppendDecode(k.ulaw[:0], []byte(m.Media.Payload)); err != nil {
			return nil, protocolErr("a media payload that is not base64: %v", err)
		}
		k.res.Media++
		k.pcm = dsp.AppendULawSamples(k.pcm[:0], k.ulaw)
		if err := k.playout.Push(k.pcm); err != nil {
			return nil, protocolErr("%v", err)
		}
	case "mark":
		if m.Mark == nil || m.Mark.Name == "" {
			return nil, protocolErr("a mark without a name")
		}
		k.res.Marks++
		k.playout.Mark(m.Mark.Name)
	case "clear":
		k.res.Clears++
		if r := k.res; !r.Cleared && r.SpeechEnd > 0 {
			if d := at.Sub(k.start) - r.SpeechStart; d >= 0 {
				r.Cleared, r.ClearAfter = true, d
				k.o.Logf("call %s: the bot cleared %v after the caller started speaking", k.o.CallSID, d)
			}
		}
		echoes, dropped := k.playout.Clear()
		k.res.Dropped += time.Duration(dropped) * time.Second / 8000
		k.o.Logf("call %s: clear: %v of the bot's audio dropped, %d marks echoed", k.o.CallSID, time.Duration(dropped)*time.Second/8000, len(echoes))
		return echoes, nil
	default:
		return nil, protocolErr("an unknown event %q", m.Event)
	}
	return nil, nil
}

// encode numbers m with the next sequence number and encodes it. The
// connected message has none: start is the first ("1").
func (k *call) encode(m map[string]any) ([]byte, error) {
	if m["event"] != "connected" {
		k.seq++
		m["sequenceNumber"] = strconv.Itoa(k.seq)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("telephonytest: encoding a %v message: %w", m["event"], err)
	}
	return b, nil
}

// send writes one message of Twilio's with the next sequence number.
func (k *call) send(ctx context.Context, m map[string]any) error {
	b, err := k.encode(m)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := k.c.Write(ctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("telephonytest: sending a %v message: %w", m["event"], err)
	}
	return nil
}

// The caller's messages, as Twilio's "Media Streams - WebSocket
// Messages" page (twilio.com/docs/voice/media-streams/websocket-messages)
// shows them; testdata/caller.golden pins them.

func connectedMessage() map[string]any {
	return map[string]any{"event": "connected", "protocol": "Call", "version": "1.0.0"}
}

func (k *call) startMessage(params map[string]string) map[string]any {
	return map[string]any{"event": "start", "streamSid": k.sid, "start": map[string]any{
		"accountSid": k.o.AccountSID, "streamSid": k.sid, "callSid": k.o.CallSID, "tracks": []string{"inbound"},
		"customParameters": params,
		"mediaFormat":      map[string]any{"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
	}}
}

// mediaMessage is 20 ms of the caller's audio (silence past pcm's end),
// the tick'th of the call.
func (k *call) mediaMessage(pcm []int16, tick int) map[string]any {
	var buf [frameSamples]int16
	copy(buf[:], pcm)
	k.ulaw = dsp.AppendULaw(k.ulaw[:0], buf[:])
	k.chunk++
	return map[string]any{"event": "media", "streamSid": k.sid, "media": map[string]any{
		"track": "inbound", "chunk": strconv.Itoa(k.chunk), "timestamp": strconv.Itoa(tick * 20),
		"payload": base64.StdEncoding.EncodeToString(k.ulaw),
	}}
}

func (k *call) markMessage(name string) map[string]any {
	return map[string]any{"event": "mark", "streamSid": k.sid, "mark": map[string]any{"name": name}}
}

func (k *call) dtmfMessage(digit byte) map[string]any {
	return map[string]any{"event": "dtmf", "streamSid": k.sid, "dtmf": map[string]any{"track": "inbound_track", "digit": string(digit)}}
}

func (k *call) stopMessage() map[string]any {
	return map[string]any{"event": "stop", "streamSid": k.sid, "stop": map[string]any{"accountSid": k.o.AccountSID, "callSid": k.o.CallSID}}
}

// media sends 20 ms of the caller's audio.
func (k *call) media(ctx context.Context, pcm []int16, tick int) error {
	return k.send(ctx, k.mediaMessage(pcm, tick))
}

func (k *call) echo(ctx context.Context, name string) error {
	k.res.MarkEchoes++
	return k.send(ctx, k.markMessage(name))
}

func (k *call) dtmf(ctx context.Context, digit byte) error {
	k.o.Logf("call %s: pressing %c", k.o.CallSID, digit)
	return k.send(ctx, k.dtmfMessage(digit))
}

// hangUp sends stop and closes the stream; cause, if any, is returned
// with the errors of hanging up.
func (k *call) hangUp(ctx context.Context, cause error) error {
	ctx = context.WithoutCancel(ctx)
	err := k.send(ctx, k.stopMessage())
	k.o.Logf("call %s: hung up", k.o.CallSID)
	// The close handshake needs the reader reading: what the bot still
	// sends is dropped meanwhile.
	closed := make(chan error, 1)
	go func() { closed <- k.c.Close(websocket.StatusNormalClosure, "the caller hung up") }()
	for range k.in {
	}
	k.closed = true
	// After stop the bot may answer the close, or just drop the
	// connection; a close with another code is an error.
	if cerr := <-closed; err == nil && cerr != nil {
		switch websocket.CloseStatus(cerr) {
		case -1, websocket.StatusNormalClosure, websocket.StatusGoingAway:
		default:
			err = protocolErr("the bot answered the hang-up with %v", cerr)
		}
	}
	return errors.Join(cause, err)
}
