// Package frames defines the typed frames that flow through a framewire
// pipeline: lifecycle, turn-taking, audio, text, TTS, LLM, function-call,
// metrics and transport-message frames.
//
// Every frame is a pointer to a struct that embeds [Base] (identity,
// timestamps, broadcast sibling, metadata) and exactly one lane marker:
// [System] for urgent frames that overtake queued work and survive
// interruptions, or [Ordered] for frames processed in FIFO order and flushed
// by interruptions. Ordered frames that must survive a flush embed
// [Uninterruptible] instead. [Start] has its own top priority.
//
// A frame is immutable once it has been pushed: observers and parallel
// branches read the same instance from several goroutines. To change a frame,
// copy it. Sources that make frames at audio rate take them from a [Block]
// (and their samples from a [ByteBlock]), which allocates a second's worth
// at a time. This package depends only on the standard library, so
// observers and wire codecs can use it without importing the runtime.
package frames
