package webrtc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/pion/interceptor"
	"github.com/pion/sdp/v3"
	pion "github.com/pion/webrtc/v4"
	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports"
	"github.com/framewire/framewire/transports/webrtc/internal/codec"
)

// Session is one connected client: its current peer connection (replaced
// when the client restarts it), the data channel, and the pipeline built
// for it. The server creates sessions; applications see them in their
// [PipelineFactory]. All methods are safe for concurrent use.
type Session struct {
	srv     *Server
	log     *zap.Logger
	id      string
	startID string
	data    json.RawMessage
	ctx     context.Context
	cancel  context.CancelFunc
	in      *Input
	out     *Output
	done    chan struct{}
	// ice is the server's ICE policy with its defaults filled in.
	ice ICEPolicy
	// remote counts the client's candidates against ICEPolicy.MaxCandidates
	// over all the session's peer connections.
	remote *remoteCandidates
	// connectBy is when a session whose data channel never opened ends
	// (its first offer plus ConnectTimeout), restarts or not; connected is
	// set once a channel of the session has opened.
	connectBy time.Time
	connected atomic.Bool
	// limiter bounds the rate of the client's messages.
	limiter *transports.MessageLimiter
	// msgLog is the sampled logger of lines client messages cause; see
	// messageLog.
	msgLog     *zap.Logger
	msgLogOnce sync.Once

	// offerMu serialises offers (renegotiation, restart) on this session.
	offerMu sync.Mutex
	track   atomic.Pointer[codec.Track]
	micOff  atomic.Bool

	mu         sync.Mutex
	cur        *peer
	peers      []*peer // peers not yet closed
	dc         *pion.DataChannel
	ob         transports.Outbox // messages for the client the channel cannot take yet
	inbox      []frames.Frame    // client messages and refusals
	inboxBytes int
	cause      *endCause
	watchdog   *time.Timer
	grace      *time.Timer // running while the client is silent, with RestartGrace
	silent     bool        // no ping for PingTimeout
	closing    bool
	inputOn    bool           // the input transport is set up: deliver to it
	task       *pipeline.Task // the session's pipeline, once it runs
	tracks     [3]bool        // trackStatus by receiver index
	bg         sync.WaitGroup
	draining   bool // the drain goroutine runs
	stalled    bool // the session ends because the client stopped reading
	outDropped uint64
	outMerged  uint64
	outStalled uint64
	inDropped  uint64

	// eventMu orders the session's Options.OnSession events;
	// announcedEnd is set once SessionEnded was sent.
	eventMu      sync.Mutex
	announcedEnd bool

	// kick wakes the drain goroutine: the channel's send buffer ran low,
	// or a message was queued. quit stops it.
	kick chan struct{}
	quit chan struct{}
}

// endCause records why a session ended.
type endCause struct {
	reason string
	// clientGone is true when the client left: no peerLeft is sent.
	clientGone bool
}

func newSession(srv *Server, startID string, data json.RawMessage) *Session {
	id := uuid.NewString()
	s := &Session{
		srv:     srv,
		log:     srv.log.With(zap.String("session", id)),
		id:      id,
		startID: startID,
		data:    data,
		done:    make(chan struct{}),
		tracks:  [3]bool{true, true, true},
		kick:    make(chan struct{}, 1),
		quit:    make(chan struct{}),
	}
	s.ctx, s.cancel = context.WithCancel(srv.ctx)
	s.ice = srv.icePolicy()
	s.remote = &remoteCandidates{}
	s.connectBy = time.Now().Add(srv.opts.ConnectTimeout)
	s.limiter = srv.newLimiter(time.Now())
	s.in = &Input{s: s, opts: srv.opts.Input}
	s.in.out = &s.in.outlet
	s.out = newOutput(s)
	return s
}

// ID returns the session's own identifier (not the pc_id, which changes
// when the client restarts its peer connection).
func (s *Session) ID() string { return s.id }

// StartID returns the /start session id the client connected through, or
// "" when it posted to /api/offer directly.
func (s *Session) StartID() string { return s.startID }

// PCID returns the pc_id of the current peer connection.
func (s *Session) PCID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return ""
	}
	return s.cur.id
}

// RequestData returns the app data of the connection: the offer's
// requestData, or the body given to /start. It is nil when there was none.
func (s *Session) RequestData() json.RawMessage { return s.data }

// Input returns the session's input transport, for the head of its pipeline.
func (s *Session) Input() *Input { return s.in }

// Output returns the session's output transport, for the end of its
// pipeline (before the assistant aggregator, if any).
func (s *Session) Output() *Output { return s.out }

// Context returns a context that ends with the session.
func (s *Session) Context() context.Context { return s.ctx }

// Done is closed once the session is fully torn down.
func (s *Session) Done() <-chan struct{} { return s.done }

// Reason says why the session ended, or "" while it runs.
func (s *Session) Reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cause == nil {
		return ""
	}
	return s.cause.reason
}

// TrackEnabled reports what the client last said in trackStatus about its
// receiver index (0 mic, 1 camera, 2 screen); true until it says.
func (s *Session) TrackEnabled(index int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return index >= 0 && index < len(s.tracks) && s.tracks[index]
}

// SessionStats counts what a session lost.
type SessionStats struct {
	// OutboundDropped counts messages for the client dropped because the
	// channel was not open and [Options.MaxPendingMessages] were waiting,
	// because the session had ended, or because pion refused them.
	OutboundDropped uint64
	// OutboundCoalesced counts messages for the client left out because a
	// newer one supersedes them (audio levels, task-group progress
	// updates of the same job and worker), replaced in the outbound queue
	// by the newer one. The newest always arrives; nothing else is ever
	// coalesced.
	OutboundCoalesced uint64
	// OutboundStalled counts messages for the client that were waiting
	// when the session ended because the client stopped reading (see
	// [Options.StalledClientTimeout]), or that were sent after that.
	OutboundStalled uint64
	// InboundDropped counts client messages dropped because the pipeline
	// had not started and the queue was full.
	InboundDropped uint64
	// InboundLimited counts client messages dropped because the client
	// sent faster than [InboundLimits] allow.
	InboundLimited uint64
}

// Stats returns the session's counters.
func (s *Session) Stats() SessionStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SessionStats{
		OutboundDropped:   s.outDropped,
		OutboundCoalesced: s.outMerged,
		OutboundStalled:   s.outStalled,
		InboundDropped:    s.inDropped,
		InboundLimited:    s.limiter.Dropped(),
	}
}

// Close ends the session from the server side: the pipeline is cancelled,
// the client gets peerLeft and the peer connection is closed. It does not
// wait; see [Session.Done].
func (s *Session) Close(reason string) { s.end(reason, false) }

// Send queues msg for the client as one text data-channel message, in
// order with every other. Until the channel is open, messages wait in a
// bounded queue (dropped and counted past [Options.MaxPendingMessages]).
// Once it is open, a message the channel's send buffer cannot take (past
// [Options.MaxBufferedBytes]: the client reads slower than the server
// writes) waits in the session's outbound queue; when that is full
// ([Options.MaxOutboundMessages], [Options.MaxOutboundBytes]), Send waits
// for room, which makes the pipeline wait for the client. Nothing the
// client must see is dropped: a client that takes nothing for
// [Options.StalledClientTimeout] ends the session instead, and Send
// returns. Send's messages are never coalesced; see [Session.SendSuperseding].
// The caller gives up msg.
func (s *Session) Send(msg []byte) { s.send(msg, 0, true) }

// SendSuperseding is [Session.Send] for a message that a newer one with
// the same non-zero key makes worthless to the client (an audio level, a
// worker's progress update: frames.OutputTransportMessageUrgent's
// Supersede): while it waits in the outbound queue, a newer message with
// the same key takes its place (see [SessionStats]). Key 0 is Send.
func (s *Session) SendSuperseding(msg []byte, key uint64) { s.send(msg, key, true) }

// sendControl queues one of the transport's own few messages (peerLeft,
// renegotiate, the too-fast warning) without waiting for room: they are
// small, rare and sent from pion's callbacks, which must not block.
func (s *Session) sendControl(msg []byte) { s.send(msg, 0, false) }

func (s *Session) send(msg []byte, key uint64, wait bool) {
	opts := &s.srv.opts
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.closing && s.dc == nil {
			s.outDropped++
			return
		}
		if s.dc != nil && s.ob.Empty() && int(s.dc.BufferedAmount()) <= opts.MaxBufferedBytes {
			s.sendLocked(msg)
			return
		}
		if s.dc == nil { // not open yet, or a restart is under way
			if key != 0 && s.ob.Supersede(key) {
				s.mergedLocked()
			} else if wait && s.ob.Len() >= opts.MaxPendingMessages {
				s.outDropped++
				return
			}
			s.ob.Push(msg, key, time.Now())
			return
		}
		if key != 0 && s.ob.Supersede(key) {
			s.mergedLocked()
			s.ob.Push(msg, key, time.Now())
			s.wake()
			return
		}
		if !wait || s.ob.Empty() || s.ob.Len() < opts.MaxOutboundMessages && s.ob.Bytes()+len(msg) <= opts.MaxOutboundBytes {
			s.ob.Push(msg, key, time.Now())
			s.wake()
			return
		}
		if s.stalled {
			s.outStalled++
			return
		}
		if s.ctx.Err() != nil { // the session is ending for another reason
			s.outDropped++
			return
		}
		ready := s.ob.Wait()
		s.mu.Unlock()
		select {
		case <-ready:
		case <-s.ctx.Done():
		}
		s.mu.Lock()
	}
}

// mergedLocked counts a coalesced message and logs, sampled, at powers of
// two.
func (s *Session) mergedLocked() {
	s.outMerged++
	if s.outMerged&(s.outMerged-1) == 0 {
		s.messageLog().Debug("the client reads slowly; coalescing superseded messages",
			zap.Uint64("coalesced_total", s.outMerged), zap.Int("queued", s.ob.Len()))
	}
}

// wake makes the drain goroutine look at the queue.
func (s *Session) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// sendLocked writes one message on the open channel. s.mu is held, which
// keeps messages in order.
func (s *Session) sendLocked(msg []byte) {
	if err := s.dc.SendText(string(msg)); err != nil {
		s.outDropped++
		s.log.Debug("data channel send failed", zap.Error(err))
	}
}

// flushLocked moves queued messages to the open channel while its send
// buffer holds at most MaxBufferedBytes, and wakes the senders waiting for
// room if it moved any.
func (s *Session) flushLocked(now time.Time) {
	if s.dc == nil {
		return
	}
	moved := false
	for int(s.dc.BufferedAmount()) <= s.srv.opts.MaxBufferedBytes {
		msg, ok := s.ob.Peek()
		if !ok {
			break
		}
		s.ob.Pop(now)
		s.sendLocked(msg)
		moved = true
	}
	if moved {
		s.ob.Notify()
	}
}

// drainPoll is how often the drain goroutine looks at a backlog without
// being woken, in case a low-buffer event went by unseen.
const drainPoll = 100 * time.Millisecond

// drain feeds the outbound queue to the data channel as its send buffer
// empties (pion's buffered-amount-low event wakes it) and ends the session
// when the client has taken nothing for StalledClientTimeout while
// messages wait. The session starts it when its first channel opens and
// teardown waits for it.
func (s *Session) drain() {
	defer s.bg.Done()
	limit := s.srv.opts.StalledClientTimeout
	poll := time.NewTimer(drainPoll)
	defer poll.Stop()
	for {
		select {
		case <-s.kick:
		case <-poll.C:
		case <-s.quit:
			return
		}
		now := time.Now()
		s.mu.Lock()
		s.flushLocked(now)
		backlog := !s.ob.Empty() && s.dc != nil
		waited, n, bytes := now.Sub(s.ob.Since()), s.ob.Len(), s.ob.Bytes()
		stall := backlog && waited >= limit && !s.stalled && s.cause == nil
		if stall {
			s.stalled = true
		}
		s.mu.Unlock()
		if stall {
			s.log.Warn("the client stopped reading; ending the session",
				zap.Int("queued", n), zap.Int("queued_bytes", bytes), zap.Duration("waited", waited))
			s.end(fmt.Sprintf("the client stopped reading: %d messages waited %v", n, limit), true)
		}
		if backlog {
			poll.Reset(min(drainPoll, max(limit-waited, time.Millisecond)))
		}
	}
}

// waitFlushed waits until what is queued for the client has been sent, or
// limit.
func (s *Session) waitFlushed(dc *pion.DataChannel, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && dc.ReadyState() == pion.DataChannelStateOpen {
		s.mu.Lock()
		done := s.ob.Empty() || s.dc != dc
		s.mu.Unlock()
		if done && dc.BufferedAmount() == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// end records the first cause and cancels the session: its context and,
// once it runs, its pipeline; run then tears everything down.
func (s *Session) end(reason string, clientGone bool) {
	s.mu.Lock()
	if s.cause == nil {
		s.cause = &endCause{reason: reason, clientGone: clientGone}
		s.log.Info("session ending", zap.String("reason", reason))
	}
	reason, task := s.cause.reason, s.task
	s.mu.Unlock()
	s.cancel()
	if task != nil {
		task.Cancel(reason)
	}
}

// run runs the pipeline until it finishes, then tears the session down.
// The session's end cancels the pipeline; the server's drain (see
// [Server.Shutdown]) ends it gracefully through a [pipeline.Runner]: End,
// then Cancel once Options.ShutdownGrace has passed. The server owns the
// goroutine run is called on and waits for it.
func (s *Session) run(task *pipeline.Task) {
	s.mu.Lock()
	s.task = task
	ended := s.cause != nil
	s.mu.Unlock()
	if ended { // the session ended while the answer was on its way
		task.Cancel(s.Reason())
	}
	r := pipeline.Runner{Logger: s.log, GracePeriod: s.srv.opts.ShutdownGrace}
	if err := r.Run(s.srv.drain, task); err != nil {
		s.log.Warn("pipeline failed", zap.Error(err))
	}
	s.end("pipeline ended", false)
	s.teardown()
}

// abandon tears down a session whose pipeline never ran.
func (s *Session) abandon() {
	s.end("offer failed", true)
	s.teardown()
}

// teardown says goodbye (unless the client left), closes every peer
// connection, waits for every goroutine of the session and forgets it.
func (s *Session) teardown() {
	s.mu.Lock()
	s.closing = true
	cause, ran := s.cause, s.task != nil
	if s.watchdog != nil {
		s.watchdog.Stop()
	}
	if s.grace != nil {
		s.grace.Stop()
	}
	dc := s.dc
	s.mu.Unlock()
	if dc != nil && !cause.clientGone {
		s.sendControl(peerLeftMessage)
		s.waitFlushed(dc, time.Second)
	}
	close(s.quit)
	s.mu.Lock()
	peers := s.peers
	var ids []string
	if s.cur != nil {
		ids = []string{s.cur.id}
	}
	if n := uint64(s.ob.Reset()); s.stalled {
		s.outStalled += n
	} else {
		s.outDropped += n
	}
	s.peers, s.cur, s.dc, s.inbox = nil, nil, nil, nil
	s.mu.Unlock()
	s.track.Store(nil)
	for _, p := range peers {
		p.close()
	}
	s.bg.Wait()
	s.reportOutput()
	if ran {
		// Only a session announced as started is announced as ended; its
		// ids are forgotten right after.
		last := ""
		if len(ids) > 0 {
			last = ids[0]
		}
		s.announce(SessionEvent{Kind: SessionEnded, PCID: last, Reason: cause.reason})
	}
	s.srv.forget(s, ids)
	close(s.done)
}

// peer is one pion PeerConnection of a session.
type peer struct {
	s       *Session
	id      string
	pc      *pion.PeerConnection
	track   *codec.Track
	opened  atomic.Bool
	timeout *time.Timer

	mu      sync.Mutex
	dc      *pion.DataChannel
	closing bool
	wg      sync.WaitGroup // our goroutines that use pc
}

// enter registers a goroutine that uses the peer; false once it closes.
func (p *peer) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing {
		return false
	}
	p.wg.Add(1)
	return true
}

func (p *peer) leave() { p.wg.Done() }

// close closes the peer connection and waits for its goroutines and ours.
func (p *peer) close() {
	p.mu.Lock()
	p.closing = true
	p.mu.Unlock()
	p.timeout.Stop()
	if err := p.pc.GracefulClose(); err != nil {
		p.s.log.Debug("closing the peer connection", zap.String("pc_id", p.id), zap.Error(err))
	}
	p.wg.Wait()
}

// connect builds the session's first peer connection from offer.
func (s *Session) connect(ctx context.Context, offer string) (answerBody, error) {
	s.offerMu.Lock()
	defer s.offerMu.Unlock()
	p, ans, err := s.newPeer(ctx, offer)
	if err != nil {
		return ans, err
	}
	if _, ok := s.adopt(p); !ok {
		p.close()
		return answerBody{}, &unavailableError{"the session ended while connecting", 1}
	}
	return ans, nil
}

// adopt makes p the current peer, registers its pc_id with the server,
// retires the pc_id of the peer it replaces and returns that peer. Only the
// current pc_id leads to the session: whoever holds an earlier one cannot
// restart, renegotiate or trickle into it (an unknown pc_id is a new
// connection). It refuses (false) once the session is tearing down, so a
// restart that races the end cannot leak its peer.
func (s *Session) adopt(p *peer) (old *peer, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return nil, false
	}
	old = s.cur
	s.cur = p
	s.peers = append(s.peers, p)
	s.dc = nil // the old channel is no longer used; queue until p's opens
	s.track.Store(p.track)
	s.srv.mu.Lock() // lock order: session, then server
	s.srv.byPC[p.id] = s
	if old != nil && s.srv.byPC[old.id] == s {
		delete(s.srv.byPC, old.id)
	}
	s.srv.mu.Unlock()
	return old, true
}

func (s *Session) current(p *peer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur == p
}

// newPeer builds a peer connection from a client offer and returns its
// complete (non-trickle) answer.
func (s *Session) newPeer(ctx context.Context, offer string) (*peer, answerBody, error) {
	var parsed sdp.SessionDescription
	if err := parsed.UnmarshalString(offer); err != nil {
		return nil, answerBody{}, badRequest("the offer SDP does not parse: %v", err)
	}
	offer, err := s.filterOffer(offer)
	if err != nil {
		return nil, answerBody{}, err
	}
	srv := s.srv
	// A session that never connected has until connectBy, however often
	// it restarts; a connected one gets ConnectTimeout for each restart.
	wait, reason := srv.opts.ConnectTimeout, fmt.Sprintf("the data channel did not open within %v", srv.opts.ConnectTimeout)
	if !s.connected.Load() {
		wait = time.Until(s.connectBy)
		reason = fmt.Sprintf("the data channel did not open within %v of the first offer", srv.opts.ConnectTimeout)
		if wait <= 0 {
			return nil, answerBody{}, &unavailableError{"the session did not connect in time", 1}
		}
	}
	pc, err := srv.api.NewPeerConnection(srv.cfg)
	if err != nil {
		return nil, answerBody{}, fmt.Errorf("webrtc: new peer connection: %w", err)
	}
	p := &peer{s: s, id: uuid.NewString(), pc: pc}
	p.timeout = time.AfterFunc(wait, func() {
		if !p.opened.Load() && s.current(p) {
			s.end(reason, true)
		}
	})
	fail := func(err error) (*peer, answerBody, error) {
		p.close()
		return nil, answerBody{}, err
	}
	pc.OnDataChannel(func(dc *pion.DataChannel) { s.onDataChannel(p, dc) })
	pc.OnTrack(func(t *pion.TrackRemote, r *pion.RTPReceiver) {
		s.log.Debug("remote track", zap.String("pc_id", p.id), zap.String("kind", t.Kind().String()),
			zap.String("codec", t.Codec().MimeType))
		if t.Kind() != pion.RTPCodecTypeAudio || !p.enter() {
			return
		}
		defer p.leave()
		// The client's sender reports arrive on the receiver's RTCP: read
		// them so the receiver reports can answer them (round-trip time).
		if p.enter() {
			go func() {
				defer p.leave()
				drainRTCP(r)
			}()
		}
		s.in.readTrack(t)
	})
	pc.OnConnectionStateChange(func(st pion.PeerConnectionState) {
		if st == pion.PeerConnectionStateFailed && s.current(p) {
			s.end("the peer connection failed", true)
		}
	})
	if err := pc.SetRemoteDescription(pion.SessionDescription{Type: pion.SDPTypeOffer, SDP: offer}); err != nil {
		return fail(badRequest("the offer was not accepted: %v", err))
	}
	// The bot's audio rides on transceiver 0 (mid "0"): AddTrack after the
	// offer reuses the first audio transceiver, making it sendrecv.
	p.track, err = codec.NewTrack(srv.codec.Capability(), "audio", "bot", codec.FrameDuration)
	if err != nil {
		return fail(fmt.Errorf("webrtc: audio track: %w", err))
	}
	sender, err := pc.AddTrack(p.track)
	if err != nil {
		return fail(fmt.Errorf("webrtc: adding the audio track: %w", err))
	}
	if p.enter() {
		go func() {
			defer p.leave()
			drainRTCP(sender) // the client's receiver reports on the bot's audio
		}()
	}
	ans, err := s.answer(ctx, p)
	if err != nil {
		return fail(err)
	}
	return p, ans, nil
}

// drainRTCP reads a sender's or receiver's RTCP until the connection
// closes, for the interceptors that watch it (rtcpreport).
func drainRTCP(r interface {
	Read([]byte) (int, interceptor.Attributes, error)
}) {
	buf := make([]byte, 1500)
	for {
		if _, _, err := r.Read(buf); err != nil {
			return
		}
	}
}

// answer creates and applies an answer, waits for ICE gathering and
// returns the local description with every candidate in it.
func (s *Session) answer(ctx context.Context, p *peer) (answerBody, error) {
	answer, err := p.pc.CreateAnswer(nil)
	if err != nil {
		return answerBody{}, fmt.Errorf("webrtc: creating the answer: %w", err)
	}
	gathered := pion.GatheringCompletePromise(p.pc)
	if err := p.pc.SetLocalDescription(answer); err != nil {
		return answerBody{}, fmt.Errorf("webrtc: applying the answer: %w", err)
	}
	timer := time.NewTimer(s.srv.opts.GatherTimeout)
	defer timer.Stop()
	select {
	case <-gathered:
	case <-timer.C:
		s.log.Warn("ICE gathering did not complete; answering with the candidates so far",
			zap.Duration("timeout", s.srv.opts.GatherTimeout))
	case <-ctx.Done():
		return answerBody{}, fmt.Errorf("webrtc: the offer request ended while gathering: %w", ctx.Err())
	}
	ld := p.pc.LocalDescription()
	return answerBody{SDP: ld.SDP, Type: "answer", PCID: p.id}, nil
}

// restart replaces the peer connection pcID (restart_pc:true): the client
// built a new RTCPeerConnection; the pipeline and session state stay. Only
// the current pc_id may restart: one a restart has retired is refused.
func (s *Session) restart(ctx context.Context, offer, pcID string) (answerBody, error) {
	s.offerMu.Lock()
	defer s.offerMu.Unlock()
	if s.ctx.Err() != nil {
		return answerBody{}, &unavailableError{"the session is ending", 1}
	}
	if cur := s.PCID(); cur != pcID {
		// A restart retired pcID between the server's lookup and here.
		return answerBody{}, badRequest("pc_id %s is not the session's current peer connection", pcID)
	}
	p, ans, err := s.newPeer(ctx, offer)
	if err != nil {
		return ans, err
	}
	old, ok := s.adopt(p)
	if !ok {
		p.close()
		return answerBody{}, &unavailableError{"the session ended during the restart", 1}
	}
	s.messageLog().Info("peer connection replaced", zap.String("pc_id", p.id))
	if old != nil {
		s.bg.Add(1)
		go func() {
			defer s.bg.Done()
			old.close()
			s.mu.Lock()
			for i, q := range s.peers {
				if q == old {
					s.peers = append(s.peers[:i], s.peers[i+1:]...)
					break
				}
			}
			s.mu.Unlock()
		}()
	}
	return ans, nil
}

// renegotiate answers a new offer on the current peer connection
// (restart_pc:false); the pc_id stays.
func (s *Session) renegotiate(ctx context.Context, offer, pcID string) (answerBody, error) {
	s.offerMu.Lock()
	defer s.offerMu.Unlock()
	var parsed sdp.SessionDescription
	if err := parsed.UnmarshalString(offer); err != nil {
		return answerBody{}, badRequest("the offer SDP does not parse: %v", err)
	}
	s.mu.Lock()
	p := s.cur
	s.mu.Unlock()
	if p == nil || s.ctx.Err() != nil {
		return answerBody{}, &unavailableError{"the session is ending", 1}
	}
	if p.id != pcID {
		// A restart retired pcID between the server's lookup and here.
		return answerBody{}, badRequest("pc_id %s is not the session's current peer connection", pcID)
	}
	offer, err := s.filterOffer(offer)
	if err != nil {
		return answerBody{}, err
	}
	if err := p.pc.SetRemoteDescription(pion.SessionDescription{Type: pion.SDPTypeOffer, SDP: offer}); err != nil {
		// A 5xx makes the client rebuild its peer connection, which recovers.
		return answerBody{}, fmt.Errorf("webrtc: renegotiating pc %s: %w", pcID, err)
	}
	return s.answer(ctx, p)
}

// addCandidates adds trickled client candidates to the current peer
// connection, as far as the ICE policy lets them (see [ICEPolicy]): a
// request over MaxCandidatesPerRequest is refused whole, candidates the
// address rule drops or past MaxCandidates are left out, malformed ones
// make a 400 that names them. Stale candidates (from before a restart) are
// dropped by pion.
func (s *Session) addCandidates(cands []pion.ICECandidateInit) error {
	if lim := s.ice.MaxCandidatesPerRequest; lim >= 0 && len(cands) > lim {
		return tooManyCandidates("the request", len(cands), lim)
	}
	s.mu.Lock()
	p := s.cur
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	var (
		errs    []error
		dropped map[verdict]int
	)
	for _, c := range cands {
		if c.Candidate != "" { // "" is the end of candidates, for pion
			cand, v := s.ice.judge(c.Candidate)
			if v == malformed {
				errs = append(errs, fmt.Errorf("candidate %q: not a candidate attribute", clip(c.Candidate, 120)))
				continue
			}
			if v == accepted {
				ok, full := s.remote.admit(cand, s.ice.MaxCandidates)
				if full {
					s.log.Warn("the client's candidates reached the session's limit; dropping the rest",
						zap.String("pc_id", p.id), zap.Int("limit", s.ice.MaxCandidates))
				}
				if !ok {
					v = overCap
				}
			}
			if v != accepted {
				if dropped == nil {
					dropped = map[verdict]int{}
				}
				dropped[v]++
				continue
			}
		}
		if err := p.pc.AddICECandidate(c); err != nil {
			errs = append(errs, fmt.Errorf("candidate %q: %w", clip(c.Candidate, 120), err))
		}
	}
	if dropped != nil {
		s.messageLog().Debug("dropped trickled candidates", zap.String("pc_id", p.id),
			zap.String("dropped", droppedSummary(dropped)))
	}
	if len(errs) > 0 {
		return badRequest("%v", errors.Join(errs...))
	}
	return nil
}

// filterOffer applies the ICE policy to the candidates of an offer,
// counted against the session's budget.
func (s *Session) filterOffer(offer string) (string, error) {
	filtered, dropped, err := s.ice.filterOfferCandidates(offer, s.remote)
	if err != nil {
		return "", err
	}
	if dropped != nil {
		s.messageLog().Debug("dropped offer candidates", zap.String("dropped", droppedSummary(dropped)))
	}
	return filtered, nil
}

// onDataChannel adopts the client's channel ("chat"); the server never
// creates one.
func (s *Session) onDataChannel(p *peer, dc *pion.DataChannel) {
	p.mu.Lock()
	if p.dc != nil {
		p.mu.Unlock()
		s.messageLog().Warn("ignoring a second data channel", zap.String("label", clip(dc.Label(), 64)))
		return
	}
	p.dc = dc
	p.mu.Unlock()
	if dc.Label() != "chat" {
		s.log.Info("the client's data channel is not labelled chat", zap.String("label", clip(dc.Label(), 64)))
	}
	// The drain goroutine refills the send buffer when it is half empty.
	dc.SetBufferedAmountLowThreshold(uint64(s.srv.opts.MaxBufferedBytes / 2))
	dc.OnBufferedAmountLow(s.wake)
	dc.OnOpen(func() { s.channelOpen(p, dc) })
	dc.OnMessage(func(m pion.DataChannelMessage) {
		// pion closes the channel for a message of max-message-size or
		// more only while its read buffer is smaller (it keeps the buffer
		// it grew for an earlier message): the limit is held here.
		if limit := s.srv.opts.MaxMessageBytes; len(m.Data) >= limit {
			s.messageLog().Warn("the client sent a message over the announced max-message-size; ending the session",
				zap.Int("bytes", len(m.Data)), zap.Int("limit", limit))
			s.end(fmt.Sprintf("the client sent a data-channel message of %d bytes; the limit is %d (max-message-size)", len(m.Data), limit), false)
			return
		}
		s.onMessage(m.Data)
	})
	dc.OnClose(func() {
		if s.current(p) {
			s.end("the client closed the data channel", true)
		}
	})
}

// channelOpen starts sending on p's channel, first what was queued.
func (s *Session) channelOpen(p *peer, dc *pion.DataChannel) {
	p.opened.Store(true)
	p.timeout.Stop()
	if !s.connected.Swap(true) {
		s.srv.connected(s)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != p || s.closing {
		return
	}
	s.dc = dc
	s.flushLocked(time.Now())
	if !s.draining {
		s.draining = true
		s.bg.Add(1)
		go s.drain()
	}
	s.wake()
	s.log.Debug("data channel open", zap.String("pc_id", p.id))
}

// onMessage handles one client message: pings feed
// liveness, anything else first passes the rate limit (InboundLimits);
// then signalling is handled here, JSON goes to the pipeline, anything
// else is dropped. Its log lines are sampled (messageLog): a client
// cannot make one line per message.
func (s *Session) onMessage(msg []byte) {
	if isPing(msg) {
		s.touch()
		return
	}
	if ok, report := s.limiter.Admit(len(msg), time.Now()); !ok {
		s.refused(msg, report)
		return
	}
	kind, sig := classify(msg)
	switch kind {
	case kindSignalling:
		s.onSignalling(sig)
	case kindInvalid:
		s.messageLog().Info("dropping a data-channel message that is not JSON", zap.Int("bytes", len(msg)))
	case kindApp:
		s.deliver(msg)
	}
}

func (s *Session) onSignalling(sig *signalling) {
	switch sig.Message.Type {
	case "trackStatus":
		if sig.Message.ReceiverIndex == nil || sig.Message.Enabled == nil {
			s.messageLog().Info("trackStatus without receiver_index or enabled")
			return
		}
		i, on := *sig.Message.ReceiverIndex, *sig.Message.Enabled
		s.mu.Lock()
		if i >= 0 && i < len(s.tracks) {
			s.tracks[i] = on
		}
		s.mu.Unlock()
		if i == 0 {
			s.micOff.Store(!on)
		}
	default:
		s.messageLog().Info("unknown signalling message", zap.String("type", clip(sig.Message.Type, 64)))
	}
}

// touch records a ping: the client is alive for another PingTimeout.
func (s *Session) touch() {
	d := s.srv.opts.PingTimeout
	if d < 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return
	}
	if s.silent {
		s.silent = false
		if s.grace != nil { // nil without RestartGrace: the session is ending
			s.grace.Stop()
		}
		s.log.Info("the client is back")
	}
	if s.watchdog == nil {
		s.watchdog = time.AfterFunc(d, func() { s.vanish(d) })
		return
	}
	s.watchdog.Reset(d)
}

// vanish handles a client that stopped pinging: the session ends, at once
// or after RestartGrace if no restart brings the pings back.
func (s *Session) vanish(d time.Duration) {
	grace := s.srv.opts.RestartGrace
	s.mu.Lock()
	if s.closing || s.silent {
		s.mu.Unlock()
		return
	}
	s.silent = true
	if grace <= 0 {
		s.mu.Unlock()
		s.end(fmt.Sprintf("the client vanished: no ping for %v", d), true)
		return
	}
	defer s.mu.Unlock()
	s.log.Info("the client vanished; waiting for a restart", zap.Duration("grace", grace))
	reason := fmt.Sprintf("the client vanished: no ping for %v and no restart within %v", d, grace)
	if s.grace == nil {
		s.grace = time.AfterFunc(grace, func() { s.end(reason, true) })
		return
	}
	s.grace.Reset(grace)
}

// Vanished reports whether the client has sent no ping for PingTimeout
// (it may still come back within RestartGrace).
func (s *Session) Vanished() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.silent
}

// deliver hands a client message to the pipeline, or queues it until the
// input transport is set up (an early client-ready must not be lost),
// within Options.MaxPendingMessages and InboundLimits.MaxQueuedBytes. s.mu
// keeps the messages in order against the replay in attachInput.
func (s *Session) deliver(msg []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deliverLocked(&frames.InputTransportMessage{Message: msg}, len(msg))
}

// deliverLocked is deliver for frame f of n message bytes: a client
// message or a refusal. It reports whether f was pushed or queued.
func (s *Session) deliverLocked(f frames.Frame, n int) bool {
	if s.inputOn {
		s.in.out.Push(f, frames.Downstream)
		return true
	}
	if len(s.inbox) >= s.srv.opts.MaxPendingMessages || s.inboxBytes+n > s.limiter.Limits().MaxQueuedBytes {
		s.inDropped++
		return false
	}
	s.inbox = append(s.inbox, f)
	s.inboxBytes += n
	return true
}

// attachInput makes out where the input transport pushes (its outlet, or
// a recorder in the offline tests) and replays the client messages that
// arrived before. It runs before the pipeline's Start, which is what lets
// the audio path read in.out without a lock (see audioReader.packet).
func (s *Session) attachInput(out pipeline.Pusher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.in.out = out
	for _, f := range s.inbox {
		out.Push(f, frames.Downstream)
	}
	s.inbox, s.inboxBytes = nil, 0
	s.inputOn = true
}

// writeAudio sends one encoded frame on the current peer's track. Before
// the track is bound (not connected yet) pion drops it. Only the output's
// player calls it.
func (s *Session) writeAudio(payload []byte) error {
	t := s.track.Load()
	if t == nil {
		return nil
	}
	return t.WriteFrame(payload)
}

// skipAudio advances the current track's media clock by n frames the
// player could not send in time.
func (s *Session) skipAudio(n int) {
	if t := s.track.Load(); t != nil {
		t.Skip(n)
	}
}

// Renegotiate asks the client to send a new offer on the same peer
// connection (the "renegotiate" signalling message). An audio bot never
// needs it; it exists for bots that add video later.
func (s *Session) Renegotiate() { s.sendControl(renegotiateMessage) }
