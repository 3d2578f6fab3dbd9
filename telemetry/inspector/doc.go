// Package inspector serves a live view of running sessions: the pipeline
// as a graph of processors with frame counts and estimated queue depths,
// a waterfall of each turn (STT, LLM, tool calls, TTS with latencies) and
// the last RTVI messages each way. It is an http.Handler, off unless a
// program mounts it, behind an authorizer hook; it is fed by one observer
// per session with bounded memory (ring buffers), and its page is embedded.
package inspector
