package dsp

import (
	"bytes"
	"math"
	"testing"
	"time"
)

func pcm(samples ...int16) []byte { return AppendPCM(nil, samples) }

func TestSamplesRoundTrip(t *testing.T) {
	in := []int16{0, 1, -1, 32767, -32768, 1234}
	b := AppendPCM(nil, in)
	if !bytes.Equal(b, []byte{0, 0, 1, 0, 0xff, 0xff, 0xff, 0x7f, 0, 0x80, 0xd2, 0x04}) {
		t.Fatalf("AppendPCM wrote % x, want little-endian samples", b)
	}
	out := AppendSamples(nil, append(b, 0x55)) // trailing odd byte ignored
	if len(out) != len(in) {
		t.Fatalf("AppendSamples gave %d samples, want %d", len(out), len(in))
	}
	for i := range in {
		if out[i] != in[i] || SampleAt(b, i) != in[i] {
			t.Fatalf("sample %d: got %d / %d, want %d", i, out[i], SampleAt(b, i), in[i])
		}
	}
	// Appending keeps what dst already holds.
	if got := AppendSamples([]int16{7}, b[:2]); len(got) != 2 || got[0] != 7 {
		t.Fatalf("AppendSamples did not append: %v", got)
	}
}

func TestConversionsDoNotAllocate(t *testing.T) {
	b := make([]byte, 640)
	s := make([]int16, 0, 320)
	out := make([]byte, 0, 640)
	if n := testing.AllocsPerRun(100, func() {
		s = AppendSamples(s[:0], b)
		out = AppendPCM(out[:0], s)
	}); n != 0 {
		t.Fatalf("%v allocations per conversion, want 0", n)
	}
}

func TestMixSaturatesAndPads(t *testing.T) {
	a := pcm(30000, -30000, 100, 5)
	b := pcm(10000, -10000, -50)
	got := AppendSamples(nil, Mix(nil, a, b))
	want := []int16{32767, -32768, 50, 5}
	if len(got) != len(want) {
		t.Fatalf("Mix gave %d samples, want %d (the longer input)", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Mix sample %d = %d, want %d", i, got[i], want[i])
		}
	}
	// Order of arguments does not matter.
	if !bytes.Equal(Mix(nil, a, b), Mix(nil, b, a)) {
		t.Fatal("Mix(a, b) != Mix(b, a)")
	}
	dst := pcm(32000, 1, 2)
	MixInto(dst, pcm(32000, 1))
	if got := AppendSamples(nil, dst); got[0] != 32767 || got[1] != 2 || got[2] != 2 {
		t.Fatalf("MixInto gave %v, want [32767 2 2]", got)
	}
}

func TestApplyGain(t *testing.T) {
	b := pcm(1000, -1000, 30000)
	ApplyGain(b, 2)
	if got := AppendSamples(nil, b); got[0] != 2000 || got[1] != -2000 || got[2] != 32767 {
		t.Fatalf("ApplyGain(2) gave %v", got)
	}
}

func TestLevels(t *testing.T) {
	if RMS(nil) != 0 || DBFS(nil) != MinDBFS || Peak(nil) != 0 {
		t.Fatal("empty audio must have zero level")
	}
	sq := pcm(32767, -32767, 32767, -32767)
	if db := DBFS(sq); math.Abs(db) > 0.01 {
		t.Fatalf("full-scale square wave: %.3f dBFS, want 0", db)
	}
	sine := Sine(1000, 1, 48000, 100*time.Millisecond)
	if db := DBFS(sine); math.Abs(db+3.01) > 0.02 {
		t.Fatalf("full-scale sine: %.3f dBFS, want -3.01", db)
	}
	half := Sine(1000, 0.5, 48000, 100*time.Millisecond)
	if db := DBFS(half); math.Abs(db+9.03) > 0.02 {
		t.Fatalf("half-scale sine: %.3f dBFS, want -9.03", db)
	}
	if p := Peak(pcm(3, -32768, 7)); p != 32768 {
		t.Fatalf("Peak = %d, want 32768", p)
	}
	if math.Abs(FromDBFS(ToDBFS(0.25))-0.25) > 1e-12 {
		t.Fatal("FromDBFS does not invert ToDBFS")
	}
}

func TestSilence(t *testing.T) {
	s := AppendSilence([]byte{1, 2}, 16000, 2, 20*time.Millisecond)
	if len(s) != 2+16000/50*4 {
		t.Fatalf("20 ms of 16 kHz stereo silence is %d bytes, want %d", len(s)-2, 16000/50*4)
	}
	if !IsSilence(s[2:], 0) || IsSilence(s, 0) {
		t.Fatal("IsSilence disagrees with AppendSilence")
	}
	if !IsSilence(pcm(20, -20, 0), SilenceThreshold) || IsSilence(pcm(0, -21), SilenceThreshold) {
		t.Fatal("IsSilence must accept |sample| <= threshold and reject above")
	}
	if !IsSilence(nil, 0) {
		t.Fatal("empty audio is silence")
	}
	if FrameBytes(24000, 1, 20*time.Millisecond) != 960 || Duration(make([]byte, 960), 24000, 1) != 20*time.Millisecond {
		t.Fatal("FrameBytes and Duration disagree on 20 ms at 24 kHz mono")
	}
	if Duration(make([]byte, 10), 0, 1) != 0 {
		t.Fatal("Duration with a zero rate must be 0")
	}
}

func TestMonoAndInterleaved(t *testing.T) {
	st := pcm(100, 300, -100, -300, 32767, 32767)
	if got := AppendSamples(nil, AppendMono(nil, st, 2)); len(got) != 3 || got[0] != 200 || got[1] != -200 || got[2] != 32767 {
		t.Fatalf("AppendMono gave %v, want [200 -200 32767]", got)
	}
	mono := pcm(1, -2)
	if got := AppendSamples(nil, AppendInterleaved(nil, mono, 3)); len(got) != 6 || got[2] != 1 || got[3] != -2 || got[5] != -2 {
		t.Fatalf("AppendInterleaved gave %v", got)
	}
	if !bytes.Equal(AppendMono(nil, mono, 1), mono) || !bytes.Equal(AppendInterleaved(nil, mono, 1), mono) {
		t.Fatal("one channel must copy")
	}
}

func TestToneIsContinuousAcrossChunks(t *testing.T) {
	whole := Tone{Freq: 440, Amplitude: 0.5, SampleRate: 16000, Channels: 2}
	want := whole.AppendDuration(nil, 100*time.Millisecond)
	chunked := Tone{Freq: 440, Amplitude: 0.5, SampleRate: 16000, Channels: 2}
	var got []byte
	for range 5 {
		got = chunked.AppendDuration(got, 20*time.Millisecond)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("a tone generated in 20 ms chunks differs from one generated at once")
	}
	chunked.Reset()
	if !bytes.Equal(chunked.AppendDuration(nil, 100*time.Millisecond), want) {
		t.Fatal("Reset did not restart the tone")
	}
	var zero Tone
	if b := zero.Append(nil, 10); len(b) != 20 || !IsSilence(b, 0) {
		t.Fatal("the zero Tone must produce silence")
	}
}

func TestToneAmplitudeMeasuresTheRightTone(t *testing.T) {
	a := Sine(440, 0.5, 16000, 100*time.Millisecond)
	b := Sine(1000, 0.1, 16000, 100*time.Millisecond)
	mix := Mix(nil, a, b)
	for _, c := range []struct{ freq, want float64 }{{440, 0.5}, {1000, 0.1}, {700, 0}, {3000, 0}} {
		got := ToneAmplitude(mix, 16000, 1, c.freq)
		if math.Abs(got-c.want) > 0.005 {
			t.Errorf("ToneAmplitude(%v Hz) = %.4f, want %.2f", c.freq, got, c.want)
		}
	}
	if f, _ := DominantFrequency(mix, 16000, 1, 300, 440, 1000); f != 440 {
		t.Errorf("DominantFrequency = %v, want 440", f)
	}
	if ToneAmplitude(nil, 16000, 1, 440) != 0 || ToneAmplitude(a, 0, 1, 440) != 0 {
		t.Error("no audio or no rate must measure 0")
	}
	st := AppendInterleaved(nil, a, 2)
	if got := ToneAmplitude(st, 16000, 2, 440); math.Abs(got-0.5) > 0.005 {
		t.Errorf("stereo ToneAmplitude = %.4f, want 0.5", got)
	}
	if n := testing.AllocsPerRun(10, func() { ToneAmplitude(mix, 16000, 1, 440) }); n != 0 {
		t.Errorf("ToneAmplitude allocates %v times, want 0", n)
	}
}
