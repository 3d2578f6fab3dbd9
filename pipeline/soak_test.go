package pipeline_test

import (
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
)

// A one-hour session (on synctest's fake clock) with audio, text,
// interruptions, a parallel pipeline and observers keeps memory flat:
// nothing in the runtime grows with the number of frames (failure mode 16).
func TestOneHourSessionKeepsMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test")
	}
	synctest.Test(t, func(t *testing.T) {
		var turns int
		obs := []observers.Observer{
			&observers.TurnTracker{OnTurnStarted: func(int) { turns++ }},
			observers.Func(func(observers.Event) {}),
		}
		par := pipeline.NewParallel(pipeline.New(pipeline.PassThrough{}), pipeline.New(pipeline.PassThrough{}, pipeline.PassThrough{}))
		task := pipeline.NewTask(pipeline.New(pipeline.PassThrough{}, par, pipeline.PassThrough{}), pipeline.TaskOptions{
			Observers: obs, Heartbeats: true, IdleTimeout: -1,
		})
		done := runTask(t, task)
		payload := make([]byte, 640)
		heapAt := func() uint64 {
			synctest.Wait()
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return ms.HeapAlloc
		}
		var at10min uint64
		for sec := 1; sec <= 3600; sec++ {
			for range 10 {
				task.QueueFrame(&frames.InputAudioRaw{Audio: frames.Audio{PCM: payload, SampleRate: 16000, Channels: 1}})
			}
			task.QueueFrame(&frames.Text{Text: "tick"})
			if sec%30 == 0 {
				task.QueueFrames(&frames.UserStartedSpeaking{}, &frames.Interruption{})
			}
			time.Sleep(time.Second)
			if sec == 600 {
				at10min = heapAt()
			}
		}
		atHour := heapAt()
		task.EndWhenDone()
		<-done
		if atHour > at10min+512<<10 {
			t.Fatalf("heap grew from %d KiB at 10 min to %d KiB at 60 min", at10min>>10, atHour>>10)
		}
		t.Logf("heap %d KiB at 10 min, %d KiB at 60 min; %d turns", at10min>>10, atHour>>10, turns)
	})
}
