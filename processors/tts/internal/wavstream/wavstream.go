// Package wavstream reads the header of a WAV stream, such as the one
// espeak-ng writes to stdout or an HTTP response body, so the PCM that
// follows can be read as it arrives. dsp.DecodeWAV needs the whole file;
// this does not.
package wavstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/framewire/framewire/dsp"
)

// Header is the format of a WAV stream, read up to the start of its data.
type Header struct {
	// SampleRate is in Hz.
	SampleRate int
	// Channels is the number of interleaved channels.
	Channels int
	// DataBytes is the declared size of the data chunk; -1 when the writer
	// did not know it (a streamed file) and the data runs to the end.
	DataBytes int64
}

// Limits on what a header may hold before its data chunk.
const (
	maxFormatBytes  = 1 << 10
	maxSkippedBytes = 1 << 20
)

// ReadHeader reads a RIFF/WAVE header from r, leaving r at the first byte
// of the sample data. It accepts 16-bit integer PCM (plain or
// WAVE_FORMAT_EXTENSIBLE) and skips other chunks up to a bounded size.
// Errors wrap dsp.ErrNotWAV or dsp.ErrUnsupportedWAV where they apply.
func ReadHeader(r io.Reader) (Header, error) {
	var b [12]byte
	if _, err := io.ReadFull(r, b[:12]); err != nil {
		return Header{}, fmt.Errorf("wav stream: reading the RIFF header: %w", eofIsUnexpected(err))
	}
	if string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return Header{}, fmt.Errorf("wav stream: %w: no RIFF/WAVE header (starts with %q)", dsp.ErrNotWAV, b[:4])
	}
	var (
		h       Header
		haveFmt bool
		skipped int64
	)
	for {
		if _, err := io.ReadFull(r, b[:8]); err != nil {
			return Header{}, fmt.Errorf("wav stream: reading a chunk header: %w", eofIsUnexpected(err))
		}
		id := string(b[0:4])
		size := int64(binary.LittleEndian.Uint32(b[4:8]))
		switch id {
		case "fmt ":
			if size < 16 || size > maxFormatBytes {
				return Header{}, fmt.Errorf("wav stream: fmt chunk of %d bytes, want 16 to %d", size, maxFormatBytes)
			}
			body := make([]byte, size+size&1)
			if _, err := io.ReadFull(r, body); err != nil {
				return Header{}, fmt.Errorf("wav stream: reading the fmt chunk: %w", eofIsUnexpected(err))
			}
			if err := h.parseFormat(body[:size]); err != nil {
				return Header{}, err
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return Header{}, errors.New("wav stream: data chunk before the fmt chunk")
			}
			h.DataBytes = size
			// Streaming writers put a placeholder: 0, or a size near 2 GiB.
			if size == 0 || size >= 0x7fff0000 {
				h.DataBytes = -1
			}
			return h, nil
		default:
			skip := size + size&1
			skipped += skip
			if skipped > maxSkippedBytes {
				return Header{}, fmt.Errorf("wav stream: more than %d bytes of chunks before the data", maxSkippedBytes)
			}
			if _, err := io.CopyN(io.Discard, r, skip); err != nil {
				return Header{}, fmt.Errorf("wav stream: skipping chunk %q: %w", id, eofIsUnexpected(err))
			}
		}
	}
}

func (h *Header) parseFormat(c []byte) error {
	format := binary.LittleEndian.Uint16(c[0:2])
	channels := int(binary.LittleEndian.Uint16(c[2:4]))
	rate := int(binary.LittleEndian.Uint32(c[4:8]))
	align := int(binary.LittleEndian.Uint16(c[12:14]))
	bits := int(binary.LittleEndian.Uint16(c[14:16]))
	if format == 0xFFFE {
		if len(c) < 26 {
			return fmt.Errorf("wav stream: extensible fmt chunk of %d bytes, want at least 26", len(c))
		}
		format = binary.LittleEndian.Uint16(c[24:26])
	}
	switch {
	case format != 1:
		return fmt.Errorf("wav stream: %w: format code %#x (only integer PCM is read)", dsp.ErrUnsupportedWAV, format)
	case bits != 16:
		return fmt.Errorf("wav stream: %w: %d bits per sample (only 16 is read)", dsp.ErrUnsupportedWAV, bits)
	case channels < 1 || channels > 8:
		return fmt.Errorf("wav stream: %d channels, want 1 to 8", channels)
	case rate < 1000 || rate > 384000:
		return fmt.Errorf("wav stream: sample rate %d Hz, want 1000 to 384000", rate)
	case align != 2*channels:
		return fmt.Errorf("wav stream: block align %d, want %d for %d channels of 16 bits", align, 2*channels, channels)
	}
	h.SampleRate, h.Channels = rate, channels
	return nil
}

func eofIsUnexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
