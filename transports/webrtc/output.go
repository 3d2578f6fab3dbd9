package webrtc

import (
	"context"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/webrtc/internal/codec"
)

// OutputOptions configure the output transport of every session.
type OutputOptions struct {
	// StopSpeakingAfter is how long the bot's audio must have stopped before
	// BotStoppedSpeaking. Default: 350 ms (Pipecat's BOT_VAD_STOP_SECS).
	StopSpeakingAfter time.Duration
	// BotSpeakingInterval is the period of BotSpeaking while audio plays.
	// Default: 200 ms.
	BotSpeakingInterval time.Duration
	// OpusBitrate is the target bitrate of the bot's audio in bits per
	// second. Default: 32,000, what browsers send for a microphone.
	//
	// The encoder is tuned for playback (libopus's audio application, as
	// reference servers encode bot audio): from about 24 kbps it uses
	// Opus's transform coder, CELT, which costs less than half the CPU of
	// the speech coder a microphone's encoder uses; below that libopus
	// switches to the speech coder by itself.
	OpusBitrate int
	// OpusComplexity trades the Opus encoder's CPU for quality, from 1 to
	// 10, while the machine keeps up. Default: 5. Encoding is most of what
	// a streaming session costs, and complexity 0 costs about a third of
	// 5 (on a 2-core EPYC VM, 22 against 75 µs per 20 ms of a tone at
	// 24 kHz).
	// -1 keeps libopus's own default and turns adaptation off.
	//
	// When the outputs' 20 ms ticks start running late because the machine
	// is short of CPU, every output of the server lowers its complexity,
	// down to 0, and raises it back a step at a time once the ticks have
	// been on time for a few seconds and through a garbage collection: an
	// overloaded server sounds slightly coarser instead of cutting out.
	OpusComplexity int
	// FixedOpusComplexity keeps OpusComplexity under load.
	FixedOpusComplexity bool
}

func (o OutputOptions) withDefaults() OutputOptions {
	if o.StopSpeakingAfter <= 0 {
		o.StopSpeakingAfter = 350 * time.Millisecond
	}
	if o.BotSpeakingInterval <= 0 {
		o.BotSpeakingInterval = 200 * time.Millisecond
	}
	if o.OpusBitrate <= 0 {
		o.OpusBitrate = 32000
	}
	if o.OpusComplexity == 0 {
		o.OpusComplexity = 5
	}
	o.OpusComplexity = min(o.OpusComplexity, 10)
	return o
}

// Output is the session's output transport, the last processor of its
// pipeline (or the one before the assistant aggregator). It plays audio
// frames (frames.OutputAudioRaw, frames.TTSAudioRaw) as 20 ms codec frames
// paced by the wall clock, sending silence while idle, and emits
// BotStartedSpeaking/BotStoppedSpeaking (both ways) and BotSpeaking.
//
// Ordered frames wait in one queue behind the audio ahead of them and are
// released downstream when that audio has been sent, so processors after
// the output see text as it is spoken. An interruption clears the queue at
// once, keeping uninterruptible frames. Transport messages go to the client
// as text: urgent ones at once, ordered ones in turn.
type Output struct {
	s    *Session
	opts OutputOptions
	q    pipeline.FrameQueue
	// outlet carries the player's frames into the pipeline and runs the
	// player as background work the task owns.
	outlet pipeline.Outlet
	// out is where the player's frames go: &outlet, or a recorder in the
	// offline tests and benchmarks.
	out pipeline.Pusher
	log *zap.Logger

	// mu orders what the player pushes against interruptions, and guards
	// the fields below.
	mu       sync.Mutex
	epoch    uint64
	speaking bool
	stop     chan struct{}
	done     chan struct{}

	sent       atomic.Uint64
	underruns  atomic.Uint64
	maxLate    atomic.Int64 // nanoseconds
	complexity atomic.Int32 // the encoder's complexity, for Stats
	assisted   atomic.Uint64
}

// OutputTransport marks the processor as an output transport, so observers
// (the RTVI observer) can recognise its hop.
func (o *Output) OutputTransport() {}

// Name implements pipeline.Namer.
func (o *Output) Name() string { return "WebRTCOutput#" + o.s.id[:8] }

// Setup implements pipeline.Setupper: it attaches the output's outlet.
func (o *Output) Setup(_ context.Context, su pipeline.Setup) error {
	su.Attach(&o.outlet)
	o.log = su.Logger
	return nil
}

// Cleanup implements pipeline.Cleaner: it stops the player.
func (o *Output) Cleanup(context.Context) error {
	o.stopPlayer()
	return nil
}

// OutputStats counts the output's audio.
type OutputStats struct {
	// FramesSent counts 20 ms frames sent, silence included.
	FramesSent uint64
	// Underruns counts frames sent more than a frame (20 ms) after they
	// were due, when the client may have heard a gap, and frames skipped
	// after a stall too long to make up.
	Underruns uint64
	// MaxLate is the most the output's 20 ms clock has run late since the
	// output started, stalls it skipped included: how much of a client's
	// jitter buffer the worst stall took (a browser's holds a few tens of
	// milliseconds).
	MaxLate time.Duration
	// Queued is the number of frames waiting to be played or released.
	Queued int
	// QueueHighWater is the most frames that have waited at once.
	QueueHighWater int
	// OpusComplexity is the complexity the encoder uses, or -1 before the
	// output has started and for codecs that have none.
	OpusComplexity int
	// AssistedFrames counts frames (among FramesSent) that another of the
	// server's goroutines sent because the output's own had not run in
	// time (5 ms past the frame's time): a measure of how far the Go
	// scheduler lags behind the clock.
	AssistedFrames uint64
}

// Stats returns the output's counters.
func (o *Output) Stats() OutputStats {
	return OutputStats{
		FramesSent: o.sent.Load(), Underruns: o.underruns.Load(), MaxLate: time.Duration(o.maxLate.Load()),
		Queued: o.q.Len(), QueueHighWater: o.q.HighWater(), OpusComplexity: int(o.complexity.Load()), AssistedFrames: o.assisted.Load(),
	}
}

// ProcessFrame implements pipeline.Processor.
func (o *Output) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	switch f := f.(type) {
	case *frames.Start:
		h.Forward()
		o.startPlayer(f.AudioOutSampleRate)
		return nil
	case *frames.Cancel:
		o.stopPlayer()
		o.q.Clear()
		return nil
	case *frames.Interruption:
		o.mu.Lock()
		o.epoch++
		o.q.Reset()
		o.stopSpeakingLocked()
		h.Forward()
		o.mu.Unlock()
		return nil
	}
	if dir == frames.Upstream {
		return nil
	}
	if r, ok := f.(*frames.InputTransportRefused); ok && r.End != "" {
		// What the pipeline said about it is queued: the session ends.
		h.Consume()
		o.s.end(r.End, false)
		return nil
	}
	if m, ok := f.(*frames.OutputTransportMessageUrgent); ok {
		h.Consume()
		o.s.SendSuperseding(m.Message, m.Supersede)
		return nil
	}
	if f.Lane().Ordered() {
		h.Consume()
		o.q.Push(f, dir)
		o.s.srv.assist.help()
	}
	return nil
}

func (o *Output) startPlayer(rate int) {
	if rate <= 0 {
		rate = 24000
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done != nil {
		select {
		case <-o.done: // finished after a Stop: start again
		default:
			return
		}
	}
	stop, done := make(chan struct{}), make(chan struct{})
	o.stop, o.done = stop, done
	p := &player{o: o, c: o.s.srv.codec, defaultRate: rate}
	// The task owns the player: its context ends on Cancel and at
	// teardown, and the task waits for it.
	err := o.outlet.Go("player", func(ctx context.Context) error {
		p.run(ctx, stop, done)
		return nil
	})
	if err != nil { // the task has ended: nothing to play for
		close(done)
	}
}

// stopPlayer stops the player and waits for it; it is idempotent and also
// reaps a player that finished by itself after End or Stop.
func (o *Output) stopPlayer() {
	o.mu.Lock()
	stop, done := o.stop, o.done
	o.stop, o.done = nil, nil
	o.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-done
}

// push sends a frame on from the player; o.mu is held.
func (o *Output) push(f frames.Frame, dir frames.Direction) { o.out.Push(f, dir) }

func (o *Output) startSpeakingLocked() {
	if o.speaking {
		return
	}
	o.speaking = true
	pipeline.Broadcast(o.out, func() *frames.BotStartedSpeaking { return &frames.BotStartedSpeaking{} })
}

func (o *Output) stopSpeakingLocked() {
	if !o.speaking {
		return
	}
	o.speaking = false
	pipeline.Broadcast(o.out, func() *frames.BotStoppedSpeaking { return &frames.BotStoppedSpeaking{} })
}

// player is the goroutine that paces the output: every 20 ms it takes the
// next frame of audio from the queue (or silence), encodes and sends it.
// Its fields belong to whoever holds its state: the player's goroutine,
// or a goroutine sending an overdue frame in its place (tickAssist).
type player struct {
	o           *Output
	c           codec.Codec
	enc         codec.Encoder
	complexity  int // the complexity last asked of the encoder; -1 before
	encRate     int // the encoder's PCM rate: the output rate when the codec takes it
	defaultRate int
	epoch       uint64

	pending []int16 // audio at encRate, not yet sent
	mono    []int16 // scratch: one frame's samples, downmixed
	rs      resampler
	rsRate  int
	payload []byte

	silentTicks   int
	speakingTicks int
	// speakingFrames are the BotSpeaking pairs the player sends every
	// 200 ms while audio plays, allocated in blocks so that the player,
	// the one goroutine whose timing matters, rarely allocates (see
	// frames.Block).
	speakingFrames frames.Block[frames.BotSpeaking]

	// state says who holds the fields above and below (see acquire).
	state atomic.Int32
	// next is when the next frame is due, finished whether End or Stop
	// was released.
	next     time.Time
	finished bool
	// due is next on the tickAssist's clock, for assistants to read.
	due atomic.Int64
}

// run paces the output until stop is closed, ctx ends (the task's
// Cancel or teardown) or the player has released End or Stop.
func (p *player) run(ctx context.Context, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	o := p.o
	// Opus encodes from the pipeline's 24 kHz itself; PCMU needs 8 kHz.
	if err := p.openEncoder(); err != nil {
		// Keep the clock and the order of frames; the audio becomes silence.
		o.out.PushError(err)
	}
	assist := o.s.srv.assist
	p.next = time.Now()
	p.publishDue()
	assist.add(p)
	defer p.close()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		if !p.acquire() {
			// Another goroutine is sending this player's frame.
			timer.Reset(assistRetry)
			continue
		}
		p.step(time.Now(), false)
		next, finished := p.next, p.finished
		p.release()
		if finished {
			return
		}
		assist.help()
		timer.Reset(time.Until(next)) // at once while catching up
	}
}

// Who may run a player's clock: its own goroutine or an assistant
// (tickAssist), one at a time, until the player closes.
const (
	playerFree int32 = iota
	playerBusy
	playerClosed
)

// acquire takes the player's clock, its encoder and the other fields step
// uses; it fails while another goroutine holds them or after close.
func (p *player) acquire() bool { return p.state.CompareAndSwap(playerFree, playerBusy) }

// release gives back what acquire took.
func (p *player) release() { p.state.Store(playerFree) }

// close waits until no assistant holds the player and bars later ones, so
// that nothing is sent after the player has stopped, then takes it out of
// the assist.
func (p *player) close() {
	for !p.state.CompareAndSwap(playerFree, playerClosed) {
		time.Sleep(50 * time.Microsecond) // an assistant sends for at most a few frames
	}
	p.o.s.srv.assist.remove(p)
}

// publishDue makes the time of the next frame visible to assistants.
func (p *player) publishDue() { p.due.Store(p.o.s.srv.assist.since(p.next)) }

// step sends the frame due at p.next if it is due at now, and reports
// whether it did; assisted tells that another goroutine than the player's
// runs it. The caller holds the player (acquire).
//
// The player keeps a media clock: frame k is due at start + k×period. A
// frame that is late is sent at once and the following ones back to back
// until the clock has caught up, so a scheduling stall delays the audio
// for a moment instead of shifting it, and the client's latency, for good.
// A stall longer than maxCatchUp is given up: its 20 ms slots are skipped
// (the track's timestamps jump over them) and the clock restarts from now;
// queued audio is kept and plays from there, so no speech is lost.
func (p *player) step(now time.Time, assisted bool) bool {
	if p.finished || now.Before(p.next) {
		return false
	}
	o := p.o
	period := codec.FrameDuration
	late := now.Sub(p.next)
	if late > time.Duration(o.maxLate.Load()) {
		o.maxLate.Store(int64(late)) // only the holder of the player writes it
	}
	underruns := 0
	if late > maxCatchUp {
		missed := int(late / period)
		underruns += missed
		o.s.skipAudio(missed)
		p.next = p.next.Add(time.Duration(missed) * period)
		late = now.Sub(p.next)
	}
	if late > period {
		underruns++
	}
	if underruns > 0 {
		// Counted as they happen, so a scrape during a session sees them.
		o.underruns.Add(uint64(underruns))
		o.s.srv.metrics.underruns.Add(o.s.ctx, int64(underruns))
	}
	if g := o.s.srv.governor; g != nil {
		p.setComplexity(g.tick(now, late, assisted))
	}
	if assisted {
		o.assisted.Add(1)
		o.s.srv.metrics.lateFrames.Add(o.s.ctx, 1)
	}
	p.finished = p.tick(period)
	p.next = p.next.Add(period)
	p.publishDue()
	return true
}

// openEncoder makes the player's encoder at the rate closest to the
// pipeline's output rate that the codec takes, tuned for playback at the
// configured bitrate and complexity. If the codec fails, the encoder sends
// silence and the error is returned.
func (p *player) openEncoder() error {
	p.encRate = p.c.NativeRate(p.defaultRate)
	p.payload = make([]byte, p.c.MaxPayload)
	p.complexity = -1
	enc, err := p.c.NewEncoder(p.encRate, codec.EncoderOptions{Application: codec.Playback, Bitrate: p.o.opts.OpusBitrate})
	if err != nil {
		p.enc = silentEncoder{p.c.Silence}
		return err
	}
	p.enc = enc
	if p.o.opts.OpusComplexity >= 0 {
		p.setComplexity(p.o.opts.OpusComplexity)
	}
	return nil
}

// maxCatchUp is the longest stall the player makes up by sending the
// frames it owes back to back; a browser's jitter buffer absorbs such a
// burst. Past it, the missed frames are skipped.
const maxCatchUp = 200 * time.Millisecond

// setComplexity sets the encoder's complexity if it has one and it differs.
func (p *player) setComplexity(c int) {
	if c == p.complexity {
		return
	}
	cs, ok := p.enc.(codec.ComplexitySetter)
	if !ok {
		return
	}
	// Either way this level is not asked for again, so a failure is logged
	// once rather than on every tick.
	p.complexity = c
	if err := cs.SetComplexity(c); err != nil {
		p.o.log.Warn("encoder complexity", zap.Int("complexity", c), zap.Error(err))
		return
	}
	p.o.complexity.Store(int32(c))
}

// tick sends one frame. It returns true after releasing End or Stop.
func (p *player) tick(period time.Duration) (finished bool) {
	o := p.o
	n := codec.FrameSamples(p.encRate)
	o.mu.Lock()
	if o.epoch != p.epoch {
		// Interrupted: what was taken from the queue is stale.
		p.epoch = o.epoch
		p.pending = p.pending[:0]
		if p.rs != nil {
			p.rs.Reset()
		}
	}
	var last frames.Frame
fill:
	for len(p.pending) < n {
		f, dir, ok := o.q.Pop()
		if !ok {
			break
		}
		switch f := f.(type) {
		case *frames.OutputAudioRaw:
			p.add(&f.Audio)
			o.push(f, dir) // for processors after the output (recorders)
		case *frames.TTSAudioRaw:
			p.add(&f.Audio)
			o.push(f, dir)
		case *frames.OutputTransportMessage:
			o.s.SendSuperseding(f.Message, f.Supersede)
		case *frames.End, *frames.Stop:
			last = f
			break fill
		default:
			o.push(f, dir)
		}
	}
	audio := len(p.pending) > 0
	var payload []byte
	if audio {
		take := min(n, len(p.pending))
		frame := p.pending[:take]
		if take < n {
			// The queue ran dry mid-frame: pad with silence.
			for len(p.pending) < n {
				p.pending = append(p.pending, 0)
			}
			frame = p.pending[:n]
		}
		k, err := p.enc.Encode(frame, p.payload)
		rest := copy(p.pending, p.pending[n:])
		p.pending = p.pending[:rest]
		if err != nil {
			o.log.Warn("encoding audio", zap.Error(err))
			payload = p.c.Silence
		} else {
			payload = p.payload[:k]
		}
		p.silentTicks = 0
		o.startSpeakingLocked()
		if p.speakingTicks++; p.speakingTicks*int(period) >= int(o.opts.BotSpeakingInterval) {
			p.speakingTicks = 0
			pipeline.Broadcast(o.out, p.speakingFrames.New)
		}
	} else {
		payload = p.c.Silence
		p.speakingTicks = 0
		if p.silentTicks++; o.speaking && p.silentTicks*int(period) >= int(o.opts.StopSpeakingAfter) {
			o.stopSpeakingLocked()
		}
	}
	if last != nil {
		o.stopSpeakingLocked()
		o.push(last, frames.Downstream)
	}
	o.mu.Unlock()
	if err := o.s.writeAudio(payload); err != nil {
		o.log.Debug("writing audio", zap.Error(err))
	}
	o.sent.Add(1)
	return last != nil
}

// add converts one audio frame to mono at the encoder's rate and appends
// it to the pending samples.
func (p *player) add(a *frames.Audio) {
	ch := a.Channels
	if ch <= 0 {
		ch = 1
	}
	rate := a.SampleRate
	if rate <= 0 {
		rate = p.defaultRate
	}
	nf := len(a.PCM) / (2 * ch)
	mono := p.pending
	if rate != p.encRate {
		mono = p.mono[:0]
	}
	for i := range nf {
		var sum int32
		for c := range ch {
			sum += int32(int16(binary.LittleEndian.Uint16(a.PCM[(i*ch+c)*2:])))
		}
		mono = append(mono, int16(sum/int32(ch)))
	}
	if rate == p.encRate {
		p.pending = mono
		return
	}
	p.mono = mono
	if p.rs == nil || p.rsRate != rate {
		rs, err := newResampler(rate, p.encRate)
		if err != nil {
			p.o.log.Warn("cannot play audio at this rate", zap.Int("rate", rate), zap.Error(err))
			return
		}
		p.rs, p.rsRate = rs, rate
	}
	p.pending = p.rs.ResampleSamples(p.pending, p.mono)
}

// silentEncoder stands in when the codec cannot be set up: every frame is
// the codec's silence, so ordered frames and End still flow in step.
type silentEncoder struct{ silence []byte }

func (e silentEncoder) Encode(_ []int16, out []byte) (int, error) { return copy(out, e.silence), nil }
