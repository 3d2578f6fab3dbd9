package transports

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// fakeConn is a Conn that records what the output gives it.
type fakeConn struct {
	rate    int   // what OpenAudio answers; 0: the pipeline's rate
	openErr error // what OpenAudio fails with

	mu       sync.Mutex
	opened   []int
	pcm      []int16 // every sample written, silence (nil frames) left out
	writes   int
	silent   int
	ticks    []Tick
	messages []string
	ended    []string
	flushes  int
	// stallAt, when not 0, makes write number stallAt sleep for stall: an
	// output descheduled by an overloaded machine.
	stallAt int
	stall   time.Duration
}

func (c *fakeConn) OpenAudio(rate int) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.opened = append(c.opened, rate)
	if c.openErr != nil {
		return 0, c.openErr
	}
	if c.rate > 0 {
		return c.rate, nil
	}
	return rate, nil
}

func (c *fakeConn) WriteAudio(pcm []int16, t Tick) error {
	c.mu.Lock()
	c.writes++
	n := c.writes
	if pcm == nil {
		c.silent++
	}
	c.pcm = append(c.pcm, pcm...)
	c.ticks = append(c.ticks, t)
	c.mu.Unlock()
	if n == c.stallAt {
		time.Sleep(c.stall)
	}
	return nil
}

func (c *fakeConn) SendMessage(msg []byte, _ uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.messages = append(c.messages, string(msg))
}

func (c *fakeConn) End(reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = append(c.ended, reason)
}

func (c *fakeConn) played() []int16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int16(nil), c.pcm...)
}

// flushingConn is a fakeConn whose client buffers audio.
type flushingConn struct{ fakeConn }

func (c *flushingConn) FlushAudio() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flushes++
}

// arrival is a frame that left the pipeline, with the (fake) time it did.
type arrival struct {
	at time.Duration
	f  frames.Frame
}

type sink struct {
	mu    sync.Mutex
	start time.Time
	got   []arrival
}

func (k *sink) record(f frames.Frame) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.got = append(k.got, arrival{time.Since(k.start), f})
}

func (k *sink) list() []arrival {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]arrival(nil), k.got...)
}

func (k *sink) find(match func(frames.Frame) bool) (arrival, bool) {
	for _, a := range k.list() {
		if match(a.f) {
			return a, true
		}
	}
	return arrival{}, false
}

// runOutput runs o as a pipeline of its own, recording what comes out.
func runOutput(t *testing.T, o *Output, k *sink) (*pipeline.Task, chan error) {
	t.Helper()
	task := pipeline.NewTask(pipeline.New(o), pipeline.TaskOptions{})
	pipeline.OnDownstream(task, func(f frames.Frame) {
		if _, ok := f.(*frames.Start); !ok {
			k.record(f)
		}
	})
	done := make(chan error, 1)
	go func() { done <- task.Run(context.Background()) }()
	return task, done
}

// offlinePlayer returns a player of o whose pushes go nowhere, its Conn
// opened; the caller runs it.
func offlinePlayer(t testing.TB, o *Output) *player {
	t.Helper()
	o.out = pusherFunc(func(frames.Frame, frames.Direction) {})
	p := o.newPlayer(24000)
	if err := p.open(); err != nil {
		t.Fatal(err)
	}
	return p
}

type pusherFunc func(frames.Frame, frames.Direction)

func (f pusherFunc) Push(fr frames.Frame, dir frames.Direction) { f(fr, dir) }
func (f pusherFunc) PushError(error)                            {}

func toneFrame(freq float64, rate, n, offset int, amp float64) *frames.OutputAudioRaw {
	pcm := make([]byte, 2*n)
	for i := range n {
		v := int16(amp * math.Sin(2*math.Pi*freq*float64(offset+i)/float64(rate)))
		binary.LittleEndian.PutUint16(pcm[2*i:], uint16(v))
	}
	return &frames.OutputAudioRaw{Audio: frames.Audio{PCM: pcm, SampleRate: rate, Channels: 1}}
}

func TestOutputOpensItsConnAtThePipelinesRateAndWritesAFrameEvery20ms(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := &fakeConn{}
		o := NewOutput(conn, OutputOptions{})
		task, done := runOutput(t, o, &sink{start: time.Now()})
		time.Sleep(time.Second - time.Millisecond)
		task.Cancel("done")
		<-done
		conn.mu.Lock()
		defer conn.mu.Unlock()
		if diff := cmp.Diff([]int{24000}, conn.opened); diff != "" {
			t.Errorf("OpenAudio calls (-want +got):\n%s", diff)
		}
		if conn.writes != 50 || conn.silent != 50 {
			t.Errorf("in a second idle: %d writes, %d of them silence; want 50 silent writes", conn.writes, conn.silent)
		}
	})
}

func TestOutputPlaysAtTheConnsRateResampledAndDownmixed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := &fakeConn{rate: 8000} // a telephone line
		o := NewOutput(conn, OutputOptions{})
		task, done := runOutput(t, o, &sink{start: time.Now()})
		// 200 ms of stereo at 24 kHz.
		pcm := make([]byte, 2*2*4800)
		task.QueueFrame(&frames.TTSAudioRaw{Audio: frames.Audio{PCM: pcm, SampleRate: 24000, Channels: 2}})
		time.Sleep(time.Second)
		task.Cancel("done")
		<-done
		conn.mu.Lock()
		defer conn.mu.Unlock()
		// 1600 samples at 8 kHz, cut into frames of 160 (the last one
		// padded by what the resampler's delay leaves over).
		if got := len(conn.pcm); got < 1600 || got > 1760 || got%160 != 0 {
			t.Errorf("%d samples written at 8 kHz for 200 ms of audio, want 1600 to 1760 in frames of 160", got)
		}
	})
}

func TestOutputGoesOnSilentWhenItsConnCannotOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := &fakeConn{openErr: errors.New("no codec")}
		o := NewOutput(conn, OutputOptions{})
		k := &sink{start: time.Now()}
		task, done := runOutput(t, o, k)
		var errs []error
		var mu sync.Mutex
		pipeline.OnUpstream(task, func(f *frames.Error) {
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, f.Err)
		})
		for i := range 10 { // 200 ms
			task.QueueFrame(toneFrame(440, 24000, 480, i*480, 5000))
		}
		task.QueueFrame(&frames.Text{Text: "after"})
		time.Sleep(300 * time.Millisecond)
		task.Cancel("done")
		<-done
		if a, ok := k.find(textIs("after")); !ok || a.at < 180*time.Millisecond {
			t.Errorf("the text behind 200 ms of audio: found %v at %v; want it released in step, as if played", ok, a.at)
		}
		conn.mu.Lock()
		defer conn.mu.Unlock()
		if len(conn.pcm) != 0 || conn.silent != conn.writes {
			t.Errorf("%d samples written, %d of %d writes silent; want silence only", len(conn.pcm), conn.silent, conn.writes)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(errs) != 1 {
			t.Errorf("errors pushed: %v, want the Conn's one", errs)
		}
	})
}

func textIs(s string) func(frames.Frame) bool {
	return func(f frames.Frame) bool { t, ok := f.(*frames.Text); return ok && t.Text == s }
}

func TestOutputFlushesAConnThatBuffersOnInterruption(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := &flushingConn{}
		o := NewOutput(conn, OutputOptions{})
		task, done := runOutput(t, o, &sink{start: time.Now()})
		for i := range 25 {
			task.QueueFrame(toneFrame(440, 24000, 480, i*480, 5000))
		}
		time.Sleep(100 * time.Millisecond)
		task.QueueFrame(&frames.Interruption{})
		time.Sleep(100 * time.Millisecond)
		task.Cancel("done")
		<-done
		conn.mu.Lock()
		defer conn.mu.Unlock()
		if conn.flushes != 1 {
			t.Errorf("FlushAudio called %d times for one interruption, want 1", conn.flushes)
		}
		// 100 ms played before, at most one more frame after.
		if got := len(conn.pcm); got > 6*480 {
			t.Errorf("%d samples played; want at most 6 frames' worth after the interruption", got)
		}
	})
}

func TestOutputSendsMessagesUrgentAtOnceOrderedBehindTheAudio(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := &fakeConn{}
		o := NewOutput(conn, OutputOptions{})
		task, done := runOutput(t, o, &sink{start: time.Now()})
		for i := range 25 { // 500 ms
			task.QueueFrame(toneFrame(440, 24000, 480, i*480, 5000))
		}
		task.QueueFrame(&frames.OutputTransportMessage{Message: []byte("ordered")})
		task.QueueFrame(&frames.OutputTransportMessageUrgent{Message: []byte("urgent")})
		time.Sleep(100 * time.Millisecond)
		conn.mu.Lock()
		early := append([]string(nil), conn.messages...)
		conn.mu.Unlock()
		time.Sleep(time.Second)
		task.Cancel("done")
		<-done
		if diff := cmp.Diff([]string{"urgent"}, early); diff != "" {
			t.Errorf("messages after 100 ms (-want +got):\n%s", diff)
		}
		conn.mu.Lock()
		defer conn.mu.Unlock()
		if diff := cmp.Diff([]string{"urgent", "ordered"}, conn.messages); diff != "" {
			t.Errorf("messages after the audio (-want +got):\n%s", diff)
		}
	})
}

func TestOutputEndsTheSessionForARefusalThatSaysSo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := &fakeConn{}
		o := NewOutput(conn, OutputOptions{})
		task, done := runOutput(t, o, &sink{start: time.Now()})
		task.QueueFrame(&frames.InputTransportRefused{Notice: "slow down"})
		task.QueueFrame(&frames.InputTransportRefused{End: "too fast for too long"})
		time.Sleep(10 * time.Millisecond)
		task.Cancel("done")
		<-done
		conn.mu.Lock()
		defer conn.mu.Unlock()
		if diff := cmp.Diff([]string{"too fast for too long"}, conn.ended); diff != "" {
			t.Errorf("End calls (-want +got):\n%s", diff)
		}
	})
}

func TestOutputTellsItsConnOfLateAndSkippedFrames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Write 5 stalls 500 ms: past the 200 ms the output makes up, the
		// 24 frames due during the stall are skipped.
		conn := &fakeConn{stallAt: 5, stall: 500 * time.Millisecond}
		o := NewOutput(conn, OutputOptions{})
		task, done := runOutput(t, o, &sink{start: time.Now()})
		time.Sleep(time.Second - time.Millisecond)
		task.Cancel("done")
		<-done
		conn.mu.Lock()
		defer conn.mu.Unlock()
		var skipped, underruns int
		for _, tk := range conn.ticks {
			skipped += tk.Skipped
			underruns += tk.Underruns
		}
		st := o.Stats()
		if skipped != 24 || underruns != 24 || st.Underruns != 24 || st.MaxLate != 480*time.Millisecond {
			t.Errorf("ticks told %d skipped and %d underruns, stats %+v; want 24, 24 and 24 underruns 480 ms late", skipped, underruns, st)
		}
		if t6 := conn.ticks[5]; t6.Skipped != 24 || t6.Late != 0 {
			t.Errorf("the tick after the stall = %+v, want 24 skipped and on time", t6)
		}
	})
}

// BenchmarkOutputTick is the base's output path for one 20 ms frame of
// 24 kHz audio: take it from the queue, release it, and hand its samples
// to the Conn.
func BenchmarkOutputTick(b *testing.B) {
	o := NewOutput(discardConn{}, OutputOptions{})
	p := offlinePlayer(b, o)
	f := toneFrame(440, 24000, 480, 0, 8000)
	b.ReportAllocs()
	for b.Loop() {
		o.q.Push(f, frames.Downstream)
		p.tick(Tick{})
	}
}

// BenchmarkAssistHelp is what the input and output paths pay per frame for
// the assist while no frame is overdue: a clock read and an atomic load,
// and once a millisecond a look over 100 players.
func BenchmarkAssistHelp(b *testing.B) {
	a := NewAssist(AssistOptions{NoHeartbeat: true})
	o := NewOutput(discardConn{}, OutputOptions{Assist: a})
	for range 100 {
		p := o.newPlayer(24000)
		p.next = time.Now().Add(time.Hour)
		p.publishDue()
		a.add(p)
	}
	b.ReportAllocs()
	for b.Loop() {
		a.Help()
	}
}

// discardConn is a Conn that keeps nothing.
type discardConn struct{}

func (discardConn) OpenAudio(rate int) (int, error) { return rate, nil }
func (discardConn) WriteAudio([]int16, Tick) error  { return nil }
func (discardConn) SendMessage([]byte, uint64)      {}
func (discardConn) End(string)                      {}
