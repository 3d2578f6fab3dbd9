package openairealtime

import (
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
)

// Without a played tap, the position heard is the time since the audio
// started playing (since the bot started speaking, or since the item's
// first chunk), never more than was sent.
func TestPlayedEstimateWithoutTap(t *testing.T) {
	st := &state{p: &New(Options{APIKey: "k"}).main}
	st.item, st.itemSamples = "item_b1", 12000 // 500 ms sent
	st.itemFirst = time.Now().Add(-200 * time.Millisecond)
	if d := st.played(); d < 200*time.Millisecond || d > 450*time.Millisecond {
		t.Errorf("200 ms after the first chunk: played %v", d)
	}
	st.botStarted = time.Now().Add(-100 * time.Millisecond)
	if d := st.played(); d < 100*time.Millisecond || d > 190*time.Millisecond {
		t.Errorf("100 ms after the bot started speaking: played %v", d)
	}
	st.itemFirst, st.botStarted = time.Now().Add(-time.Hour), time.Time{}
	if d := st.played(); d != 500*time.Millisecond {
		t.Errorf("long after: played %v, want the 500 ms sent", d)
	}
}

// With the tap, the position is what the output took of this item.
func TestPlayedTapCountsThisItem(t *testing.T) {
	svc := New(Options{APIKey: "k"})
	tp := &svc.tap
	tp.used.Store(true)
	for _, f := range []*frames.TTSAudioRaw{
		{Audio: frames.Audio{PCM: make([]byte, 960), SampleRate: 24000, Channels: 1}, ContextID: "item_a"},
		{Audio: frames.Audio{PCM: make([]byte, 1920), SampleRate: 48000, Channels: 1}, ContextID: "item_b"},
		{Audio: frames.Audio{PCM: make([]byte, 1920), SampleRate: 48000, Channels: 1}, ContextID: "item_b"},
	} {
		if err := tp.ProcessFrame(t.Context(), nil, f, frames.Downstream); err != nil {
			t.Fatal(err)
		}
	}
	if d, ok := tp.played("item_b"); !ok || d != 40*time.Millisecond {
		t.Errorf("played(item_b) = %v, %v; want 40ms", d, ok)
	}
	if d, _ := tp.played("item_a"); d != 0 {
		t.Errorf("played(item_a) = %v after item_b started; want 0", d)
	}
}

// A transcript goes out a whole sentence at a time, in scripts without
// spaces too; the sentence still being spoken waits.
func TestTranscriptIsReleasedBySentence(t *testing.T) {
	svc := New(Options{APIKey: "k"})
	st := &state{p: &svc.main}
	r := &response{item: "item_b1"}
	r.sentences.Add("今日は良い天気ですね。散歩に行きましょう")
	st.releaseSentences(r, false)
	if held := r.sentences.Flush(); held != "散歩に行きましょう" {
		t.Errorf("held back %q, want the unfinished sentence", held)
	}
}
