package rtvi

import (
	"encoding/base64"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

func msg(typ, id, data string) string {
	return `{"label":"rtvi-ai","type":"` + typ + `","id":"` + id + `","data":` + data + `}`
}

// A raw-audio claiming a rate or channel count no device has (1 Hz, 3
// channels, 96 kHz) pushes no audio and is answered with an error-response
// that names the allowed values: before, 1 Hz went on to the speech
// recognizer's resampler, which made 16000 samples of each one.
func TestRawAudioOutsideRealFormatsIsRefusedWithErrorResponse(t *testing.T) {
	pcm := base64.StdEncoding.EncodeToString(make([]byte, 8000)) // 10.7 KB of base64, as in the report
	for _, tc := range []struct{ name, data, want string }{
		{"1 Hz", `{"base64Audio":"` + pcm + `","sampleRate":1,"numChannels":1}`, "want 8000, 11025"},
		{"a prime rate", `{"base64Audio":"` + pcm + `","sampleRate":47123,"numChannels":1}`, "want 8000, 11025"},
		{"96 kHz", `{"base64Audio":"` + pcm + `","sampleRate":96000,"numChannels":1}`, "or 48000 Hz, got 96000"},
		{"3 channels", `{"base64Audio":"` + pcm + `","sampleRate":16000,"numChannels":3}`, "want 1 or 2, got 3"},
		{"a batch at 1 Hz", `{"base64AudioBatch":["` + pcm + `"],"sampleRate":1,"numChannels":1}`, "want 8000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ := wire.TypeRawAudio
			if strings.Contains(tc.data, "Batch") {
				typ = wire.TypeRawAudioBatch
			}
			res := runProcessor(t, NewProcessor(Options{}), msg(typ, "bomb1", tc.data))
			for _, f := range res.Down() {
				if a, ok := f.(*frames.InputAudioRaw); ok {
					t.Fatalf("audio pushed: %d bytes at %d Hz, %d channels", len(a.PCM), a.SampleRate, a.Channels)
				}
			}
			got := sent(t, res.Down())
			if len(got) != 1 {
				t.Fatalf("replies: %v, want one error-response", got)
			}
			m := got[0].(obj)
			text, _ := m["data"].(obj)["error"].(string)
			if m["type"] != "error-response" || m["id"] != "bomb1" || !strings.HasPrefix(text, "Invalid message: ") || !strings.Contains(text, tc.want) {
				t.Fatalf("reply %v, want an error-response to bomb1 whose text contains %q", m, tc.want)
			}
		})
	}
	// Every real rate passes.
	for _, rate := range wire.ClientAudioRates {
		for _, ch := range []int{1, 2} {
			m, err := wire.Decode([]byte(msg(wire.TypeRawAudio, "ok", `{"base64Audio":"AAAA","sampleRate":`+strconv.Itoa(rate)+`,"numChannels":`+strconv.Itoa(ch)+`}`)))
			if err != nil {
				t.Errorf("%d Hz, %d channels: %v", rate, ch, err)
				continue
			}
			if d := m.Data.(*wire.RawAudio); d.SampleRate != rate || d.NumChannels != ch {
				t.Errorf("decoded %+v", d)
			}
		}
	}
}

// Refusing a rate bomb costs about what decoding the message costs: no
// allocation grows with the rate's ratio (before: 245 MB for this message
// once it reached a resampler).
func TestRawAudioRateBombCostsNoLargeAllocation(t *testing.T) {
	pcm := base64.StdEncoding.EncodeToString(make([]byte, 8000))
	raw := []byte(msg(wire.TypeRawAudio, "bomb1", `{"base64Audio":"`+pcm+`","sampleRate":1,"numChannels":1}`))
	p := NewProcessor(Options{})
	rec := &pusher{}
	p.sink = rec
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 20
	for range n {
		p.handleRaw(t.Context(), rec, raw)
	}
	runtime.ReadMemStats(&after)
	if got := (after.TotalAlloc - before.TotalAlloc) / n; got > 64<<10 {
		t.Fatalf("one refused raw-audio allocated %d bytes, want under 64 KiB (the message is %d bytes)", got, len(raw))
	}
	for _, f := range rec.frames {
		if _, ok := f.(*frames.InputAudioRaw); ok {
			t.Fatal("audio pushed")
		}
	}
	if got := len(ofType(rec.messages(t), wire.TypeErrorResponse)); got != n {
		t.Fatalf("%d error-responses for %d refused messages", got, n)
	}
}
