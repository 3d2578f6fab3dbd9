package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEchoSendsTheUsersAudioBackAsBotAudio(t *testing.T) {
	task := pipeline.NewTask(pipeline.New(&echo{}), pipeline.TaskOptions{})
	got := make(chan frames.Frame, 4)
	pipeline.OnDownstream(task, func(f frames.Frame) {
		switch f.(type) {
		case *frames.InputAudioRaw, *frames.OutputAudioRaw:
			got <- f
		}
	})
	pcm := make([]byte, 640)
	task.QueueFrame(&frames.InputAudioRaw{Audio: frames.Audio{PCM: pcm, SampleRate: 16000, Channels: 1}})
	task.EndWhenDone()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := task.Run(ctx); err != nil {
		t.Fatal(err)
	}
	var in, out int
	for len(got) > 0 {
		switch f := (<-got).(type) {
		case *frames.InputAudioRaw:
			in++
		case *frames.OutputAudioRaw:
			out++
			if f.SampleRate != 16000 || &f.PCM[0] != &pcm[0] {
				t.Error("the echo changed the audio or copied it")
			}
		}
	}
	if in != 1 || out != 1 {
		t.Errorf("%d input and %d output frames came out, want 1 and 1", in, out)
	}
}

// escaped makes the frames escape, as pushing them does.
var escaped *frames.OutputAudioRaw

func TestEchoTakesItsFramesFromABlock(t *testing.T) {
	for _, tc := range []struct {
		perFrame bool
		want     float64 // allocations per 50 frames
	}{{false, 1}, {true, 50}} {
		e := &echo{perFrame: tc.perFrame}
		if a := testing.AllocsPerRun(20, func() {
			for range 50 {
				escaped = e.newFrame()
			}
		}); a != tc.want {
			t.Errorf("per frame %v: %.0f allocations per 50 frames; want %.0f", tc.perFrame, a, tc.want)
		}
	}
}

func TestRecordBurstWritesAFlightTraceAtTheFirstBurstOnly(t *testing.T) {
	dir := t.TempDir()
	var late atomic.Uint64
	file := filepath.Join(dir, "burst.trace")
	stop := recordBurst(file, late.Load)
	time.Sleep(50 * time.Millisecond)
	late.Add(burstFrames - 1) // not a burst
	time.Sleep(50 * time.Millisecond)
	if _, err := os.Stat(file); err == nil {
		t.Fatal("a trace was written before any burst")
	}
	late.Add(burstFrames)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if st, err := os.Stat(file); err == nil && st.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no trace written after a burst")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	quiet := filepath.Join(dir, "quiet.trace")
	stop = recordBurst(quiet, func() uint64 { return 0 })
	time.Sleep(30 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(quiet); err == nil {
		t.Error("a trace was written for a window without a burst")
	}
}

func TestStealIsTheEighthFigureOfTheCPULine(t *testing.T) {
	stat := "cpu  2630339 2413 539283 3671953 20184 0 73254 59258 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n"
	if got, want := stealIn(stat), 592580*time.Millisecond; got != want {
		t.Errorf("steal %v, want %v", got, want)
	}
	for _, bad := range []string{"", "cpu 1 2 3", "intr 1 2 3 4 5 6 7 8 9"} {
		if got := stealIn(bad); got != 0 {
			t.Errorf("steal in %q = %v, want 0", bad, got)
		}
	}
}

func TestLargestHeldCountsOnlyAnUnbrokenRunFromTheSmallest(t *testing.T) {
	counts, err := sessionCounts("100, 25,50,75,50")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{25, 50, 75, 100}; !slices.Equal(counts, want) {
		t.Fatalf("counts %v, want %v", counts, want)
	}
	for _, tc := range []struct {
		held map[int]bool
		want int
	}{
		{map[int]bool{25: true, 50: true, 75: true, 100: true}, 100},
		{map[int]bool{25: true, 50: false, 75: true, 100: true}, 25},
		{map[int]bool{25: false, 50: true, 75: true, 100: true}, 0},
		{map[int]bool{25: true, 50: true, 75: true, 100: false}, 75},
	} {
		if got := largestHeld(counts, tc.held); got != tc.want {
			t.Errorf("held %v: largest %d, want %d", tc.held, got, tc.want)
		}
	}
	for _, bad := range []string{"", "25,x", "0", "-5"} {
		if _, err := sessionCounts(bad); err == nil {
			t.Errorf("-n %q accepted", bad)
		}
	}
}
