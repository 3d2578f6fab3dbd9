package wavstream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/framewire/framewire/dsp"
)

func TestReadHeaderOfEspeakStream(t *testing.T) {
	data, err := os.ReadFile("testdata/espeak-head.wav")
	if err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(data)
	h, err := ReadHeader(r)
	if err != nil {
		t.Fatal(err)
	}
	if h != (Header{SampleRate: 22050, Channels: 1, DataBytes: -1}) {
		t.Errorf("header %+v; want 22050 Hz mono, streamed", h)
	}
	if rest := r.Len(); rest != len(data)-44 {
		t.Errorf("reader left at byte %d, want 44 (the first sample)", len(data)-rest)
	}
}

func TestReadHeaderOfAFile(t *testing.T) {
	pcm := dsp.Sine(440, 0.1, 16000, 10*time.Millisecond)
	file := dsp.AppendWAV(nil, pcm, 16000, 2)
	r := bytes.NewReader(file)
	h, err := ReadHeader(r)
	if err != nil {
		t.Fatal(err)
	}
	want := Header{SampleRate: 16000, Channels: 2, DataBytes: int64(len(pcm) - len(pcm)%4)}
	if h != want {
		t.Errorf("header %+v, want %+v", h, want)
	}
	rest, _ := io.ReadAll(r)
	if int64(len(rest)) != h.DataBytes {
		t.Errorf("%d data bytes follow, header says %d", len(rest), h.DataBytes)
	}
}

// wav builds a WAV header from chunks given as id and body.
func wav(chunks ...string) []byte {
	var b bytes.Buffer
	b.WriteString("RIFF\x00\x00\x00\x00WAVE")
	for i := 0; i+1 < len(chunks); i += 2 {
		b.WriteString(chunks[i])
		var n [4]byte
		binary.LittleEndian.PutUint32(n[:], uint32(len(chunks[i+1])))
		if chunks[i] == "data" && chunks[i+1] == "" {
			binary.LittleEndian.PutUint32(n[:], 0xffffffff)
		}
		b.Write(n[:])
		b.WriteString(chunks[i+1])
		if len(chunks[i+1])%2 == 1 {
			b.WriteByte(0)
		}
	}
	return b.Bytes()
}

func fmtChunk(format, channels uint16, rate uint32, bits uint16, extra ...byte) string {
	var c [16]byte
	binary.LittleEndian.PutUint16(c[0:], format)
	binary.LittleEndian.PutUint16(c[2:], channels)
	binary.LittleEndian.PutUint32(c[4:], rate)
	binary.LittleEndian.PutUint32(c[8:], rate*uint32(channels)*uint32(bits/8))
	binary.LittleEndian.PutUint16(c[12:], channels*bits/8)
	binary.LittleEndian.PutUint16(c[14:], bits)
	return string(c[:]) + string(extra)
}

func TestReadHeaderSkipsChunksAndReadsExtensible(t *testing.T) {
	ext := make([]byte, 8)  // cbSize, valid bits, channel mask
	ext = append(ext, 1, 0) // sub-format GUID starts with PCM's code
	ext = append(ext, make([]byte, 14)...)
	data := wav("LIST", "odd", "fmt ", fmtChunk(0xFFFE, 1, 48000, 16, ext...), "fact", "abcd", "data", "")
	h, err := ReadHeader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if h != (Header{SampleRate: 48000, Channels: 1, DataBytes: -1}) {
		t.Errorf("header %+v", h)
	}
}

func TestReadHeaderErrors(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want string
		is   error
	}{
		{"empty", nil, "unexpected EOF", io.ErrUnexpectedEOF},
		{"json error body", []byte(`{"error":{"message":"nope"}}`), "no RIFF/WAVE header", dsp.ErrNotWAV},
		{"mp3", []byte("ID3\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00"), "no RIFF/WAVE header", dsp.ErrNotWAV},
		{"truncated chunk header", wav()[:14], "reading a chunk header", io.ErrUnexpectedEOF},
		{"float samples", wav("fmt ", fmtChunk(3, 1, 24000, 32), "data", ""), "format code 0x3", dsp.ErrUnsupportedWAV},
		{"8-bit samples", wav("fmt ", fmtChunk(1, 1, 8000, 8), "data", ""), "8 bits per sample", dsp.ErrUnsupportedWAV},
		{"data first", wav("data", ""), "data chunk before the fmt chunk", nil},
		{"short fmt", wav("fmt ", "abcd"), "fmt chunk of 4 bytes", nil},
		{"silly rate", wav("fmt ", fmtChunk(1, 1, 10, 16), "data", ""), "sample rate 10 Hz", nil},
		{"no data", wav("fmt ", fmtChunk(1, 1, 16000, 16)), "reading a chunk header", io.ErrUnexpectedEOF},
		{"huge junk chunk", append(wav()[:12], []byte("junk\xff\xff\xff\x7f")...), "bytes of chunks before the data", nil},
		{"truncated junk chunk", append(wav()[:12], []byte("junk\x10\x00\x00\x00abc")...), "skipping chunk", io.ErrUnexpectedEOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadHeader(bytes.NewReader(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want it to wrap %v", err, tc.is)
			}
		})
	}
}

func TestReadHeaderBoundsSkippedChunks(t *testing.T) {
	data := wav()
	for i := 0; i < 40; i++ {
		data = append(data, wav("junk", strings.Repeat("x", 64<<10))[12:]...)
	}
	_, err := ReadHeader(bytes.NewReader(data))
	if err == nil || !strings.Contains(err.Error(), "bytes of chunks before the data") {
		t.Fatalf("err = %v; want the skip limit", err)
	}
}

// FuzzReadHeader: whatever the bytes, ReadHeader returns a sane format or
// an error, never panics, and agrees with dsp.DecodeWAV on the format.
func FuzzReadHeader(f *testing.F) {
	head, _ := os.ReadFile("testdata/espeak-head.wav")
	f.Add(head)
	f.Add(dsp.AppendWAV(nil, make([]byte, 64), 24000, 1))
	f.Add(wav("LIST", "odd", "fmt ", fmtChunk(1, 2, 44100, 16), "data", "abcd"))
	f.Add([]byte("RIFF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ReadHeader(bytes.NewReader(data))
		if err != nil {
			return
		}
		if h.SampleRate < 1000 || h.Channels < 1 || h.DataBytes < -1 {
			t.Fatalf("accepted header %+v", h)
		}
		if w, err := dsp.DecodeWAV(data); err == nil && (w.SampleRate != h.SampleRate || w.Channels != h.Channels) {
			t.Fatalf("DecodeWAV reads %d Hz × %d, ReadHeader %d Hz × %d", w.SampleRate, w.Channels, h.SampleRate, h.Channels)
		}
	})
}
