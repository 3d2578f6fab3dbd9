package dsp

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// everySample is one of each 16-bit value, in order.
func everySample() []int16 {
	s := make([]int16, 0, 1<<16)
	for v := math.MinInt16; v <= math.MaxInt16; v++ {
		s = append(s, int16(v))
	}
	return s
}

func TestAppendULawMatchesThePerSampleEncoder(t *testing.T) {
	in := everySample()
	got := AppendULaw([]byte{0xAA}, in)
	if got[0] != 0xAA || len(got) != len(in)+1 {
		t.Fatalf("AppendULaw did not append: len %d, first %#x", len(got), got[0])
	}
	for i, s := range in {
		if want := LinearToULaw(s); got[i+1] != want {
			t.Fatalf("AppendULaw sample %d = %#x, want %#x", s, got[i+1], want)
		}
	}
}

func TestAppendULawSamplesMatchesThePerByteDecoder(t *testing.T) {
	var in []byte
	for b := 0; b < 256; b++ {
		in = append(in, byte(b))
	}
	got := AppendULawSamples([]int16{7}, in)
	want := []int16{7}
	for _, b := range in {
		want = append(want, ULawToLinear(b))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AppendULawSamples (-want +got):\n%s", diff)
	}
}

func TestAppendALawMatchesThePerSampleCodec(t *testing.T) {
	in := everySample()
	enc := AppendALaw(nil, in)
	for i, s := range in {
		if want := LinearToALaw(s); enc[i] != want {
			t.Fatalf("AppendALaw sample %d = %#x, want %#x", s, enc[i], want)
		}
	}
	dec := AppendALawSamples(nil, enc)
	for i, b := range enc {
		if want := ALawToLinear(b); dec[i] != want {
			t.Fatalf("AppendALawSamples byte %#x = %d, want %d", b, dec[i], want)
		}
	}
}

func TestBigEndianPCMIsNetworkOrder(t *testing.T) {
	samples := []int16{0x0102, -2, math.MaxInt16, math.MinInt16}
	be := AppendPCMBE(nil, samples)
	want := []byte{0x01, 0x02, 0xFF, 0xFE, 0x7F, 0xFF, 0x80, 0x00}
	if diff := cmp.Diff(want, be); diff != "" {
		t.Errorf("AppendPCMBE (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(samples, AppendSamplesBE(nil, append(be, 0x55))); diff != "" {
		t.Errorf("AppendSamplesBE ignoring the odd byte (-want +got):\n%s", diff)
	}
	le := AppendPCM(nil, samples)
	SwapPCMEndian(le)
	if diff := cmp.Diff(be, le); diff != "" {
		t.Errorf("SwapPCMEndian of little-endian (-want +got):\n%s", diff)
	}
}

func TestBatchCodecsDoNotAllocateIntoARoomyBuffer(t *testing.T) {
	samples := make([]int16, 160)
	bytes := make([]byte, 0, 320)
	out := make([]int16, 0, 160)
	allocs := testing.AllocsPerRun(100, func() {
		bytes = AppendULaw(bytes[:0], samples)
		out = AppendULawSamples(out[:0], bytes)
		bytes = AppendALaw(bytes[:0], samples)
		out = AppendALawSamples(out[:0], bytes)
		bytes = AppendPCMBE(bytes[:0], samples)
		out = AppendSamplesBE(out[:0], bytes)
		SwapPCMEndian(bytes)
	})
	if allocs != 0 {
		t.Errorf("batch codecs allocated %v times per run, want 0", allocs)
	}
}

func BenchmarkAppendULaw20ms(b *testing.B) {
	samples := make([]int16, 160)
	for i := range samples {
		samples[i] = int16(i * 200)
	}
	dst := make([]byte, 0, 160)
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendULaw(dst[:0], samples)
	}
}

func BenchmarkAppendULawSamples20ms(b *testing.B) {
	src := make([]byte, 160)
	dst := make([]int16, 0, 160)
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendULawSamples(dst[:0], src)
	}
}
