package pipeline

import (
	"testing"

	"github.com/framewire/framewire/frames"
)

// A ring that fills and empties reuses its blocks instead of allocating.
func TestRingReusesBlocks(t *testing.T) {
	var r ring
	f := &frames.Text{}
	allocs := testing.AllocsPerRun(100, func() {
		for range 3 * segmentSize {
			r.push(item{f: f})
		}
		for range 3 * segmentSize {
			r.pop()
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per fill-and-empty cycle", allocs)
	}
}

// A ring with a steady backlog reuses blocks too.
func TestRingWithBacklogReusesBlocks(t *testing.T) {
	var r ring
	f := &frames.Text{}
	for range 1000 {
		r.push(item{f: f})
	}
	allocs := testing.AllocsPerRun(100, func() {
		for range 500 {
			r.push(item{f: f})
			r.pop()
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per steady cycle", allocs)
	}
}

// Reset keeps uninterruptible frames in order and drops the rest.
func TestRingResetKeepsUninterruptibleInOrder(t *testing.T) {
	var r ring
	end := &frames.End{}
	res := &frames.FunctionCallResult{}
	for i := range 300 {
		switch i {
		case 10:
			r.push(item{f: res})
		case 290:
			r.push(item{f: end})
		default:
			r.push(item{f: &frames.Text{}})
		}
	}
	if dropped := r.reset(); dropped != 298 {
		t.Fatalf("dropped %d, want 298", dropped)
	}
	a, _ := r.pop()
	b, _ := r.pop()
	if a.f != res || b.f != end || r.len() != 0 {
		t.Fatalf("kept %v then %v, %d left", a.f, b.f, r.len())
	}
	if r.keep != 0 {
		t.Fatalf("uninterruptible count %d after emptying", r.keep)
	}
}

// An interruption flushes only what was queued before it arrived.
func TestRingResetBeforeKeepsLaterItems(t *testing.T) {
	var r ring
	for range 5 {
		r.push(item{f: &frames.Text{Text: "old"}})
	}
	cut := r.pushed
	r.push(item{f: &frames.Text{Text: "new"}})
	if dropped := r.resetBefore(cut); dropped != 5 {
		t.Fatalf("dropped %d, want 5", dropped)
	}
	it, _ := r.pop()
	if it.f.(*frames.Text).Text != "new" || r.len() != 0 {
		t.Fatalf("kept %v and %d more", it.f, r.len())
	}
}

// The exported queue that transports and services use keeps
// uninterruptible frames on Reset and drops everything on Clear.
func TestFrameQueueResetKeepsUninterruptible(t *testing.T) {
	var q FrameQueue
	q.Push(&frames.OutputAudioRaw{}, frames.Downstream)
	q.Push(&frames.FunctionCallResult{}, frames.Downstream)
	q.Push(&frames.TTSAudioRaw{}, frames.Downstream)
	q.Push(&frames.End{}, frames.Downstream)
	if n := q.Reset(); n != 2 || q.Len() != 2 {
		t.Fatalf("Reset dropped %d, %d left", n, q.Len())
	}
	if f, _, _ := q.Pop(); frames.TypeName(f) != "FunctionCallResultFrame" {
		t.Fatalf("first kept frame is %s", frames.TypeName(f))
	}
	if !q.Has(func(f frames.Frame) bool { _, ok := f.(*frames.End); return ok }) {
		t.Fatal("End lost")
	}
	if n := q.Clear(); n != 1 || q.Len() != 0 {
		t.Fatalf("Clear dropped %d", n)
	}
}

// PushAll is one step: frames pushed concurrently land before or after
// the whole batch, never inside it.
func TestFrameQueuePushAllIsOneStep(t *testing.T) {
	var q FrameQueue
	batch := make([]frames.Frame, 100)
	for i := range batch {
		batch[i] = &frames.Text{Text: "batch"}
	}
	const batches = 500
	stop, done := make(chan struct{}), make(chan int)
	go func() {
		others := 0
		for {
			select {
			case <-stop:
				done <- others
				return
			default:
			}
			q.Push(&frames.Text{Text: "other"}, frames.Downstream)
			others++
		}
	}()
	for range batches {
		q.PushAll(batch, frames.Downstream)
	}
	close(stop)
	others := <-done
	if q.HighWater() != others+batches*len(batch) {
		t.Fatalf("high water %d, want %d", q.HighWater(), others+batches*len(batch))
	}
	run := 0
	for {
		f, _, ok := q.Pop()
		if !ok {
			break
		}
		if f.(*frames.Text).Text == "batch" {
			run++
		} else if run%len(batch) != 0 {
			t.Fatalf("a frame pushed concurrently landed inside a batch, after %d of its frames", run%len(batch))
		}
	}
	if run != batches*len(batch) {
		t.Fatalf("%d batch frames popped, want %d", run, batches*len(batch))
	}
	q.PushAll(nil, frames.Downstream)
	if q.Len() != 0 {
		t.Fatal("PushAll(nil) queued something")
	}
}
