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
//   - [NewResampler] is the sample-rate converter every transport uses;
//   - [MessageLimiter] applies [InboundLimits] to a client's messages and
//     turns refusals into frames.InputTransportRefused, within a budget;
//   - [Output] is the paced output processor: a 20 ms media clock that
//     plays the bot's audio into the transport's [Conn], releases the
//     frames queued behind the audio as it is played, clears its queue on
//     an interruption (and the client's buffer, for a Conn that is an
//     [AudioFlusher]), and keeps the bot's speaking state; an [Assist]
//     shared by a server's outputs keeps their clocks on time when the
//     scheduler lags;
//   - [Outbox] is the queue of messages a connection cannot take yet, in
//     order, superseded ones coalesced.
//
// A transport supplies the wire: a Conn that encodes a frame of PCM and
// writes it (Opus on an RTP track, a protobuf message on a socket, base64
// μ-law in a provider's JSON), and the loop that reads its client (see
// docs/adding-a-transport.md).
//
// The package imports frames, pipeline and dsp, never processors: a
// transport knows frames, not what the processors make of them.
package transports
