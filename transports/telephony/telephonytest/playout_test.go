package telephonytest

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ramp(n int, from int16) []int16 {
	s := make([]int16, n)
	for i := range s {
		s[i] = from + int16(i)
	}
	return s
}

func TestAMarkIsEchoedOnceTheAudioBeforeItHasPlayed(t *testing.T) {
	var p Playout
	if err := p.Push(ramp(400, 1)); err != nil { // 50 ms
		t.Fatal(err)
	}
	p.Mark("400")
	if err := p.Push(ramp(160, 1000)); err != nil {
		t.Fatal(err)
	}
	p.Mark("560")
	var got [][]string
	var bots []int
	for range 5 {
		frame, bot, echoes := p.Tick()
		if len(frame) != 160 {
			t.Fatalf("a frame of %d samples, want 160", len(frame))
		}
		got = append(got, append([]string(nil), echoes...))
		bots = append(bots, bot)
	}
	want := [][]string{nil, nil, {"400"}, {"560"}, nil}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b) })); diff != "" {
		t.Errorf("echoes per tick (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{160, 160, 160, 80, 0}, bots); diff != "" {
		t.Errorf("the bot's samples per tick (-want +got):\n%s", diff)
	}
}

func TestTheAudioPlaysInOrderThenSilence(t *testing.T) {
	var p Playout
	_ = p.Push(ramp(200, 1))
	first, _, _ := p.Tick()
	if diff := cmp.Diff(ramp(160, 1), first); diff != "" {
		t.Errorf("the first frame (-want +got):\n%s", diff)
	}
	second, bot, _ := p.Tick()
	want := append(ramp(40, 161), make([]int16, 120)...)
	if diff := cmp.Diff(want, second); diff != "" || bot != 40 {
		t.Errorf("the second frame: %d from the bot, (-want +got):\n%s", bot, diff)
	}
}

func TestAMarkWithNothingQueuedIsEchoedAtTheNextTick(t *testing.T) {
	var p Playout
	p.Mark("0")
	if _, _, echoes := p.Tick(); !cmp.Equal(echoes, []string{"0"}) {
		t.Errorf("echoes %v, want [0]", echoes)
	}
}

func TestAClearDropsTheQueueAndEchoesItsMarks(t *testing.T) {
	var p Playout
	_ = p.Push(ramp(320, 1))
	p.Mark("a")
	_ = p.Push(ramp(320, 1))
	p.Mark("b")
	p.Tick()
	echoes, dropped := p.Clear()
	if diff := cmp.Diff([]string{"a", "b"}, echoes); diff != "" || dropped != 480 {
		t.Errorf("clear dropped %d samples (want 480), echoes (-want +got):\n%s", dropped, diff)
	}
	frame, bot, late := p.Tick()
	if bot != 0 || len(late) != 0 || frame[0] != 0 {
		t.Errorf("after a clear: %d of the bot's samples and echoes %v, want silence and none", bot, late)
	}
	// Audio after the clear plays, and its mark follows it.
	_ = p.Push(ramp(160, 7))
	p.Mark("c")
	if frame, _, echoes := p.Tick(); frame[0] != 7 || !cmp.Equal(echoes, []string{"c"}) {
		t.Errorf("after a clear, new audio %d… with echoes %v, want 7… with [c]", frame[0], echoes)
	}
}

func TestThePlayoutRefusesAudioPastItsBound(t *testing.T) {
	p := Playout{MaxQueue: 320}
	if err := p.Push(ramp(320, 0)); err != nil {
		t.Fatal(err)
	}
	if err := p.Push(ramp(1, 0)); !errors.Is(err, ErrQueueFull) {
		t.Errorf("Push past the bound = %v, want ErrQueueFull", err)
	}
	if p.Queued() != 320 {
		t.Errorf("%d queued, want 320", p.Queued())
	}
}
