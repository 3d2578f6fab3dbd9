package dsp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestWAVRoundTrip(t *testing.T) {
	tone := Tone{Freq: 440, Amplitude: 0.5, SampleRate: 24000, Channels: 2}
	pcm := tone.AppendDuration(nil, 50*time.Millisecond)
	file := AppendWAV(nil, append(pcm, 9), 24000, 2) // the odd byte is dropped
	if len(file) != 44+len(pcm) {
		t.Fatalf("WAV file is %d bytes, want a 44-byte header plus %d", len(file), len(pcm))
	}
	w, err := DecodeWAV(file)
	if err != nil {
		t.Fatal(err)
	}
	if w.SampleRate != 24000 || w.Channels != 2 || !bytes.Equal(w.PCM, pcm) {
		t.Fatalf("decoded %d Hz, %d channels, %d bytes; want 24000, 2, %d", w.SampleRate, w.Channels, len(w.PCM), len(pcm))
	}
	if w.Duration() != 50*time.Millisecond {
		t.Fatalf("Duration() = %v, want 50ms", w.Duration())
	}
	var buf bytes.Buffer
	if err := WriteWAV(&buf, pcm, 24000, 2); err != nil {
		t.Fatal(err)
	}
	r, err := ReadWAV(&buf, 0)
	if err != nil || !bytes.Equal(r.PCM, pcm) {
		t.Fatalf("ReadWAV after WriteWAV: %v", err)
	}
}

// espeak-ng --stdout writes a placeholder size in the RIFF and data
// headers because it cannot seek; the data runs to the end of the stream.
func TestDecodeWAVStreamedByEspeak(t *testing.T) {
	data, err := os.ReadFile("testdata/espeak-stream-head.wav")
	if err != nil {
		t.Fatal(err)
	}
	w, err := DecodeWAV(data)
	if err != nil {
		t.Fatal(err)
	}
	if w.SampleRate != 22050 || w.Channels != 1 || len(w.PCM) != len(data)-44 {
		t.Fatalf("got %d Hz, %d channels, %d bytes; want 22050, 1, %d", w.SampleRate, w.Channels, len(w.PCM), len(data)-44)
	}
}

func wavWithChunks(chunks ...[]byte) []byte {
	var body []byte
	for _, c := range chunks {
		body = append(body, c...)
	}
	out := []byte("RIFF")
	out = binary.LittleEndian.AppendUint32(out, uint32(4+len(body)))
	out = append(out, "WAVE"...)
	return append(out, body...)
}

func chunk(id string, body []byte) []byte {
	c := append([]byte(id), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...)
	c = append(c, body...)
	if len(body)%2 == 1 {
		c = append(c, 0)
	}
	return c
}

func fmtBody(format uint16, channels, rate, bits, align int) []byte {
	b := binary.LittleEndian.AppendUint16(nil, format)
	b = binary.LittleEndian.AppendUint16(b, uint16(channels))
	b = binary.LittleEndian.AppendUint32(b, uint32(rate))
	b = binary.LittleEndian.AppendUint32(b, uint32(rate*align))
	b = binary.LittleEndian.AppendUint16(b, uint16(align))
	return binary.LittleEndian.AppendUint16(b, uint16(bits))
}

func extensible(channels, rate int, sub uint16) []byte {
	b := fmtBody(wavFormatExtensible, channels, rate, 16, 2*channels)
	b = binary.LittleEndian.AppendUint16(b, 22) // cbSize
	b = binary.LittleEndian.AppendUint16(b, 16) // valid bits
	b = binary.LittleEndian.AppendUint32(b, 3)  // channel mask
	b = binary.LittleEndian.AppendUint16(b, sub)
	return append(b, make([]byte, 14)...)
}

func TestDecodeWAVVariants(t *testing.T) {
	data := pcm(1, 2, 3, 4)
	cases := []struct {
		name     string
		file     []byte
		wantErr  error
		errText  string
		channels int
		pcm      []byte
	}{
		{name: "odd-sized unknown chunk is skipped with its pad byte",
			file:     wavWithChunks(chunk("fmt ", fmtBody(1, 1, 16000, 16, 2)), chunk("LIST", []byte("abc")), chunk("data", data)),
			channels: 1, pcm: data},
		{name: "extensible PCM",
			file:     wavWithChunks(chunk("fmt ", extensible(2, 48000, 1)), chunk("data", data)),
			channels: 2, pcm: data},
		{name: "partial trailing frame dropped",
			file:     wavWithChunks(chunk("fmt ", fmtBody(1, 2, 16000, 16, 4)), chunk("data", data[:6])),
			channels: 2, pcm: data[:4]},
		{name: "not RIFF", file: []byte("RIFX\x00\x00\x00\x00WAVE"), wantErr: ErrNotWAV},
		{name: "empty", file: nil, wantErr: ErrNotWAV},
		{name: "no fmt", file: wavWithChunks(chunk("LIST", nil)), wantErr: ErrNotWAV},
		{name: "data before fmt", file: wavWithChunks(chunk("data", data), chunk("fmt ", fmtBody(1, 1, 16000, 16, 2))), errText: "data chunk before fmt"},
		{name: "no data", file: wavWithChunks(chunk("fmt ", fmtBody(1, 1, 16000, 16, 2))), errText: "no data chunk"},
		{name: "float", file: wavWithChunks(chunk("fmt ", fmtBody(3, 1, 16000, 32, 4)), chunk("data", data)), wantErr: ErrUnsupportedWAV},
		{name: "extensible float", file: wavWithChunks(chunk("fmt ", extensible(1, 16000, 3)), chunk("data", data)), wantErr: ErrUnsupportedWAV},
		{name: "8 bit", file: wavWithChunks(chunk("fmt ", fmtBody(1, 1, 8000, 8, 1)), chunk("data", data)), wantErr: ErrUnsupportedWAV},
		{name: "zero channels", file: wavWithChunks(chunk("fmt ", fmtBody(1, 0, 8000, 16, 0)), chunk("data", data)), errText: "0 channels"},
		{name: "zero rate", file: wavWithChunks(chunk("fmt ", fmtBody(1, 1, 0, 16, 2)), chunk("data", data)), errText: "sample rate 0"},
		{name: "bad align", file: wavWithChunks(chunk("fmt ", fmtBody(1, 2, 8000, 16, 2)), chunk("data", data)), errText: "block align 2"},
		{name: "short fmt", file: wavWithChunks(chunk("fmt ", make([]byte, 10)), chunk("data", data)), errText: "fmt chunk is 10 bytes"},
		{name: "truncated fmt", file: append([]byte("RIFF\x00\x00\x00\x00WAVEfmt \x10\x00\x00\x00"), 1, 0), errText: `chunk "fmt " declares 16 bytes`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := DecodeWAV(c.file)
			switch {
			case c.wantErr != nil || c.errText != "":
				if err == nil {
					t.Fatalf("no error, want one")
				}
				if c.wantErr != nil && !errors.Is(err, c.wantErr) {
					t.Fatalf("error %q does not wrap %v", err, c.wantErr)
				}
				if !strings.Contains(err.Error(), c.errText) {
					t.Fatalf("error %q does not mention %q", err, c.errText)
				}
			case err != nil:
				t.Fatal(err)
			case w.Channels != c.channels || !bytes.Equal(w.PCM, c.pcm):
				t.Fatalf("got %d channels and % x, want %d and % x", w.Channels, w.PCM, c.channels, c.pcm)
			}
		})
	}
}

func TestReadWAVLimit(t *testing.T) {
	file := AppendWAV(nil, make([]byte, 1000), 16000, 1)
	if _, err := ReadWAV(bytes.NewReader(file), 500); err == nil || !strings.Contains(err.Error(), "500-byte limit") {
		t.Fatalf("ReadWAV over the limit: %v, want a limit error", err)
	}
	if _, err := ReadWAV(bytes.NewReader(file), int64(len(file))); err != nil {
		t.Fatalf("ReadWAV at the limit: %v", err)
	}
}

// FuzzDecodeWAV: any input gives either an error or audio whose PCM is
// whole frames inside the input; never a panic.
func FuzzDecodeWAV(f *testing.F) {
	if data, err := os.ReadFile("testdata/espeak-stream-head.wav"); err == nil {
		f.Add(data)
	}
	f.Add(AppendWAV(nil, pcm(1, 2, 3), 16000, 1))
	f.Add(wavWithChunks(chunk("fmt ", extensible(2, 48000, 1)), chunk("LIST", []byte("x")), chunk("data", pcm(5, 6))))
	f.Add([]byte("RIFF\xff\xff\xff\xffWAVEfmt \xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := DecodeWAV(data)
		if err != nil {
			return
		}
		if w.Channels < 1 || w.SampleRate < 1 || len(w.PCM)%(2*w.Channels) != 0 || len(w.PCM) > len(data) {
			t.Fatalf("inconsistent result: %d Hz, %d channels, %d bytes from %d", w.SampleRate, w.Channels, len(w.PCM), len(data))
		}
		// What decodes re-encodes to a file that decodes the same.
		again, err := DecodeWAV(AppendWAV(nil, w.PCM, w.SampleRate, w.Channels))
		if err != nil || !bytes.Equal(again.PCM, w.PCM) || again.SampleRate != w.SampleRate || again.Channels != w.Channels {
			t.Fatalf("re-encoded WAV does not decode the same: %v", err)
		}
	})
}
