package rtvi

import (
	"fmt"
	"strings"

	"go.uber.org/zap/zapcore"

	"github.com/framewire/framewire/processors/rtvi/wire"
)

// SystemLogCore returns a zap core that sends every log entry at or above
// level to the client as system-log {text} (Pipecat's
// system_logs_enabled, off by default). Tee it into the application's
// logger to turn it on:
//
//	logger = zap.New(zapcore.NewTee(logger.Core(), p.SystemLogCore(zap.InfoLevel)))
//
// Entries are formatted as "2006-01-02 15:04:05.000 | LEVEL | message
// key=value ...". Entries logged before the task runs are dropped. Logs can
// hold private data: only enable this for trusted clients.
func (p *Processor) SystemLogCore(level zapcore.LevelEnabler) zapcore.Core {
	return &systemLogCore{LevelEnabler: level, p: p}
}

type systemLogCore struct {
	zapcore.LevelEnabler
	p      *Processor
	fields []zapcore.Field
}

func (c *systemLogCore) With(fields []zapcore.Field) zapcore.Core {
	return &systemLogCore{LevelEnabler: c.LevelEnabler, p: c.p, fields: append(append([]zapcore.Field(nil), c.fields...), fields...)}
}

func (c *systemLogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *systemLogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	var sb strings.Builder
	sb.WriteString(e.Time.Format("2006-01-02 15:04:05.000"))
	sb.WriteString(" | ")
	sb.WriteString(e.Level.CapitalString())
	sb.WriteString(" | ")
	if e.LoggerName != "" {
		sb.WriteString(e.LoggerName)
		sb.WriteString(": ")
	}
	sb.WriteString(e.Message)
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range c.fields {
		f.AddTo(enc)
	}
	for _, f := range fields {
		f.AddTo(enc)
	}
	for _, f := range append(append([]zapcore.Field(nil), c.fields...), fields...) {
		if v, ok := enc.Fields[f.Key]; ok {
			sb.WriteByte(' ')
			sb.WriteString(f.Key)
			sb.WriteByte('=')
			sb.WriteString(strings.TrimSpace(strings.ReplaceAll(fmt.Sprint(v), "\n", " ")))
		}
	}
	c.p.sendBytes(wire.EncodeTextMessage(wire.TypeSystemLog, sb.String()), wire.TypeSystemLog, 0)
	return nil
}

func (c *systemLogCore) Sync() error { return nil }
