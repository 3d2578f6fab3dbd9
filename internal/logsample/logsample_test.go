package logsample

import (
	"runtime"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestEachMessageWritesTheFirstFiveThenOneInAHundred(t *testing.T) {
	obs, logs := observer.New(zapcore.DebugLevel)
	l := Logger(zap.New(obs))
	for range 305 {
		l.Warn("refused")
	}
	l.Info("another message")
	if got, want := logs.FilterMessage("refused").Len(), First+300/Thereafter; got != want {
		t.Errorf("%d of 305 lines of one message written, want %d", got, want)
	}
	if logs.FilterMessage("another message").Len() != 1 {
		t.Error("another message's first line was dropped")
	}
}

func TestDerivedLoggersShareTheCountsAndKeepTheirFields(t *testing.T) {
	obs, logs := observer.New(zapcore.DebugLevel)
	l := Logger(zap.New(obs))
	a, b := l.With(zap.String("session", "a")), l.Named("b")
	for range 10 {
		a.Warn("refused")
		b.Warn("refused")
	}
	if got := logs.FilterMessage("refused").Len(); got != First {
		t.Errorf("%d lines written by two loggers of one sampler, want %d", got, First)
	}
	if logs.FilterField(zap.String("session", "a")).Len() == 0 {
		t.Error("the derived logger's field is gone")
	}
}

func TestANewTickWritesAgain(t *testing.T) {
	obs, logs := observer.New(zapcore.DebugLevel)
	c := NewCore(obs)
	t0 := time.Unix(1000, 0)
	write := func(at time.Time) {
		ent := zapcore.Entry{Level: zapcore.WarnLevel, Message: "refused", Time: at}
		if ce := c.Check(ent, nil); ce != nil {
			ce.Write()
		}
	}
	for range 20 {
		write(t0)
	}
	for range 20 {
		write(t0.Add(Tick + time.Millisecond))
	}
	if got := logs.Len(); got != 2*First {
		t.Errorf("%d lines written over two ticks, want %d", got, 2*First)
	}
}

func TestSevereLinesAreNeverDropped(t *testing.T) {
	obs, logs := observer.New(zapcore.DebugLevel)
	l := Logger(zap.New(obs, zap.Development()))
	for range 20 {
		func() {
			defer func() { _ = recover() }()
			l.DPanic("bad")
		}()
	}
	if logs.Len() != 20 {
		t.Errorf("%d of 20 DPanic lines written", logs.Len())
	}
}

func TestANopLoggerStaysANopLogger(t *testing.T) {
	l := zap.NewNop()
	if Logger(l) != l {
		t.Error("a Nop logger was wrapped")
	}
	if Logger(nil) != nil {
		t.Error("nil became a logger")
	}
}

// TestASamplerTakesAKibibyteOrTwo is the reason for the package: a
// sampler per session must not cost what zap's does (448 KiB).
func TestASamplerTakesAKibibyteOrTwo(t *testing.T) {
	obs, _ := observer.New(zapcore.DebugLevel)
	base := zap.New(obs)
	const n = 100
	keep := make([]*zap.Logger, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range keep {
		keep[i] = Logger(base)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n; per > 4<<10 {
		t.Errorf("%d bytes of heap per sampled logger, want at most 4 KiB", per)
	}
	runtime.KeepAlive(keep)
}
