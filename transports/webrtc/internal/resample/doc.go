// Package resample is the WebRTC transport's stand-in sample-rate converter:
// a streaming rational polyphase FIR (Kaiser-windowed sinc) for the fixed
// ratios the transport uses (48 kHz or 8 kHz codecs to and from the
// pipeline's 16 kHz and 24 kHz). It exists until processors/audio provides
// the framework's resampler; the transport uses it only through a
// two-method interface, so the swap is one constructor.
package resample
