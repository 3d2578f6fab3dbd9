package frames

// Optional interfaces. A frame, or a function call's result, that knows
// something about itself which a package far from its own needs (the
// telemetry, a transport) says so by implementing one of these, as an
// http.ResponseWriter that can flush implements http.Flusher: the reader
// asserts the interface and never reflects on, or decodes, another
// package's types.

// UICommander is implemented by a frame that asks the client to run a UI
// command (processors/rtvi's UICommandFrame).
type UICommander interface {
	Frame
	// UICommandName returns the command's name, for example "scroll_to".
	UICommandName() string
}

// UISnapshotter is implemented by a frame that carries the client's UI
// snapshot (processors/rtvi's UISnapshotFrame).
type UISnapshotter interface {
	Frame
	// UISnapshotBytes returns the size of the message the snapshot came
	// in.
	UISnapshotBytes() int
}

// Outcomer is implemented by a function call's result
// ([FunctionCallResult].Result) that says how the call went:
// processors/llm's ErrorResult (it failed) and the UI agent's reply (the
// refs it skipped). A result that does not implement it succeeded.
type Outcomer interface {
	// Outcome reports whether the call succeeded, and the refs of the
	// client's UI (element ids) that it could not act on.
	Outcome() (ok bool, skipped []string)
}
