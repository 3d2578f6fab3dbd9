package transports

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
)

// reportingConn is a fakeConn whose client acknowledges playback (a
// telephony provider's marks): it keeps the marks asked for, and the test
// plays the provider's part by calling Played.
type reportingConn struct {
	fakeConn
	marks []int64
}

func (c *reportingConn) ReportsPlayback() {}

func (c *reportingConn) WriteAudio(pcm []int16, t Tick) error {
	if t.Mark {
		c.mu.Lock()
		c.marks = append(c.marks, t.Position+int64(len(pcm)))
		c.mu.Unlock()
	}
	return c.fakeConn.WriteAudio(pcm, t)
}

func (c *reportingConn) lastMark() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.marks) == 0 {
		return -1
	}
	return c.marks[len(c.marks)-1]
}

func TestAReportingConnsTextWaitsUntilTheClientPlayedTheAudioAheadOfIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := &reportingConn{}
		o := NewOutput(conn, OutputOptions{})
		k := &sink{start: time.Now()}
		task, done := runOutput(t, o, k)
		for i := range 10 { // 200 ms
			task.QueueFrame(toneFrame(440, 24000, 480, i*480, 5000))
		}
		task.QueueFrame(&frames.Text{Text: "a"})
		task.QueueFrame(&frames.End{})

		// All the audio has been written by 220 ms; nothing acknowledged.
		time.Sleep(500 * time.Millisecond)
		if _, ok := k.find(textIs("a")); ok {
			t.Fatal(`"a" came out before the client played the audio ahead of it`)
		}
		mark := conn.lastMark()
		if mark != 4800 {
			t.Fatalf("last mark asked at %d samples, want 4800 (200 ms at 24 kHz, the end of the audio)", mark)
		}
		if _, ok := k.find(func(f frames.Frame) bool { _, ok := f.(*frames.BotStoppedSpeaking); return ok }); ok {
			t.Error("the bot stopped speaking before the client had played its audio")
		}
		at := time.Since(k.start)
		o.Played(mark)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		a, _ := k.find(textIs("a"))
		if a.at < at || a.at > at+20*time.Millisecond {
			t.Errorf(`"a" came out at %v, want within a tick of the acknowledgement at %v`, a.at, at)
		}
		var order []string
		for _, a := range k.list() {
			switch f := a.f.(type) {
			case *frames.Text:
				order = append(order, f.Text)
			case *frames.BotStoppedSpeaking, *frames.End:
				order = append(order, frames.TypeName(f))
			}
		}
		if diff := cmp.Diff([]string{"a", "BotStoppedSpeakingFrame", "EndFrame"}, order); diff != "" {
			t.Errorf("order (-want +got):\n%s", diff)
		}
	})
}

func TestAReportingConnsFramesAreReleasedAfterMaxPlaybackDelayWithoutAnAcknowledgement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := &reportingConn{}
		o := NewOutput(conn, OutputOptions{MaxPlaybackDelay: time.Second})
		k := &sink{start: time.Now()}
		task, done := runOutput(t, o, k)
		for i := range 10 {
			task.QueueFrame(toneFrame(440, 24000, 480, i*480, 5000))
		}
		task.QueueFrame(&frames.Text{Text: "a"})
		time.Sleep(2 * time.Second)
		task.Cancel("done")
		<-done
		a, ok := k.find(textIs("a"))
		// The audio ahead of it was written by 200 ms: a second later.
		if !ok || a.at < 1180*time.Millisecond || a.at > 1240*time.Millisecond {
			t.Errorf(`"a": found %v at %v, want about 1.2 s (the audio written, then MaxPlaybackDelay)`, ok, a.at)
		}
	})
}

func TestAReportingConnAsksForAMarkOnASilentTickForTextAfterTheAudio(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := &reportingConn{}
		o := NewOutput(conn, OutputOptions{})
		k := &sink{start: time.Now()}
		task, done := runOutput(t, o, k)
		for i := range 5 { // 100 ms
			task.QueueFrame(toneFrame(440, 24000, 480, i*480, 5000))
		}
		time.Sleep(300 * time.Millisecond) // played out; the end was marked
		task.QueueFrame(&frames.Text{Text: "late"})
		time.Sleep(60 * time.Millisecond)
		if _, ok := k.find(textIs("late")); ok {
			t.Fatal("text behind audio the client has not acknowledged came out")
		}
		o.Played(2400)
		time.Sleep(40 * time.Millisecond)
		if _, ok := k.find(textIs("late")); !ok {
			t.Error("the text did not come out once the audio ahead of it was acknowledged")
		}
		task.Cancel("done")
		<-done
	})
}

func TestAnInterruptionDropsTheHeldFramesTheCallerWillNotHear(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := &reportingConn{}
		o := NewOutput(conn, OutputOptions{})
		k := &sink{start: time.Now()}
		task, done := runOutput(t, o, k)
		for i := range 10 {
			task.QueueFrame(toneFrame(440, 24000, 480, i*480, 5000))
		}
		task.QueueFrame(&frames.Text{Text: "unheard"})
		task.QueueFrame(&frames.FunctionCallResult{GroupID: "keep"})
		time.Sleep(300 * time.Millisecond) // written, not acknowledged
		task.QueueFrame(&frames.Interruption{})
		time.Sleep(100 * time.Millisecond)
		task.Cancel("done")
		<-done
		if _, ok := k.find(textIs("unheard")); ok {
			t.Error("text the caller did not hear came out after the interruption")
		}
		if _, ok := k.find(func(f frames.Frame) bool { _, ok := f.(*frames.FunctionCallResult); return ok }); !ok {
			t.Error("the uninterruptible frame was dropped")
		}
	})
}

// Without a PlaybackReporter nothing waits for acknowledgements and no
// mark is asked for.
func TestAConnThatDoesNotReportPlaybackIsNeverAskedForMarks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := &fakeConn{}
		o := NewOutput(conn, OutputOptions{})
		task, done := runOutput(t, o, &sink{start: time.Now()})
		for i := range 10 {
			task.QueueFrame(toneFrame(440, 24000, 480, i*480, 5000))
		}
		time.Sleep(300 * time.Millisecond)
		task.Cancel("done")
		<-done
		conn.mu.Lock()
		defer conn.mu.Unlock()
		for _, tk := range conn.ticks {
			if tk.Mark {
				t.Fatal("a mark was asked of a Conn that reports no playback")
			}
		}
	})
}
