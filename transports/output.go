package transports

import (
	"context"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// FrameDuration is the period of an Output's clock: it plays one frame of
// this length per tick, the packet duration of WebRTC audio and of the
// telephony media streams.
const FrameDuration = 20 * time.Millisecond

// FrameSamples returns the samples of one FrameDuration frame at
// rate.
func FrameSamples(rate int) int { return rate * int(FrameDuration/time.Millisecond) / 1000 }

// Conn is the client connection an [Output] plays to: the part of a
// transport that knows the wire. Its methods are called from the output's
// clock (WriteAudio, and SendMessage for ordered messages) and from the
// pipeline's goroutine (SendMessage for urgent messages, End); an
// implementation serialises what needs it.
type Conn interface {
	// OpenAudio is called once when the output starts, with the
	// pipeline's output rate; it returns the rate at which WriteAudio
	// takes PCM (a codec's nearest rate, the client's rate). After an
	// error, which the output pushes into the pipeline, the output goes
	// on at the pipeline's rate with its clock and the order of frames,
	// writing only silence.
	OpenAudio(rate int) (int, error)
	// WriteAudio plays one FrameDuration frame of mono PCM at the rate
	// OpenAudio returned; pcm is nil for a tick with nothing to play (a
	// codec sends its silence, a socket may send nothing). pcm is the
	// output's: it is valid only during the call. t tells how the clock
	// stands.
	WriteAudio(pcm []int16, t Tick) error
	// SendMessage sends a transport message to the client: in order with
	// the audio for frames.OutputTransportMessage, at once for
	// frames.OutputTransportMessageUrgent. supersede is the frame's
	// Supersede key.
	SendMessage(msg []byte, supersede uint64)
	// End ends the session for reason (a client refused for sending far
	// over its limits, once what the pipeline said about it has gone
	// out).
	End(reason string)
}

// AudioFlusher is implemented by a Conn whose client buffers audio it has
// been sent (a telephony provider, a socket client's player): FlushAudio
// is called on an interruption, after the output has dropped its own
// queue, to drop what the client still holds (a provider's "clear").
type AudioFlusher interface {
	FlushAudio()
}

// PlaybackReporter is implemented by a Conn whose client tells how far it
// has played what it was sent (a telephony provider echoing marks). The
// output then asks for acknowledgements (Tick.Mark) and holds the frames
// queued behind audio (the text being spoken, End) until the client has
// played that far, or OutputOptions.MaxPlaybackDelay after the audio was
// written, so that what comes after the output (the assistant's context,
// the end of the call) follows what the caller heard; BotStoppedSpeaking
// waits for it too. The Conn reports with [Output.Played].
type PlaybackReporter interface {
	ReportsPlayback()
}

// Tick tells a Conn's WriteAudio how the output's clock stands.
type Tick struct {
	// Now is when the output's clock read the time for this frame.
	Now time.Time
	// Late is how much after its due time the frame is written.
	Late time.Duration
	// Skipped is the number of frame slots given up before this one after
	// a stall too long to make up: a codec's media clock jumps over them.
	Skipped int
	// Underruns is the number of frames, Skipped included, that the
	// client may have heard as a gap at this tick (see
	// OutputStats.Underruns).
	Underruns int
	// Assisted is true when another goroutine than the output's own
	// writes the frame, because the output's had not run in time (see
	// Assist).
	Assisted bool
	// Position is the number of audio samples (at the Conn's rate)
	// written before this frame since the output started; silent ticks
	// count none. The frame ends at Position+len(pcm).
	Position int64
	// Mark, for a PlaybackReporter, asks the Conn to have the client
	// acknowledge playback up to the end of this frame (a provider's
	// mark, sent after the frame's audio, or alone on a silent tick), and
	// to report it with Output.Played(Position+len(pcm)).
	Mark bool
}

// OutputOptions configure an Output.
type OutputOptions struct {
	// StopSpeakingAfter is how long the bot's audio must have stopped before
	// BotStoppedSpeaking. Default: 350 ms (Pipecat's BOT_VAD_STOP_SECS).
	StopSpeakingAfter time.Duration
	// BotSpeakingInterval is the period of BotSpeaking while audio plays.
	// Default: 200 ms.
	BotSpeakingInterval time.Duration
	// DefaultSampleRate is the output rate when frames.Start gives none,
	// and the rate of audio frames that carry none. Default: 24000.
	DefaultSampleRate int
	// Assist, when not nil, is the server's Assist, which sends this
	// output's frames from other goroutines when its own runs late.
	Assist *Assist
	// MaxPlaybackDelay bounds how long a PlaybackReporter's frames wait
	// for the client's acknowledgement after their audio was written;
	// past it they are released as if played (a client that lost a mark
	// must not stall the pipeline). Default: 2s.
	MaxPlaybackDelay time.Duration
	// Name is the processor's name in logs and telemetry. Default:
	// "Output".
	Name string
}

func (o OutputOptions) withDefaults() OutputOptions {
	if o.StopSpeakingAfter <= 0 {
		o.StopSpeakingAfter = 350 * time.Millisecond
	}
	if o.BotSpeakingInterval <= 0 {
		o.BotSpeakingInterval = 200 * time.Millisecond
	}
	if o.DefaultSampleRate <= 0 {
		o.DefaultSampleRate = 24000
	}
	if o.MaxPlaybackDelay <= 0 {
		o.MaxPlaybackDelay = 2 * time.Second
	}
	if o.Name == "" {
		o.Name = "Output"
	}
	return o
}

// Output is the output transport of a session, the last processor of its
// pipeline (or the one before the assistant aggregator), whatever the
// wire. It plays audio frames (frames.OutputAudioRaw, frames.TTSAudioRaw)
// in FrameDuration frames paced by the wall clock into its Conn, and
// emits BotStartedSpeaking/BotStoppedSpeaking (both ways) and
// BotSpeaking.
//
// Ordered frames wait in one queue behind the audio ahead of them and are
// released downstream when that audio has been played: written on the
// clock or, for a Conn that is a PlaybackReporter, acknowledged by the
// client. So processors after the output see text as it is heard. An
// interruption clears the queue at once, keeping uninterruptible frames.
// Transport messages go to the client: urgent ones at once, ordered ones
// in turn.
type Output struct {
	conn Conn
	opts OutputOptions
	q    pipeline.FrameQueue
	// outlet carries the player's frames into the pipeline and runs the
	// player as background work the task owns.
	outlet pipeline.Outlet
	// out is where the player's frames go: &outlet, or a recorder in
	// benchmarks.
	out pipeline.Pusher
	log *zap.Logger

	// mu orders what the player pushes against interruptions, and guards
	// the fields below.
	mu       sync.Mutex
	epoch    uint64
	speaking bool
	stop     chan struct{}
	done     chan struct{}
	// reports is true for a PlaybackReporter Conn; held are the frames
	// waiting for the client to play the audio ahead of them, in order,
	// and played is how far it has (samples at the Conn's rate).
	reports bool
	held    []heldFrame
	played  int64

	sent      atomic.Uint64
	underruns atomic.Uint64
	maxLate   atomic.Int64 // nanoseconds
	assisted  atomic.Uint64
}

// NewOutput returns an output that plays to conn.
func NewOutput(conn Conn, opts OutputOptions) *Output {
	_, reports := conn.(PlaybackReporter)
	o := &Output{conn: conn, opts: opts.withDefaults(), log: zap.NewNop(), reports: reports}
	o.out = &o.outlet
	return o
}

// OutputTransport marks the processor as an output transport, so observers
// (the RTVI observer) can recognise its hop.
func (o *Output) OutputTransport() {}

// Name implements pipeline.Namer.
func (o *Output) Name() string { return o.opts.Name }

// Setup implements pipeline.Setupper: it attaches the output's outlet.
func (o *Output) Setup(_ context.Context, su pipeline.Setup) error {
	su.Attach(&o.outlet)
	if su.Logger != nil {
		o.log = su.Logger
	}
	return nil
}

// Cleanup implements pipeline.Cleaner: it stops the player.
func (o *Output) Cleanup(context.Context) error {
	o.stopPlayer()
	return nil
}

// OutputStats counts an output's audio.
type OutputStats struct {
	// FramesSent counts FrameDuration frames played, silence included.
	FramesSent uint64
	// Underruns counts frames sent more than a frame (20 ms) after they
	// were due, when the client may have heard a gap, and frames skipped
	// after a stall too long to make up.
	Underruns uint64
	// MaxLate is the most the output's clock has run late since the
	// output started, stalls it skipped included: how much of a client's
	// jitter buffer the worst stall took (a browser's holds a few tens of
	// milliseconds).
	MaxLate time.Duration
	// Queued is the number of frames waiting to be played or released.
	Queued int
	// QueueHighWater is the most frames that have waited at once.
	QueueHighWater int
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
		Queued: o.q.Len(), QueueHighWater: o.q.HighWater(), AssistedFrames: o.assisted.Load(),
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
		o.mu.Lock()
		clear(o.held)
		o.held = o.held[:0]
		o.mu.Unlock()
		return nil
	case *frames.Interruption:
		o.mu.Lock()
		o.epoch++
		o.q.Reset()
		o.dropHeldLocked()
		o.stopSpeakingLocked()
		h.Forward()
		o.mu.Unlock()
		if fl, ok := o.conn.(AudioFlusher); ok {
			fl.FlushAudio()
		}
		return nil
	}
	if dir == frames.Upstream {
		return nil
	}
	if r, ok := f.(*frames.InputTransportRefused); ok && r.End != "" {
		// What the pipeline said about it is queued: the session ends.
		h.Consume()
		o.conn.End(r.End)
		return nil
	}
	if m, ok := f.(*frames.OutputTransportMessageUrgent); ok {
		h.Consume()
		o.conn.SendMessage(m.Message, m.Supersede)
		return nil
	}
	if f.Lane().Ordered() {
		h.Consume()
		o.q.Push(f, dir)
		o.opts.Assist.Help()
	}
	return nil
}

func (o *Output) startPlayer(rate int) {
	if rate <= 0 {
		rate = o.opts.DefaultSampleRate
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
	p := o.newPlayer(rate)
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

// dropHeldLocked drops, for an interruption, the held frames the client
// will not hear; uninterruptible ones are released on the next tick.
// o.mu is held.
func (o *Output) dropHeldLocked() {
	kept := o.held[:0]
	for _, h := range o.held {
		if h.f.Lane() == frames.LaneUninterruptible {
			h.pos, h.due = 0, time.Time{}
			kept = append(kept, h)
		}
	}
	clear(o.held[len(kept):])
	o.held = kept
}

// heldFrame is a frame waiting for the client to play the audio ahead of
// it: up to pos (samples at the Conn's rate). due is when it is released
// anyway (MaxPlaybackDelay after the audio up to pos was written), zero
// until then.
type heldFrame struct {
	f   frames.Frame
	dir frames.Direction
	pos int64
	due time.Time
}

// Played tells the output of a PlaybackReporter that its client has
// played the audio up to pos, a Tick's Position plus its frame's length
// (a mark's echo); the frames waiting for it are released on the next
// tick. Positions only move forward: an older one is ignored.
func (o *Output) Played(pos int64) {
	o.mu.Lock()
	o.played = max(o.played, pos)
	o.mu.Unlock()
}

// releaseLocked pushes the held frames the client has played past, or
// whose wait is over, in order; it reports whether End or Stop was among
// them. o.mu is held.
func (o *Output) releaseLocked(now time.Time) (last bool) {
	n := 0
	for _, h := range o.held {
		if h.pos > o.played && (h.due.IsZero() || now.Before(h.due)) {
			break
		}
		n++
		switch h.f.(type) {
		case *frames.End, *frames.Stop:
			o.stopSpeakingLocked()
			last = true
		}
		o.push(h.f, h.dir)
	}
	if n > 0 {
		rest := copy(o.held, o.held[n:])
		clear(o.held[rest:])
		o.held = o.held[:rest]
	}
	return last
}

// heardLocked reports whether the client has played (or had time to play)
// everything written up to end, for BotStoppedSpeaking. o.mu is held.
func (o *Output) heardLocked(end int64, due, now time.Time) bool {
	return !o.reports || o.played >= end || (!due.IsZero() && !now.Before(due))
}

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

// player is the goroutine that paces the output: every FrameDuration it
// takes the next frame of audio from the queue (or silence) and writes it
// to the Conn. Its fields belong to whoever holds its state: the player's
// goroutine, or a goroutine sending an overdue frame in its place
// (Assist).
type player struct {
	o           *Output
	assist      *Assist
	rate        int  // the Conn's PCM rate
	defaultRate int  // the pipeline's output rate
	mute        bool // the Conn failed to open: it is written silence
	epoch       uint64

	pending []int16 // audio at rate, not yet played
	mono    []int16 // scratch: one frame's samples, downmixed

	// For a PlaybackReporter: the audio samples written so far, the end
	// of the last acknowledgement asked for, when the last audio written
	// counts as heard whatever the client says, and whether End waits.
	written    int64
	marked     int64
	writtenDue time.Time
	endHeld    bool
	rs         resampler
	rsRate     int

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
	// due is next on the Assist's clock, for assistants to read.
	due atomic.Int64
}

func (o *Output) newPlayer(rate int) *player {
	return &player{o: o, assist: o.opts.Assist, rate: rate, defaultRate: rate}
}

// run paces the output until stop is closed, ctx ends (the task's
// Cancel or teardown) or the player has released End or Stop.
func (p *player) run(ctx context.Context, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	o := p.o
	if err := p.open(); err != nil {
		// Keep the clock and the order of frames; the audio is dropped.
		o.out.PushError(err)
	}
	p.next = time.Now()
	p.publishDue()
	p.assist.add(p)
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
		p.assist.Help()
		timer.Reset(time.Until(next)) // at once while catching up
	}
}

// open asks the Conn for its rate. On failure the player plays on at the
// pipeline's rate, writing silence, so that the clock and the order of
// frames hold.
func (p *player) open() error {
	rate, err := p.o.conn.OpenAudio(p.defaultRate)
	if err != nil {
		p.mute = true
		// Nothing plays, so nothing will be acknowledged.
		p.o.mu.Lock()
		p.o.reports = false
		p.o.mu.Unlock()
		return err
	}
	if rate > 0 {
		p.rate = rate
	}
	return nil
}

// Who may run a player's clock: its own goroutine or an assistant
// (Assist), one at a time, until the player closes.
const (
	playerFree int32 = iota
	playerBusy
	playerClosed
)

// acquire takes the player's clock and the other fields step uses; it
// fails while another goroutine holds them or after close.
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
	p.assist.remove(p)
}

// publishDue makes the time of the next frame visible to assistants.
func (p *player) publishDue() {
	if p.assist != nil {
		p.due.Store(p.assist.since(p.next))
	}
}

// maxCatchUp is the longest stall the player makes up by sending the
// frames it owes back to back; a browser's jitter buffer absorbs such a
// burst. Past it, the missed frames are skipped.
const maxCatchUp = 200 * time.Millisecond

// step sends the frame due at p.next if it is due at now, and reports
// whether it did; assisted tells that another goroutine than the player's
// runs it. The caller holds the player (acquire).
//
// The player keeps a media clock: frame k is due at start + k×period. A
// frame that is late is sent at once and the following ones back to back
// until the clock has caught up, so a scheduling stall delays the audio
// for a moment instead of shifting it, and the client's latency, for good.
// A stall longer than maxCatchUp is given up: its slots are skipped (a
// codec's timestamps jump over them) and the clock restarts from now;
// queued audio is kept and plays from there, so no speech is lost.
func (p *player) step(now time.Time, assisted bool) bool {
	if p.finished || now.Before(p.next) {
		return false
	}
	o := p.o
	t := Tick{Now: now, Late: now.Sub(p.next), Assisted: assisted}
	if t.Late > time.Duration(o.maxLate.Load()) {
		o.maxLate.Store(int64(t.Late)) // only the holder of the player writes it
	}
	if t.Late > maxCatchUp {
		t.Skipped = int(t.Late / FrameDuration)
		t.Underruns += t.Skipped
		p.next = p.next.Add(time.Duration(t.Skipped) * FrameDuration)
		t.Late = now.Sub(p.next)
	}
	if t.Late > FrameDuration {
		t.Underruns++
	}
	if t.Underruns > 0 {
		// Counted as they happen, so a scrape during a session sees them.
		o.underruns.Add(uint64(t.Underruns))
	}
	if assisted {
		o.assisted.Add(1)
	}
	p.finished = p.tick(t)
	p.next = p.next.Add(FrameDuration)
	p.publishDue()
	return true
}

// tick plays one frame. It returns true after releasing End or Stop.
func (p *player) tick(t Tick) (finished bool) {
	o := p.o
	n := FrameSamples(p.rate)
	o.mu.Lock()
	if o.epoch != p.epoch {
		// Interrupted: what was taken from the queue is stale.
		p.epoch = o.epoch
		p.pending = p.pending[:0]
		if p.rs != nil {
			p.rs.Reset()
		}
	}
	last := o.reports && o.releaseLocked(t.Now)
fill:
	for !last && !p.endHeld && len(p.pending) < n {
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
			o.conn.SendMessage(f.Message, f.Supersede)
		case *frames.End, *frames.Stop:
			if p.hold(f, dir) {
				p.endHeld = true
				break fill
			}
			o.stopSpeakingLocked()
			o.push(f, frames.Downstream)
			last = true
			break fill
		default:
			if !p.hold(f, dir) {
				o.push(f, dir)
			}
		}
	}
	var frame []int16 // nil: silence
	if len(p.pending) > 0 {
		// The queue may have run dry mid-frame: pad with silence.
		for len(p.pending) < n {
			p.pending = append(p.pending, 0)
		}
		frame = p.pending[:n]
		p.silentTicks = 0
		o.startSpeakingLocked()
		if p.speakingTicks++; p.speakingTicks*int(FrameDuration) >= int(o.opts.BotSpeakingInterval) {
			p.speakingTicks = 0
			pipeline.Broadcast(o.out, p.speakingFrames.New)
		}
	} else {
		p.speakingTicks = 0
		if p.silentTicks++; o.speaking && p.silentTicks*int(FrameDuration) >= int(o.opts.StopSpeakingAfter) &&
			o.heardLocked(p.written, p.writtenDue, t.Now) {
			o.stopSpeakingLocked()
		}
	}
	write := frame
	if p.mute {
		write = nil
	}
	t.Position = p.written
	end := p.written
	if write != nil {
		end += int64(n)
		p.writtenDue = t.Now.Add(o.opts.MaxPlaybackDelay)
	}
	if o.reports {
		// Ask for an acknowledgement where a held frame waits (on a
		// silent tick too: a provider echoes a mark once what was sent
		// before it has played), and where the audio runs out, for
		// BotStoppedSpeaking.
		t.Mark = write != nil && len(p.pending) == n
		for i := range o.held {
			h := &o.held[i]
			if h.pos > p.marked && h.pos <= end {
				t.Mark = true
			}
			if h.pos <= end && h.due.IsZero() {
				h.due = t.Now.Add(o.opts.MaxPlaybackDelay)
			}
		}
		if t.Mark {
			p.marked = end
		}
	}
	p.written = end
	o.mu.Unlock()
	if err := o.conn.WriteAudio(write, t); err != nil {
		o.log.Debug("writing audio", zap.Error(err))
	}
	if frame != nil {
		rest := copy(p.pending, p.pending[n:])
		p.pending = p.pending[:rest]
	}
	o.sent.Add(1)
	return last
}

// hold keeps f, queued behind the audio taken so far, until the client of
// a PlaybackReporter has played that audio; it reports false, for f to go
// at once, when there is nothing to wait for. o.mu is held.
func (p *player) hold(f frames.Frame, dir frames.Direction) bool {
	o := p.o
	if !o.reports {
		return false
	}
	pos := p.written + int64(len(p.pending))
	if pos <= o.played && len(o.held) == 0 {
		return false
	}
	o.held = append(o.held, heldFrame{f: f, dir: dir, pos: pos})
	return true
}

// add converts one audio frame to mono at the Conn's rate and appends it
// to the pending samples.
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
	if rate != p.rate {
		mono = p.mono[:0]
	}
	for i := range nf {
		var sum int32
		for c := range ch {
			sum += int32(int16(binary.LittleEndian.Uint16(a.PCM[(i*ch+c)*2:])))
		}
		mono = append(mono, int16(sum/int32(ch)))
	}
	if rate == p.rate {
		p.pending = mono
		return
	}
	p.mono = mono
	if p.rs == nil || p.rsRate != rate {
		rs, err := NewResampler(rate, p.rate)
		if err != nil {
			p.o.log.Warn("cannot play audio at this rate", zap.Int("rate", rate), zap.Error(err))
			return
		}
		p.rs, p.rsRate = rs, rate
	}
	p.pending = p.rs.ResampleSamples(p.pending, p.mono)
}
