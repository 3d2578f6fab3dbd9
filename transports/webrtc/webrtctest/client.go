package webrtctest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	pion "github.com/pion/webrtc/v4"

	"github.com/framewire/framewire/transports/webrtc/internal/codec"
	"github.com/framewire/framewire/transports/webrtc/internal/rtcpreport"
)

// Options configure a [Client].
type Options struct {
	// OfferURL is where offers are POSTed and candidates PATCHed.
	OfferURL string
	// HTTP is the HTTP client. Default: a fresh http.Client.
	HTTP *http.Client
	// ToneHz, when positive, streams a sine of that frequency up in
	// 20 ms frames; otherwise the client sends no audio.
	ToneHz float64
	// ToneAmplitude is the tone's peak. Default: 8000.
	ToneAmplitude float64
	// NoTrickle waits for gathering and sends the candidates in the offer
	// instead of by PATCH.
	NoTrickle bool
	// NoPings turns the keepalive off.
	NoPings bool
	// KeepAudio is how much decoded bot audio to keep. Default: 10 s.
	KeepAudio time.Duration
	// RequestData is sent as requestData with the first offer.
	RequestData any
	// Payloads, when set, are sent in turn (one per 20 ms) instead of
	// encoding the tone live: load tests use it to keep the client cheap.
	Payloads [][]byte
	// CountOnly counts the bot's packets without decoding them.
	CountOnly bool
	// Backpressure makes the client lose no message: while [Client.Messages]
	// is not read (1024 are buffered), its data channel stops reading, as
	// a page whose main thread is busy, and the server's messages back up
	// in SCTP. By default a message that finds the buffer full is dropped.
	Backpressure bool
	// ReadDelay, when positive, holds each data-channel message that long
	// before the next is read: a client that reads slowly.
	ReadDelay time.Duration
	// RewriteAnswer, if set, edits each answer's SDP before the client
	// applies it: a client that ignores what the server announced (its
	// max-message-size, say).
	RewriteAnswer func(sdp string) string
}

// Client is one simulated browser client.
type Client struct {
	opts  Options
	api   *pion.API
	codec codec.Codec
	http  *http.Client

	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	spawnMu sync.Mutex
	closed  bool

	mu       sync.Mutex
	leg      *leg
	pcID     string
	received []int16
	msgs     chan string
	report   rtcp.ReceptionReport // the server's latest, on the client's audio
	reports  int
	pinging  atomic.Bool

	// Counters.
	PacketsIn     atomic.Uint64
	PacketsOut    atomic.Uint64
	Patches       atomic.Uint64
	CandidatesOut atomic.Uint64
	// Renegotiations counts re-offers made for the server's renegotiate.
	Renegotiations atomic.Uint64
}

// leg is one RTCPeerConnection of the client; a restart makes a new one.
type leg struct {
	pc     *pion.PeerConnection
	dc     *pion.DataChannel
	open   chan struct{}
	closed chan struct{}
	track  *codec.Track

	mu       sync.Mutex
	answered bool
	queue    []pion.ICECandidateInit
	gathered bool // the last candidate is in queue
}

// newAPI returns the pion API the client uses: the build's audio codec and
// VP8, loopback candidates only, no mDNS, and RTCP sender and receiver
// reports as the server has (pion's defaults add NACK, TWCC and stats
// interceptors, which a load test would measure as part of the server).
func newAPI(c codec.Codec) (*pion.API, error) {
	me := &pion.MediaEngine{}
	if err := me.RegisterCodec(c.Params, pion.RTPCodecTypeAudio); err != nil {
		return nil, err
	}
	if err := me.RegisterCodec(pion.RTPCodecParameters{
		RTPCodecCapability: pion.RTPCodecCapability{MimeType: pion.MimeTypeVP8, ClockRate: 90000},
		PayloadType:        96,
	}, pion.RTPCodecTypeVideo); err != nil {
		return nil, err
	}
	var se pion.SettingEngine
	LoopbackOnly(&se)
	ir := &interceptor.Registry{}
	rtcpreport.Register(ir)
	return pion.NewAPI(pion.WithMediaEngine(me), pion.WithSettingEngine(se), pion.WithInterceptorRegistry(ir)), nil
}

// sharedAPI is the API of every client of a process (they all use the
// build's codec), shared as a browser's tabs share one engine: one RTCP
// report goroutine serves them all.
var sharedAPI = sync.OnceValues(func() (*pion.API, error) { return newAPI(codec.Default()) })

// LoopbackOnly restricts ICE to IPv4 loopback without mDNS, for tests on
// one host.
func LoopbackOnly(se *pion.SettingEngine) {
	se.SetIncludeLoopbackCandidate(true)
	se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	se.SetNetworkTypes([]pion.NetworkType{pion.NetworkTypeUDP4})
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
}

// Dial connects: it posts the first offer and applies the answer. The data
// channel opens shortly after; see [Client.WaitOpen].
func Dial(ctx context.Context, opts Options) (*Client, error) {
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{}
	}
	if opts.ToneAmplitude == 0 {
		opts.ToneAmplitude = 8000
	}
	if opts.KeepAudio == 0 {
		opts.KeepAudio = 10 * time.Second
	}
	c := &Client{opts: opts, codec: codec.Default(), http: opts.HTTP, msgs: make(chan string, 1024)}
	api, err := sharedAPI()
	if err != nil {
		return nil, err
	}
	c.api = api
	// The client lives until Close, past the ctx that bounds dialling.
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	c.pinging.Store(!opts.NoPings)
	if err := c.negotiate(ctx, true, opts.RequestData); err != nil {
		c.Close()
		return nil, err
	}
	c.spawn(c.pinger)
	if opts.ToneHz > 0 || len(opts.Payloads) > 0 {
		c.spawn(c.tone)
	}
	return c, nil
}

// spawn runs fn on a goroutine that Close waits for; after Close it does
// nothing.
func (c *Client) spawn(fn func()) {
	c.spawnMu.Lock()
	defer c.spawnMu.Unlock()
	if c.closed {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		fn()
	}()
}

// newLeg builds a browser-like peer connection.
func (c *Client) newLeg() (*leg, error) {
	pc, err := c.api.NewPeerConnection(pion.Configuration{})
	if err != nil {
		return nil, err
	}
	l := &leg{pc: pc, open: make(chan struct{}), closed: make(chan struct{})}
	l.track, err = codec.NewTrack(c.codec.Capability(), "mic", "client", codec.FrameDuration)
	if err != nil {
		return nil, err
	}
	mic, err := pc.AddTransceiverFromTrack(l.track, pion.RTPTransceiverInit{Direction: pion.RTPTransceiverDirectionSendrecv})
	if err != nil {
		return nil, err
	}
	c.spawn(func() { c.readReports(mic.Sender()) })
	if _, err := pc.AddTransceiverFromKind(pion.RTPCodecTypeVideo, pion.RTPTransceiverInit{Direction: pion.RTPTransceiverDirectionSendrecv}); err != nil {
		return nil, err
	}
	ordered := true
	l.dc, err = pc.CreateDataChannel("chat", &pion.DataChannelInit{Ordered: &ordered})
	if err != nil {
		return nil, err
	}
	var openOnce, closeOnce sync.Once
	l.dc.OnOpen(func() {
		openOnce.Do(func() { close(l.open) })
		// syncTrackStatus, as the browser does on the first open.
		for i, on := range []bool{true, false} {
			_ = l.dc.SendText(fmt.Sprintf(`{"type":"signalling","message":{"type":"trackStatus","receiver_index":%d,"enabled":%t}}`, i, on))
		}
	})
	l.dc.OnClose(func() { closeOnce.Do(func() { close(l.closed) }) })
	l.dc.OnMessage(func(m pion.DataChannelMessage) {
		if string(m.Data) == `{"type":"signalling","message":{"type":"renegotiate"}}` {
			// As the browser: a new offer on the same peer connection.
			c.spawn(func() {
				ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
				defer cancel()
				if c.Renegotiate(ctx) == nil {
					c.Renegotiations.Add(1)
				}
			})
		}
		c.deliver(string(m.Data))
	})
	pc.OnICECandidate(func(cand *pion.ICECandidate) {
		if cand == nil {
			l.mu.Lock()
			l.gathered = true
			l.mu.Unlock()
			return
		}
		init := cand.ToJSON()
		l.mu.Lock()
		l.queue = append(l.queue, init)
		l.mu.Unlock()
	})
	pc.OnTrack(func(t *pion.TrackRemote, _ *pion.RTPReceiver) {
		if t.Kind() == pion.RTPCodecTypeAudio {
			c.readAudio(t)
		}
	})
	return l, nil
}

// negotiate makes a new leg (first connect or restart) and exchanges
// offer and answer for it.
func (c *Client) negotiate(ctx context.Context, first bool, requestData any) error {
	l, err := c.newLeg()
	if err != nil {
		return err
	}
	c.mu.Lock()
	old := c.leg
	pcID := c.pcID
	c.mu.Unlock()
	ans, err := c.offer(ctx, l, pcID, !first, requestData)
	if err != nil {
		_ = l.pc.Close()
		return err
	}
	c.mu.Lock()
	c.leg, c.pcID = l, ans
	c.mu.Unlock()
	if old != nil {
		_ = old.pc.GracefulClose()
	}
	c.spawn(func() { c.trickle(l) })
	return nil
}

// offer posts l's offer and applies the answer; it returns the new pc_id.
func (c *Client) offer(ctx context.Context, l *leg, pcID string, restart bool, requestData any) (string, error) {
	offer, err := l.pc.CreateOffer(nil)
	if err != nil {
		return "", err
	}
	gathered := pion.GatheringCompletePromise(l.pc)
	if err := l.pc.SetLocalDescription(offer); err != nil {
		return "", err
	}
	sdp := offer.SDP
	if c.opts.NoTrickle {
		select {
		case <-gathered:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		sdp = l.pc.LocalDescription().SDP
	}
	body := map[string]any{"sdp": sdp, "type": "offer", "pc_id": nil, "restart_pc": restart}
	if pcID != "" {
		body["pc_id"] = pcID
	}
	if requestData != nil {
		body["requestData"] = requestData
	}
	var ans struct {
		SDP  string `json:"sdp"`
		Type string `json:"type"`
		PCID string `json:"pc_id"`
	}
	if err := c.post(ctx, http.MethodPost, body, &ans); err != nil {
		return "", err
	}
	if ans.Type != "answer" || ans.PCID == "" {
		return "", fmt.Errorf("webrtctest: bad answer: type %q, pc_id %q", ans.Type, ans.PCID)
	}
	if c.opts.RewriteAnswer != nil {
		ans.SDP = c.opts.RewriteAnswer(ans.SDP)
	}
	if err := l.pc.SetRemoteDescription(pion.SessionDescription{Type: pion.SDPTypeAnswer, SDP: ans.SDP}); err != nil {
		return "", err
	}
	l.mu.Lock()
	l.answered = true
	l.mu.Unlock()
	return ans.PCID, nil
}

// StatusError is a non-2xx reply.
type StatusError struct {
	Code int
	Body string
}

func (e *StatusError) Error() string { return fmt.Sprintf("webrtctest: HTTP %d: %s", e.Code, e.Body) }

func (c *Client) post(ctx context.Context, method string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, c.opts.OfferURL, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return &StatusError{resp.StatusCode, string(data)}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// trickle flushes l's queued candidates by PATCH every 200 ms, as the
// browser does, until the leg or the client closes.
func (c *Client) trickle(l *leg) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-l.closed:
			return
		case <-t.C:
		}
		if l.pc.ConnectionState() == pion.PeerConnectionStateClosed {
			return
		}
		l.mu.Lock()
		q, gathered := l.queue, l.gathered
		l.queue = nil
		l.mu.Unlock()
		if len(q) == 0 || c.opts.NoTrickle {
			if gathered {
				return // every candidate has been sent
			}
			continue
		}
		cands := make([]map[string]any, len(q))
		for i, ci := range q {
			cands[i] = map[string]any{"candidate": ci.Candidate, "sdp_mid": ci.SDPMid, "sdp_mline_index": ci.SDPMLineIndex}
		}
		if err := c.post(c.ctx, http.MethodPatch, map[string]any{"pc_id": c.PCID(), "candidates": cands}, nil); err == nil {
			c.Patches.Add(1)
			c.CandidatesOut.Add(uint64(len(q)))
		}
	}
}

// pinger sends "ping: <ms>" every second on the open channel.
func (c *Client) pinger() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		if !c.pinging.Load() {
			continue
		}
		if l := c.current(); l != nil && l.dc.ReadyState() == pion.DataChannelStateOpen {
			_ = l.dc.SendText("ping: " + strconv.FormatInt(time.Now().UnixMilli(), 10))
		}
	}
}

// tone streams the sine (or the given payloads) up in paced 20 ms frames.
func (c *Client) tone() {
	next := c.opts.toneSource(c.codec)
	if next == nil {
		return
	}
	// Independent browsers start their 20 ms clocks at unrelated times:
	// start this one at a random point of the period, so that many clients
	// dialled together do not send in lockstep.
	select {
	case <-c.ctx.Done():
		return
	case <-time.After(rand.N(codec.FrameDuration)):
	}
	t := time.NewTicker(codec.FrameDuration)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		payload := next()
		if payload == nil {
			continue
		}
		if l := c.current(); l != nil {
			if l.track.WriteFrame(payload) == nil {
				c.PacketsOut.Add(1)
			}
		}
	}
}

// toneSource returns a function giving the next payload: the fixed
// payloads in turn, or the tone encoded frame by frame.
func (o Options) toneSource(cd codec.Codec) func() []byte {
	if len(o.Payloads) > 0 {
		k := 0
		return func() []byte {
			p := o.Payloads[k%len(o.Payloads)]
			k++
			return p
		}
	}
	enc, err := cd.NewEncoder(cd.SampleRate, codec.EncoderOptions{}) // a microphone, as a browser encodes it
	if err != nil {
		return nil
	}
	n := codec.FrameSamples(cd.SampleRate)
	frame := make([]int16, n)
	buf := make([]byte, cd.MaxPayload)
	k := 0
	return func() []byte {
		for i := range frame {
			ph := 2 * math.Pi * o.ToneHz * float64(k*n+i) / float64(cd.SampleRate)
			frame[i] = int16(o.ToneAmplitude * math.Sin(ph))
		}
		k++
		m, err := enc.Encode(frame, buf)
		if err != nil {
			return nil
		}
		return buf[:m]
	}
}

// EncodeTone returns the payloads of d of a sine at freq, for
// [Options.Payloads].
func EncodeTone(freq, amplitude float64, d time.Duration) ([][]byte, error) {
	cd := codec.Default()
	next := Options{ToneHz: freq, ToneAmplitude: amplitude}.toneSource(cd)
	if next == nil {
		return nil, fmt.Errorf("webrtctest: no %s encoder", cd.Params.MimeType)
	}
	var out [][]byte
	for range int(d / codec.FrameDuration) {
		out = append(out, append([]byte(nil), next()...))
	}
	return out, nil
}

// readAudio decodes the bot's audio and keeps the last KeepAudio of it.
func (c *Client) readAudio(t *pion.TrackRemote) {
	dec, err := c.codec.NewDecoder(c.codec.SampleRate)
	if err != nil {
		return
	}
	keep := int(c.opts.KeepAudio.Seconds() * float64(c.codec.SampleRate))
	pcm := make([]int16, codec.MaxDecodedSamples(c.codec.SampleRate))
	buf := make([]byte, 1500)
	var pkt rtp.Packet
	for {
		n, _, err := t.Read(buf)
		if err != nil {
			return
		}
		if pkt.Unmarshal(buf[:n]) != nil {
			continue
		}
		c.PacketsIn.Add(1)
		if c.opts.CountOnly {
			continue
		}
		m, err := dec.Decode(pkt.Payload, pcm)
		if err != nil {
			continue
		}
		c.mu.Lock()
		c.received = append(c.received, pcm[:m]...)
		if over := len(c.received) - keep; over > 0 {
			c.received = append(c.received[:0], c.received[over:]...)
		}
		c.mu.Unlock()
	}
}

// readReports keeps the latest reception report the server sent about
// the client's audio, until the connection closes.
func (c *Client) readReports(sender *pion.RTPSender) {
	buf := make([]byte, 1500) // ReadRTCP would allocate one per packet
	for {
		n, _, err := sender.Read(buf)
		if err != nil {
			return
		}
		pkts, err := rtcp.Unmarshal(buf[:n])
		if err != nil {
			continue
		}
		for _, p := range pkts {
			rr, ok := p.(*rtcp.ReceiverReport)
			if !ok {
				continue
			}
			for _, r := range rr.Reports {
				c.mu.Lock()
				c.report, c.reports = r, c.reports+1
				c.mu.Unlock()
			}
		}
	}
}

// LastReport returns the latest reception report the server sent about
// the client's audio and how many it sent.
func (c *Client) LastReport() (rtcp.ReceptionReport, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.report, c.reports
}

func (c *Client) current() *leg {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leg
}

// PCID returns the pc_id of the latest answer.
func (c *Client) PCID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pcID
}

// CodecMimeType is the MIME type of the audio codec clients offer:
// audio/opus in a build with the "opus" tag, audio/PCMU otherwise.
func CodecMimeType() string { return codec.Default().Params.MimeType }

// SampleRate is the rate of [Client.Received] audio.
func (c *Client) SampleRate() int { return c.codec.SampleRate }

// Received returns a copy of the decoded bot audio kept so far, and
// forgets it.
func (c *Client) Received() []int16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := append([]int16(nil), c.received...)
	c.received = c.received[:0]
	return out
}

// WaitOpen waits until the current data channel is open.
func (c *Client) WaitOpen(ctx context.Context) error {
	l := c.current()
	select {
	case <-l.open:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("webrtctest: data channel did not open: %w", ctx.Err())
	}
}

// Closed is closed when the current leg's data channel closes.
func (c *Client) Closed() <-chan struct{} { return c.current().closed }

// Send sends text on the current data channel.
func (c *Client) Send(text string) error {
	l := c.current()
	if l == nil {
		return errors.New("webrtctest: closed")
	}
	return l.dc.SendText(text)
}

// Messages delivers every text the server sent, in order.
func (c *Client) Messages() <-chan string { return c.msgs }

// deliver hands one data-channel message to Messages, pacing the
// channel's reads as Options say. It runs on pion's read loop of the
// channel, so while it waits the channel reads nothing.
func (c *Client) deliver(m string) {
	if d := c.opts.ReadDelay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-c.ctx.Done():
			t.Stop()
			return
		}
	}
	if c.opts.Backpressure {
		select {
		case c.msgs <- m:
		case <-c.ctx.Done():
		}
		return
	}
	select {
	case c.msgs <- m:
	default:
	}
}

// Next returns the next message for which match is true, skipping others.
func (c *Client) Next(ctx context.Context, match func(string) bool) (string, error) {
	for {
		select {
		case m := <-c.msgs:
			if match == nil || match(m) {
				return m, nil
			}
		case <-ctx.Done():
			return "", fmt.Errorf("webrtctest: no matching message: %w", ctx.Err())
		}
	}
}

// Restart replaces the peer connection (restart_pc:true) as the browser does
// after an ICE failure.
func (c *Client) Restart(ctx context.Context) error { return c.negotiate(ctx, false, nil) }

// Renegotiate sends a new offer on the same peer connection
// (restart_pc:false), as after the server's renegotiate message.
func (c *Client) Renegotiate(ctx context.Context) error {
	l := c.current()
	id, err := c.offer(ctx, l, c.PCID(), false, nil)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.pcID = id
	c.mu.Unlock()
	return nil
}

// Vanish stops the keepalive without closing anything, like a client whose
// tab froze or whose network dropped.
func (c *Client) Vanish() { c.pinging.Store(false) }

// Resume starts the keepalive again.
func (c *Client) Resume() { c.pinging.Store(true) }

// Close closes the client as client.disconnect() does: no HTTP call, the
// channel and peer connection just close.
func (c *Client) Close() {
	c.spawnMu.Lock()
	c.closed = true
	c.spawnMu.Unlock()
	c.cancel()
	if l := c.current(); l != nil {
		_ = l.pc.GracefulClose()
	}
	c.wg.Wait()
}
