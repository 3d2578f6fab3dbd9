package telephonytest

import (
	"math"
	"testing"
	"time"
)

func tone(d time.Duration, amp float64) []int16 {
	s := make([]int16, int(d/time.Second*8000)+int(d%time.Second)*8000/int(time.Second))
	for i := range s {
		s[i] = int16(amp * math.Sin(2*math.Pi*400*float64(i)/8000))
	}
	return s
}

func TestTheSpeechSpanIsFoundByEnergy(t *testing.T) {
	pcm := append(append(make([]int16, 8000), tone(1200*time.Millisecond, 8000)...), tone(500*time.Millisecond, 20)...) // 1 s quiet, 1.2 s speech, a hiss
	start, end, ok := SpeechSpan(pcm, 8000)
	if !ok || start != time.Second || end != 2200*time.Millisecond {
		t.Errorf("SpeechSpan = %v, %v, %v; want 1s, 2.2s, true", start, end, ok)
	}
	if _, _, ok := SpeechSpan(make([]int16, 8000), 8000); ok {
		t.Error("silence has a speech span")
	}
	if _, _, ok := SpeechSpan(nil, 0); ok {
		t.Error("nothing at no rate has a speech span")
	}
}
