package codec

import (
	"math"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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
