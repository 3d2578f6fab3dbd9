package transports

import (
	"context"
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
)

// idlePlayers returns n players of n outputs on one Assist, as a running
// output makes them, but without their goroutines: a test plays the part
// of a scheduler that leaves them waiting. Their frames are due now.
func idlePlayers(t *testing.T, n int) (*Assist, []*player) {
	t.Helper()
	a := NewAssist(AssistOptions{NoHeartbeat: true}) // a file descriptor would stop the bubble's clock
	var ps []*player
	for range n {
		p := offlinePlayer(t, NewOutput(&fakeConn{}, OutputOptions{Assist: a}))
		p.next = time.Now()
		p.publishDue()
		a.add(p)
		ps = append(ps, p)
	}
	return a, ps
}

func sentAndAssisted(p *player) (uint64, uint64) {
	st := p.o.Stats()
	return st.FramesSent, st.AssistedFrames
}

func TestAssistSendsTheFrameOfAPlayerThatHasNotRunAfter5ms(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, ps := idlePlayers(t, 1)
		p := ps[0]
		time.Sleep(assistAfter - time.Millisecond)
		a.Help()
		if sent, _ := sentAndAssisted(p); sent != 0 {
			t.Fatalf("4 ms after the frame was due, %d frames were sent for the player; want it left to the player", sent)
		}
		time.Sleep(2 * time.Millisecond)
		a.Help()
		if sent, assisted := sentAndAssisted(p); sent != 1 || assisted != 1 {
			t.Fatalf("6 ms after: %d sent, %d assisted; want 1 and 1", sent, assisted)
		}
		if got, want := p.next, time.Now().Add(-6*time.Millisecond+FrameDuration); !got.Equal(want) {
			t.Errorf("the player's clock is at %v, want the next frame's time %v", got, want)
		}
		if st := p.o.Stats(); st.MaxLate != 6*time.Millisecond || st.Underruns != 0 {
			t.Errorf("stats = %+v, want the frame counted 6 ms late and no underrun", st)
		}

		// The player, when it runs at last, finds nothing due.
		if !p.acquire() {
			t.Fatal("the assistant kept the player")
		}
		if p.step(time.Now(), false) {
			t.Error("the player sent the frame its assistant had sent")
		}
		p.release()
	})
}

func TestAssistLooksAtMostOncePerMillisecondWhileThereIsNothingToDo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, ps := idlePlayers(t, 1)
		time.Sleep(time.Millisecond)
		a.Help() // looks: the frame is 1 ms late, too early
		time.Sleep(assistAfter)
		a.Help() // looks: sends it
		ps[0].next = ps[0].next.Add(-time.Hour)
		ps[0].publishDue()
		a.Help() // within the same millisecond: does not look
		if sent, _ := sentAndAssisted(ps[0]); sent != 1 {
			t.Errorf("%d frames sent, want 1: the third call must not look again in the same millisecond", sent)
		}
	})
}

func TestAssistSpreadsAManyPlayerRescueOverCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, ps := idlePlayers(t, 6)
		time.Sleep(assistAfter + time.Millisecond)
		total := func() (n uint64) {
			for _, p := range ps {
				sent, _ := sentAndAssisted(p)
				n += sent
			}
			return n
		}
		a.Help()
		if got := total(); got != assistMaxFrames {
			t.Fatalf("one call sent %d frames, want its budget of %d", got, assistMaxFrames)
		}
		a.Help() // at once: the first ran out of budget, so this one looks
		if got := total(); got != 6 {
			t.Fatalf("two calls sent %d frames, want one for each of the 6 players", got)
		}
	})
}

func TestAssistLeavesAPlayerThatIsSendingAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, ps := idlePlayers(t, 1)
		p := ps[0]
		time.Sleep(assistAfter + time.Millisecond)
		if !p.acquire() {
			t.Fatal("a fresh player is held")
		}
		a.Help()
		if sent, _ := sentAndAssisted(p); sent != 0 {
			t.Errorf("the assistant sent %d frames for a player that held its clock", sent)
		}
		p.release()
	})
}

func TestPlayerCloseWaitsForItsAssistantAndBarsLaterOnes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, ps := idlePlayers(t, 1)
		p := ps[0]
		if !p.acquire() { // an assistant is sending
			t.Fatal("a fresh player is held")
		}
		var closed atomic.Bool
		go func() { p.close(); closed.Store(true) }()
		time.Sleep(time.Millisecond)
		if closed.Load() {
			t.Fatal("close returned while an assistant held the player")
		}
		p.release()
		time.Sleep(time.Millisecond)
		if !closed.Load() {
			t.Fatal("close did not return once the assistant let go")
		}
		if p.acquire() {
			t.Error("a closed player can be acquired")
		}
		time.Sleep(time.Hour)
		a.Help()
		if sent, _ := sentAndAssisted(p); sent != 0 {
			t.Errorf("%d frames sent for a closed player", sent)
		}
	})
}

// TestAssistantsAndPlayerEncodeTheAudioOnceInOrder runs a playing output
// while other goroutines try to send its frames as soon as they are due
// (no grace period, no rate limit, a frame at a time): the Conn must
// still get every sample once, in order, then silence. Under -race it also
// checks that the player's state only changes hands through acquire and
// release.
func TestAssistantsAndPlayerEncodeTheAudioOnceInOrder(t *testing.T) {
	a := NewAssist(AssistOptions{})
	a.after, a.every, a.budget = 0, 0, 1
	conn := &fakeConn{}
	o := NewOutput(conn, OutputOptions{Assist: a})
	task, done := runOutput(t, o, &sink{start: time.Now()})
	// Frames at the Conn's rate reach it as they are.
	const rate = 24000
	frameSamples := FrameSamples(rate)
	const frameCount = 40
	var want []int16
	for i := range frameCount {
		pcm := make([]byte, 2*frameSamples)
		for j := range frameSamples {
			v := int16(i*frameSamples + j + 1) // a ramp: every sample differs
			want = append(want, v)
			binary.LittleEndian.PutUint16(pcm[2*j:], uint16(v))
		}
		task.QueueFrame(&frames.OutputAudioRaw{Audio: frames.Audio{PCM: pcm, SampleRate: rate, Channels: 1}})
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				a.Help()
				time.Sleep(50 * time.Microsecond)
			}
		})
	}
	start := time.Now()
	for o.Stats().FramesSent < frameCount+5 && time.Since(start) < 10*time.Second {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	task.Cancel("done")
	<-done
	elapsed := time.Since(start)

	st := o.Stats()
	encoded := conn.played()
	if st.AssistedFrames == 0 {
		t.Fatal("no frame was sent by an assistant: the test did not exercise the assist")
	}
	if limit := uint64(elapsed/FrameDuration) + 2; st.FramesSent > limit {
		t.Errorf("%d frames sent in %v, more than the clock's %d", st.FramesSent, elapsed, limit)
	}
	if len(encoded) < len(want) {
		t.Fatalf("the conn got %d samples, want at least the %d queued", len(encoded), len(want))
	}
	if diff := cmp.Diff(want, encoded[:len(want)]); diff != "" {
		t.Errorf("the queued audio was not written once and in order (-queued +written):\n%s", diff)
	}
	for i, v := range encoded[len(want):] {
		if v != 0 {
			t.Fatalf("sample %d after the queued audio is %d, want silence", i, v)
		}
	}
}

func TestHeartbeatRunsWhileThereArePlayers(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the heartbeat needs Linux's timerfd")
	}
	a := NewAssist(AssistOptions{})
	o := NewOutput(&fakeConn{}, OutputOptions{Assist: a})
	p, q := o.newPlayer(24000), o.newPlayer(24000)
	a.add(p)
	a.add(q)
	if a.heartbeat == nil {
		t.Fatal("no heartbeat with two players")
	}
	a.remove(p)
	if a.heartbeat == nil {
		t.Fatal("the heartbeat stopped while a player was left")
	}
	done := a.heartbeatDone
	a.remove(q)
	if a.heartbeat != nil {
		t.Fatal("the heartbeat outlived the last player")
	}
	select {
	case <-done:
	default:
		t.Fatal("the heartbeat's goroutine still runs after the last player left")
	}
}
