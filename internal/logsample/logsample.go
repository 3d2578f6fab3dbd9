// Package logsample bounds the log lines a client can cause: a logger it
// returns writes, of each message at each level, the first [First] lines
// a [Tick] and then one in [Thereafter], as zap's sampler does.
//
// zap's own sampler (zapcore.NewSamplerWithOptions) keeps 4,096 counters
// for each of 7 levels, 448 KiB per sampler. Made per session (the RTVI
// processor, the LLM service, the transport's session, the UI agent), that
// was 0.9 to 1.8 MiB of heap per session, most of a streaming session's
// memory: at 100 conformance sessions, 86 MiB of the server's 160 MiB
// heap. The sampler here keeps [Counters] counters (1 KiB) and shares
// them with every logger derived from it (With, Named), as zap's does.
package logsample

import (
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// The sampling policy of every framewire logger of client-caused lines.
const (
	// Tick is the sampling period.
	Tick = time.Second
	// First is how many lines of one message and level each Tick writes
	// before it samples.
	First = 5
	// Thereafter: past First, one line in Thereafter is written.
	Thereafter = 100
	// Counters is the size of a sampler's table: messages whose hashes
	// meet share a count (sampled sooner, never written more often).
	Counters = 64
)

// Logger returns l writing, of each message and level, the first [First]
// lines a [Tick] and then one in [Thereafter]. Lines at DPanic and above
// are never dropped. A disabled logger is returned as it is.
func Logger(l *zap.Logger) *zap.Logger {
	if l == nil || !l.Core().Enabled(zapcore.FatalLevel) { // zap.NewNop: nothing to sample
		return l
	}
	return l.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return NewCore(c) }))
}

// NewCore returns c sampled as [Logger] says, with a table of its own.
func NewCore(c zapcore.Core) zapcore.Core {
	return &core{Core: c, counts: new([Counters]counter)}
}

// counter counts one slot's lines in the current tick.
type counter struct {
	resetAt atomic.Int64 // unix nanoseconds at which the tick ends
	n       atomic.Uint64
}

// inc counts one line at t and returns its number in the tick.
func (c *counter) inc(t time.Time) uint64 {
	now := t.UnixNano()
	if end := c.resetAt.Load(); now <= end {
		return c.n.Add(1)
	} else if c.resetAt.CompareAndSwap(end, now+int64(Tick)) {
		c.n.Store(1)
		return 1
	}
	return c.n.Add(1)
}

type core struct {
	zapcore.Core
	counts *[Counters]counter
}

// With keeps the table: fields do not make a line another message.
func (c *core) With(fields []zapcore.Field) zapcore.Core {
	return &core{Core: c.Core.With(fields), counts: c.counts}
}

// Check drops the line when its message has been written enough this
// tick.
func (c *core) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if !c.Enabled(ent.Level) {
		return ce
	}
	if ent.Level < zapcore.DPanicLevel {
		i := (hash(ent.Message) + uint32(ent.Level-zapcore.DebugLevel)) % Counters
		if n := c.counts[i].inc(ent.Time); n > First && (n-First)%Thereafter != 0 {
			return ce
		}
	}
	return c.Core.Check(ent, ce)
}

// hash is FNV-1a of s, without allocating.
func hash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}
