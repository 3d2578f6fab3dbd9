package telephonytest

import (
	"math"
	"time"
)

// Energy thresholds of [SpeechSpan] and of the bot's audio: a 20 ms frame
// is voiced when its RMS is above a tenth of the loudest frame's (-20 dB)
// and above the floor (about -50 dBFS, well above μ-law's idle noise).
const (
	relativeThreshold = 0.1
	floorRMS          = 100
)

// rms returns the root mean square of s.
func rms(s []int16) float64 {
	if len(s) == 0 {
		return 0
	}
	var sum float64
	for _, v := range s {
		sum += float64(v) * float64(v)
	}
	return math.Sqrt(sum / float64(len(s)))
}

// voiced says whether a frame of the bot's audio carries sound.
func voiced(s []int16) bool { return rms(s) > floorRMS }

// SpeechSpan returns where the speech in pcm (mono, at rate) starts and
// ends, by energy in 20 ms frames: from the first voiced frame to the end
// of the last. ok is false when no frame is voiced.
func SpeechSpan(pcm []int16, rate int) (start, end time.Duration, ok bool) {
	n := rate / 50
	if n <= 0 || len(pcm) == 0 {
		return 0, 0, false
	}
	var levels []float64
	loudest := 0.0
	for i := 0; i < len(pcm); i += n {
		l := rms(pcm[i:min(i+n, len(pcm))])
		levels = append(levels, l)
		loudest = max(loudest, l)
	}
	threshold := max(loudest*relativeThreshold, floorRMS)
	first, last := -1, -1
	for i, l := range levels {
		if l > threshold {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return 0, 0, false
	}
	frame := 20 * time.Millisecond
	end = time.Duration(last+1) * frame
	if total := time.Duration(len(pcm)) * time.Second / time.Duration(rate); end > total {
		end = total
	}
	return time.Duration(first) * frame, end, true
}
