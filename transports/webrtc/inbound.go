package webrtc

import (
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/internal/logsample"
	"github.com/framewire/framewire/transports"
)

// refuseEndBound is how long a session that ends for its refusals waits
// for its pipeline to tell the client why (the refusal frame reaching the
// output) before it ends anyway.
const refuseEndBound = 2 * time.Second

// refused handles a client message the limiter refused (report as admit
// returned it): it passes it to the pipeline, whose message processor
// answers the request by its id and tells the client about the drops
// (at most once per ErrorInterval), or ends the session when the client
// stays far over the limit. The transport writes no message itself.
func (s *Session) refused(msg []byte, report uint64) {
	s.srv.metrics.signal.Refused(s.ctx, limitInboundRate)
	f := s.limiter.Refuse(msg, report, time.Now())
	if f == nil {
		return
	}
	if report > 0 {
		s.messageLog().Warn("the client sends too fast; dropping its messages",
			zap.Uint64("dropped", report), zap.Uint64("dropped_total", s.limiter.Dropped()))
	}
	n := len(f.Message)
	end := f.End
	s.mu.Lock()
	delivered := s.deliverLocked(f, n)
	ending := end != "" && delivered && !s.closing
	if ending {
		s.bg.Add(1)
	}
	s.mu.Unlock()
	if end == "" {
		return
	}
	s.messageLog().Warn("ending the session: the client sends far too fast", zap.String("reason", end),
		zap.Uint64("dropped_total", s.limiter.Dropped()))
	if !ending {
		s.end(end, false)
		return
	}
	go func() { // the output ends the session when the frame reaches it
		defer s.bg.Done()
		t := time.NewTimer(refuseEndBound)
		defer t.Stop()
		select {
		case <-t.C:
			s.end(end, false)
		case <-s.ctx.Done():
		}
	}()
}

// messageLog returns the session's logger for lines a client message can
// cause (bad JSON, unknown signalling, dropped for the rate), sampled as
// every such line is (internal/logsample), made on first use.
func (s *Session) messageLog() *zap.Logger {
	s.msgLogOnce.Do(func() { s.msgLog = logsample.Logger(s.log) })
	return s.msgLog
}

// newLimiter returns a session's limiter of its client's messages.
func (s *Server) newLimiter(now time.Time) *transports.MessageLimiter {
	return transports.NewMessageLimiter(s.opts.Inbound, s.opts.MaxMessageBytes, now)
}
