// Package transports is the base every framewire transport is built on:
// the parts of moving a session's audio and messages that do not depend
// on the wire.
//
// A transport (transports/webrtc today; a WebSocket and telephony
// transports next) owns its connection: signalling, the socket, the codec.
// What it hands the pipeline is the same whatever the wire:
// frames.InputAudioRaw in fixed-size frames at the pipeline's rate, with
// the client held to real time, and the client's messages as frames. This
// package holds those pieces, so that each transport implements them once:
//
//   - [Pacer] holds a client's audio to real time plus a burst, before it
//     costs any decoding;
//   - [AudioFramer] turns decoded samples at the wire's rate into the
//     pipeline's fixed-size input frames, resampled, without allocating
//     per frame;
//   - [NewResampler] is the sample-rate converter every transport uses.
//
// The paced output, interruption flush, speaking state, played position
// and the lossless outbound message queue move here next (see
// docs/adding-a-transport.md for where each piece stands).
//
// The package imports frames, pipeline and dsp, never processors: a
// transport knows frames, not what the processors make of them.
package transports
