package wire

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/framewire/framewire/dsp"
)

// The encoders write protobuf's canonical form of each message: fields in
// number order, proto3 zero values left out, the optional pts whenever it
// is set. That is byte for byte what proto.Marshal writes for the same
// message, and what the tests check.

// AppendAudio appends the frame carrying pcm (signed 16-bit little-endian,
// channels interleaved) at sampleRate Hz to dst and returns the extended
// buffer; it allocates only when dst lacks room ([AudioSize] says how
// much). The frame has no id or name: the browser client reads only the
// PCM, and Pipecat's server ignores both.
//
// The 1.7.1 browser client plays every audio frame at its own player rate
// (24 kHz unless the page sets another) whatever sampleRate says, so the
// transport sends PCM at that rate; the field is for other clients.
// sampleRate and channels are sent as protobuf uint32, unchecked: Decode's
// bounds are for input.
func AppendAudio(dst, pcm []byte, sampleRate, channels int) []byte {
	dst = protowire.AppendTag(dst, protowire.Number(KindAudio), protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(audioPayloadSize(len(pcm), sampleRate, channels)))
	if len(pcm) > 0 {
		dst = protowire.AppendTag(dst, 3, protowire.BytesType)
		dst = protowire.AppendBytes(dst, pcm)
	}
	return appendFormat(dst, sampleRate, channels)
}

// AppendAudioSamples is AppendAudio for samples (channels interleaved),
// written as little-endian PCM straight into dst, without the copy a
// caller's own conversion would cost.
func AppendAudioSamples(dst []byte, samples []int16, sampleRate, channels int) []byte {
	n := 2 * len(samples)
	dst = protowire.AppendTag(dst, protowire.Number(KindAudio), protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(audioPayloadSize(n, sampleRate, channels)))
	if n > 0 {
		dst = protowire.AppendTag(dst, 3, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(n))
		dst = dsp.AppendPCM(dst, samples)
	}
	return appendFormat(dst, sampleRate, channels)
}

// appendFormat appends an audio frame's rate and channels.
func appendFormat(dst []byte, sampleRate, channels int) []byte {
	if rate := uint32(sampleRate); rate != 0 {
		dst = protowire.AppendTag(dst, 4, protowire.VarintType)
		dst = protowire.AppendVarint(dst, uint64(rate))
	}
	if ch := uint32(channels); ch != 0 {
		dst = protowire.AppendTag(dst, 5, protowire.VarintType)
		dst = protowire.AppendVarint(dst, uint64(ch))
	}
	return dst
}

// AudioSize is the length of the frame AppendAudio writes for pcmBytes of
// PCM, for sizing a buffer once.
func AudioSize(pcmBytes, sampleRate, channels int) int {
	return 1 + protowire.SizeBytes(audioPayloadSize(pcmBytes, sampleRate, channels))
}

func audioPayloadSize(pcmBytes, sampleRate, channels int) int {
	n := 0
	if pcmBytes > 0 {
		n += 1 + protowire.SizeBytes(pcmBytes)
	}
	if rate := uint32(sampleRate); rate != 0 {
		n += 1 + protowire.SizeVarint(uint64(rate))
	}
	if ch := uint32(channels); ch != 0 {
		n += 1 + protowire.SizeVarint(uint64(ch))
	}
	return n
}

// AppendMessage appends the frame carrying a transport message to dst and
// returns the extended buffer, allocating only when dst lacks room
// ([MessageSize]). data is the message's JSON text, sent as it is: for the
// browser client an RTVI envelope whose "label" is "rtvi-ai" (it drops any
// other), in UTF-8 (the field is a protobuf string).
func AppendMessage(dst, data []byte) []byte {
	n := 0
	if len(data) > 0 {
		n = 1 + protowire.SizeBytes(len(data))
	}
	dst = protowire.AppendTag(dst, protowire.Number(KindMessage), protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(n))
	if len(data) > 0 {
		dst = protowire.AppendTag(dst, 1, protowire.BytesType)
		dst = protowire.AppendBytes(dst, data)
	}
	return dst
}

// MessageSize is the length of the frame AppendMessage writes for
// dataBytes of JSON.
func MessageSize(dataBytes int) int {
	n := 0
	if dataBytes > 0 {
		n = 1 + protowire.SizeBytes(dataBytes)
	}
	return 1 + protowire.SizeBytes(n)
}

// AppendFrame appends f, of any kind, to dst and returns the extended
// buffer: the fields f's kind has (the others are ignored), in the same
// canonical form as AppendAudio and AppendMessage. A Frame that Decode
// returned encodes to a message that decodes to an equal Frame. It is for
// Go clients and tests, and for the payloads the server rarely sends; a
// zero Kind appends nothing, the encoding of a Frame with no payload.
func AppendFrame(dst []byte, f *Frame) []byte {
	if f.Kind < KindText || f.Kind > KindInterruption {
		return dst
	}
	dst = protowire.AppendTag(dst, protowire.Number(f.Kind), protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(payloadSize(f)))
	return appendPayload(dst, f)
}

// field is one payload field as AppendFrame writes it.
type field struct {
	num   protowire.Number
	bytes []byte // a string or bytes field
	value uint64 // a varint field
	isVar bool
	keep  bool // sent even when zero: the set optional pts
}

// fields lists f's payload fields in number order into buf, a caller's
// array so that listing them does not allocate.
func fields(buf *[6]field, f *Frame) []field {
	l := buf[:0]
	switch f.Kind {
	case KindMessage:
		return append(l, field{num: 1, bytes: f.Data})
	case KindText, KindAudio, KindTranscription, KindInterruption:
		l = append(l, field{num: 1, value: f.ID, isVar: true}, field{num: 2, bytes: f.Name})
	}
	switch f.Kind {
	case KindText:
		l = append(l, field{num: 3, bytes: f.Text})
	case KindAudio:
		l = append(l,
			field{num: 3, bytes: f.Audio},
			field{num: 4, value: uint64(uint32(f.SampleRate)), isVar: true},
			field{num: 5, value: uint64(uint32(f.Channels)), isVar: true},
			field{num: 6, value: f.PTS, isVar: true, keep: f.HasPTS})
	case KindTranscription:
		l = append(l, field{num: 3, bytes: f.Text}, field{num: 4, bytes: f.UserID}, field{num: 5, bytes: f.Timestamp})
	}
	return l
}

func payloadSize(f *Frame) int {
	var buf [6]field
	n := 0
	for _, fd := range fields(&buf, f) {
		switch {
		case fd.isVar && (fd.value != 0 || fd.keep):
			n += 1 + protowire.SizeVarint(fd.value)
		case !fd.isVar && len(fd.bytes) > 0:
			n += 1 + protowire.SizeBytes(len(fd.bytes))
		}
	}
	return n
}

func appendPayload(dst []byte, f *Frame) []byte {
	var buf [6]field
	for _, fd := range fields(&buf, f) {
		switch {
		case fd.isVar && (fd.value != 0 || fd.keep):
			dst = protowire.AppendTag(dst, fd.num, protowire.VarintType)
			dst = protowire.AppendVarint(dst, fd.value)
		case !fd.isVar && len(fd.bytes) > 0:
			dst = protowire.AppendTag(dst, fd.num, protowire.BytesType)
			dst = protowire.AppendBytes(dst, fd.bytes)
		}
	}
	return dst
}
