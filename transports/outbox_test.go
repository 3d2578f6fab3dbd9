package transports

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func texts(msgs [][]byte) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m))
	}
	return out
}

// drain pops every queued message, oldest first.
func drain(o *Outbox, now time.Time) []string {
	var out []string
	for {
		m, ok := o.Peek()
		if !ok {
			return out
		}
		o.Pop(now)
		out = append(out, string(m))
	}
}

// Messages leave in the order they were pushed; a superseded one is left
// out and its successor keeps the order of its own push.
func TestOutboxKeepsOrderAndCoalescesSuperseded(t *testing.T) {
	var o Outbox
	now := time.Unix(1e9, 0)
	o.Push([]byte("a"), 0, now)
	o.Push([]byte("level 1"), 7, now)
	o.Push([]byte("b"), 0, now)
	if !o.Supersede(7) {
		t.Fatal("Supersede(7) found no queued message with key 7")
	}
	o.Push([]byte("level 2"), 7, now)
	o.Push([]byte("c"), 0, now)
	if o.Supersede(8) {
		t.Fatal("Supersede(8) found a message no one queued")
	}
	if got, want := o.Len(), 4; got != want {
		t.Fatalf("Len() = %d, want %d", got, want)
	}
	if got, want := o.Bytes(), len("a")+len("b")+len("level 2")+len("c"); got != want {
		t.Fatalf("Bytes() = %d, want %d", got, want)
	}
	if diff := cmp.Diff([]string{"a", "b", "level 2", "c"}, drain(&o, now)); diff != "" {
		t.Fatalf("messages out (-want +got):\n%s", diff)
	}
	if !o.Empty() || o.Bytes() != 0 || o.HighWater() != 4 {
		t.Fatalf("after draining: Empty %v, Bytes %d, HighWater %d; want true, 0, 4", o.Empty(), o.Bytes(), o.HighWater())
	}
}

// A key whose message has left the queue supersedes nothing: the client
// already has it.
func TestOutboxSupersedesOnlyWhatIsStillQueued(t *testing.T) {
	var o Outbox
	now := time.Unix(1e9, 0)
	o.Push([]byte("p1"), 3, now)
	drain(&o, now)
	if o.Supersede(3) {
		t.Fatal("Supersede found a message that was already sent")
	}
}

// An empty message is a message, not a hole.
func TestOutboxKeepsEmptyMessages(t *testing.T) {
	var o Outbox
	o.Push(nil, 0, time.Now())
	o.Push([]byte{}, 0, time.Now())
	if got := drain(&o, time.Now()); len(got) != 2 {
		t.Fatalf("got %d messages out of 2 empty ones", len(got))
	}
}

// Senders waiting for room are woken when messages leave, and by Reset.
func TestOutboxWakesWaitersOnProgressAndReset(t *testing.T) {
	var o Outbox
	o.Push([]byte("x"), 0, time.Now())
	w := o.Wait()
	o.Pop(time.Now())
	o.Notify()
	select {
	case <-w:
	default:
		t.Fatal("Notify did not wake the waiter")
	}
	o.Push([]byte("y"), 0, time.Now())
	w = o.Wait()
	if n := o.Reset(); n != 1 {
		t.Fatalf("Reset() = %d, want 1", n)
	}
	select {
	case <-w:
	default:
		t.Fatal("Reset did not wake the waiter")
	}
}

// Since moves when the queue becomes non-empty and when it makes
// progress, not when more is pushed behind a stuck head.
func TestOutboxSinceMarksProgress(t *testing.T) {
	var o Outbox
	t0 := time.Unix(1e9, 0)
	o.Push([]byte("a"), 0, t0)
	o.Push([]byte("b"), 0, t0.Add(time.Second))
	if !o.Since().Equal(t0) {
		t.Fatalf("Since() = %v after a push behind a waiting message, want %v", o.Since(), t0)
	}
	o.Peek()
	o.Pop(t0.Add(2 * time.Second))
	if !o.Since().Equal(t0.Add(2 * time.Second)) {
		t.Fatalf("Since() = %v after a pop, want the pop's time", o.Since())
	}
}

// A long-lived queue compacts: its arrays do not grow with the messages
// that went through it, only with how many wait at once.
func TestOutboxCompacts(t *testing.T) {
	var o Outbox
	now := time.Now()
	for range 10 {
		o.Push([]byte("m"), 0, now)
	}
	for range 100000 {
		o.Push([]byte("m"), 0, now)
		o.Peek()
		o.Pop(now)
	}
	if c := cap(o.q); c > 4096 {
		t.Fatalf("the queue's array holds %d entries after 100,000 messages with 11 queued at most", c)
	}
	if got := len(texts(o.Queued())); got != o.Len() || got != 10 {
		t.Fatalf("Queued() has %d messages, Len() says %d, want 10", got, o.Len())
	}
}
