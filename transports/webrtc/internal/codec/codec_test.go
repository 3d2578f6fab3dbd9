package codec

import (
	"math"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestULawKnownValues(t *testing.T) {
	cases := []struct {
		pcm int16
		enc byte
	}{
		{0, 0xFF}, {-1, 0x7F}, {32767, 0x80}, {-32768, 0x00}, {1000, 0xCE}, {-1000, 0x4E},
	}
	for _, c := range cases {
		if got := ULaw(c.pcm); got != c.enc {
			t.Errorf("ULaw(%d) = %#02x, want %#02x", c.pcm, got, c.enc)
		}
	}
	if got := Linear(0xFF); got != 0 {
		t.Errorf("Linear(0xFF) = %d, want 0", got)
	}
	if got := Linear(0x80); got != 32124 {
		t.Errorf("Linear(0x80) = %d, want 32124", got)
	}
	if got := Linear(0x00); got != -32124 {
		t.Errorf("Linear(0x00) = %d, want -32124", got)
	}
}

func TestULawRoundTripStaysWithinTheQuantisationStep(t *testing.T) {
	for v := math.MinInt16; v <= math.MaxInt16; v += 7 {
		s := int16(v)
		back := int(Linear(ULaw(s)))
		// The µ-law step doubles per segment: at most 1/16 of the magnitude
		// plus the smallest step.
		limit := int(math.Abs(float64(v)))/16 + 8
		if v > 32635 || v < -32635 {
			limit = 32767 - 32124 + 8
		}
		if d := back - int(s); d > limit || d < -limit {
			t.Fatalf("%d -> %#02x -> %d: error %d over %d", s, ULaw(s), back, d, limit)
		}
	}
	for b := 0; b < 256; b++ {
		if got := ULaw(Linear(byte(b))); got != byte(b) && !(b == 0x7F && got == 0xFF) {
			t.Errorf("byte %#02x decodes to %d, which encodes to %#02x", b, Linear(byte(b)), got)
		}
	}
}

func TestPCMUCoders(t *testing.T) {
	c := PCMU()
	if FrameSamples(c.SampleRate) != 160 || len(c.Silence) != 160 {
		t.Fatalf("PCMU frame: %d samples, silence %d bytes; want 160 each", FrameSamples(c.SampleRate), len(c.Silence))
	}
	if c.NativeRate(16000) != 8000 {
		t.Errorf("PCMU NativeRate(16000) = %d, want 8000", c.NativeRate(16000))
	}
	if _, err := c.NewEncoder(16000, EncoderOptions{}); err == nil {
		t.Error("a PCMU encoder at 16 kHz was made")
	}
	enc, _ := c.NewEncoder(8000, EncoderOptions{})
	dec, _ := c.NewDecoder(8000)
	pcm := make([]int16, 160)
	for i := range pcm {
		pcm[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/8000))
	}
	buf := make([]byte, c.MaxPayload)
	n, err := enc.Encode(pcm, buf)
	if err != nil || n != 160 {
		t.Fatalf("Encode: %d bytes, %v", n, err)
	}
	out := make([]int16, MaxDecodedSamples(8000))
	m, err := dec.Decode(buf[:n], out)
	if err != nil || m != 160 {
		t.Fatalf("Decode: %d samples, %v", m, err)
	}
	if _, err := enc.Encode(pcm, buf[:10]); err == nil {
		t.Error("Encode into a short buffer: no error")
	}
	if _, err := dec.Decode(buf[:n], out[:10]); err == nil {
		t.Error("Decode into a short buffer: no error")
	}
	for i := range 160 {
		if s, _ := dec.Decode(c.Silence[i:i+1], out); s != 1 || out[0] != 0 {
			t.Fatalf("silence byte %d decodes to %d", i, out[0])
		}
	}
}

func TestDefaultAndForMime(t *testing.T) {
	d := Default()
	if HasOpus() != (d.Params.MimeType == "audio/opus") {
		t.Fatalf("HasOpus() = %v but Default() is %s", HasOpus(), d.Params.MimeType)
	}
	if c, err := ForMime("audio/PCMU"); err != nil || c.SampleRate != 8000 {
		t.Errorf("ForMime(audio/PCMU) = %v, %v", c.SampleRate, err)
	}
	if _, err := ForMime("audio/G722"); err == nil {
		t.Error("ForMime(audio/G722): no error")
	}
	_, err := ForMime("audio/opus")
	if HasOpus() != (err == nil) {
		t.Errorf("ForMime(audio/opus) error %v with HasOpus() = %v", err, HasOpus())
	}
}

func FuzzPCMUDecode(f *testing.F) {
	f.Add([]byte{0xFF, 0x00, 0x80, 0x7F})
	dec := PCMUDecoder{}
	out := make([]int16, 960)
	f.Fuzz(func(t *testing.T, payload []byte) {
		n, err := dec.Decode(payload, out)
		if len(payload) > len(out) {
			if err == nil {
				t.Fatal("oversized payload accepted")
			}
			return
		}
		if err != nil || n != len(payload) {
			t.Fatalf("Decode(%d bytes) = %d, %v", len(payload), n, err)
		}
	})
}
