package dsp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// WAV is a decoded WAV file: 16-bit PCM with its format.
type WAV struct {
	// SampleRate is in Hz.
	SampleRate int
	// Channels is the number of interleaved channels.
	Channels int
	// PCM holds the interleaved 16-bit little-endian samples, whole frames
	// only.
	PCM []byte
}

// Duration returns how long the audio lasts.
func (w WAV) Duration() time.Duration { return Duration(w.PCM, w.SampleRate, w.Channels) }

// ErrNotWAV is returned (wrapped) for input that is not a RIFF/WAVE file.
var ErrNotWAV = errors.New("not a WAV file")

// ErrUnsupportedWAV is returned (wrapped) for WAV files whose encoding this
// package does not read: anything other than 16-bit integer PCM.
var ErrUnsupportedWAV = errors.New("unsupported WAV encoding")

const (
	wavFormatPCM        = 1
	wavFormatExtensible = 0xFFFE
)

// DecodeWAV parses a WAV file held in memory. It accepts 16-bit integer PCM
// (plain or WAVE_FORMAT_EXTENSIBLE), skips chunks it does not know, and
// reads a data chunk whose declared size runs past the end of the input
// (as streaming writers such as espeak-ng --stdout leave it) up to the end.
// The returned PCM aliases data.
func DecodeWAV(data []byte) (WAV, error) {
	if len(data) < 12 || string(data[0:4]) != "RIFF" || string(data[8:12]) != "WAVE" {
		return WAV{}, fmt.Errorf("dsp: decode WAV: %w: missing RIFF/WAVE header", ErrNotWAV)
	}
	var w WAV
	haveFmt := false
	rest := data[12:]
	for len(rest) >= 8 {
		id := string(rest[0:4])
		size := uint64(binary.LittleEndian.Uint32(rest[4:8]))
		body := rest[8:]
		if size > uint64(len(body)) {
			if id != "data" {
				return WAV{}, fmt.Errorf("dsp: decode WAV: chunk %q declares %d bytes but only %d remain", id, size, len(body))
			}
			size = uint64(len(body)) // a streamed file: read to the end
		}
		chunk := body[:size]
		switch id {
		case "fmt ":
			if err := w.parseFormat(chunk); err != nil {
				return WAV{}, err
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return WAV{}, fmt.Errorf("dsp: decode WAV: data chunk before fmt chunk")
			}
			fb := 2 * w.Channels
			w.PCM = chunk[:len(chunk)-len(chunk)%fb]
			return w, nil
		}
		next := size + size&1 // chunks are padded to an even size
		if next > uint64(len(body)) {
			break
		}
		rest = body[next:]
	}
	if !haveFmt {
		return WAV{}, fmt.Errorf("dsp: decode WAV: %w: no fmt chunk", ErrNotWAV)
	}
	return WAV{}, fmt.Errorf("dsp: decode WAV: no data chunk")
}

func (w *WAV) parseFormat(c []byte) error {
	if len(c) < 16 {
		return fmt.Errorf("dsp: decode WAV: fmt chunk is %d bytes, want at least 16", len(c))
	}
	format := binary.LittleEndian.Uint16(c[0:2])
	channels := int(binary.LittleEndian.Uint16(c[2:4]))
	rate := binary.LittleEndian.Uint32(c[4:8])
	align := int(binary.LittleEndian.Uint16(c[12:14]))
	bits := int(binary.LittleEndian.Uint16(c[14:16]))
	if format == wavFormatExtensible {
		// cbSize, valid bits, channel mask, then the sub-format GUID whose
		// first two bytes are the format code.
		if len(c) < 26 {
			return fmt.Errorf("dsp: decode WAV: extensible fmt chunk is %d bytes, want at least 26", len(c))
		}
		format = binary.LittleEndian.Uint16(c[24:26])
	}
	switch {
	case format != wavFormatPCM:
		return fmt.Errorf("dsp: decode WAV: %w: format code %#x (only integer PCM is read)", ErrUnsupportedWAV, format)
	case bits != 16:
		return fmt.Errorf("dsp: decode WAV: %w: %d bits per sample (only 16 is read)", ErrUnsupportedWAV, bits)
	case channels < 1 || channels > maxChannels:
		return fmt.Errorf("dsp: decode WAV: %d channels, want 1 to %d", channels, maxChannels)
	case rate < 1 || rate > maxRate:
		return fmt.Errorf("dsp: decode WAV: sample rate %d Hz, want 1 to %d", rate, maxRate)
	case align != 2*channels:
		return fmt.Errorf("dsp: decode WAV: block align %d, want %d for %d channels of 16 bits", align, 2*channels, channels)
	}
	w.Channels, w.SampleRate = channels, int(rate)
	return nil
}

// ReadWAV reads a whole WAV file from r, refusing files larger than maxBytes
// (0 means 256 MiB), and decodes it with [DecodeWAV].
func ReadWAV(r io.Reader, maxBytes int64) (WAV, error) {
	if maxBytes <= 0 {
		maxBytes = 256 << 20
	}
	data, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err != nil {
		return WAV{}, fmt.Errorf("dsp: read WAV: %w", err)
	}
	if int64(len(data)) > maxBytes {
		return WAV{}, fmt.Errorf("dsp: read WAV: larger than the %d-byte limit", maxBytes)
	}
	return DecodeWAV(data)
}

// AppendWAV appends to dst a WAV file holding pcm (16-bit little-endian,
// interleaved) at sampleRate with channels channels. An incomplete trailing
// frame is dropped, so the header always agrees with the data.
func AppendWAV(dst, pcm []byte, sampleRate, channels int) []byte {
	channels = max(1, channels)
	fb := 2 * channels
	pcm = pcm[:len(pcm)-len(pcm)%fb]
	var h [44]byte
	copy(h[0:4], "RIFF")
	binary.LittleEndian.PutUint32(h[4:8], uint32(36+len(pcm)))
	copy(h[8:16], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:20], 16)
	binary.LittleEndian.PutUint16(h[20:22], wavFormatPCM)
	binary.LittleEndian.PutUint16(h[22:24], uint16(channels))
	binary.LittleEndian.PutUint32(h[24:28], uint32(sampleRate))
	binary.LittleEndian.PutUint32(h[28:32], uint32(sampleRate*fb))
	binary.LittleEndian.PutUint16(h[32:34], uint16(fb))
	binary.LittleEndian.PutUint16(h[34:36], 16)
	copy(h[36:40], "data")
	binary.LittleEndian.PutUint32(h[40:44], uint32(len(pcm)))
	dst = append(dst, h[:]...)
	return append(dst, pcm...)
}

// WriteWAV writes pcm to w as a WAV file (see [AppendWAV]).
func WriteWAV(w io.Writer, pcm []byte, sampleRate, channels int) error {
	if _, err := w.Write(AppendWAV(nil, pcm, sampleRate, channels)); err != nil {
		return fmt.Errorf("dsp: write WAV: %w", err)
	}
	return nil
}
