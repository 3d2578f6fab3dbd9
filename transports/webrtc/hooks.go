package webrtc

import (
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"
)

// SessionEventKind says what a [SessionEvent] reports.
type SessionEventKind int

const (
	// StartIssued: a /start issued StartID. No session exists yet: the
	// first offer to /sessions/{StartID}/api/offer creates one. The id is
	// forgotten StartTTL after its last use while no live session uses it;
	// no event says so ([Server.Owns] tells).
	StartIssued SessionEventKind = iota + 1
	// SessionStarted: an offer created Session, whose first pc_id is PCID
	// (StartID is the /start id it came through, if any). It is sent once
	// the answer is ready, before it is written.
	SessionStarted
	// SessionRestarted: the client replaced the session's peer connection
	// (restart_pc): PCID is the new pc_id, PrevPCID the one it retired.
	SessionRestarted
	// SessionEnded: the session is torn down (its pipeline finished, its
	// peer connections closed) because of Reason; PCID was its last pc_id,
	// which the Server forgets as the hook returns.
	SessionEnded
)

func (k SessionEventKind) String() string {
	switch k {
	case StartIssued:
		return "start issued"
	case SessionStarted:
		return "session started"
	case SessionRestarted:
		return "session restarted"
	case SessionEnded:
		return "session ended"
	}
	return fmt.Sprintf("SessionEventKind(%d)", int(k))
}

// SessionEvent tells Options.OnSession that a session's ids came or went:
// what a router in front of several servers needs to send each request to
// the server that owns its ids (package cluster), as http.Server's
// ConnState tells of connections.
type SessionEvent struct {
	Kind SessionEventKind
	// Session is the session; nil for StartIssued.
	Session *Session
	// StartID is the /start session id issued (StartIssued), or the one
	// the session was created through ("" for an offer to /api/offer).
	StartID string
	// PCID is the session's pc_id: its first (SessionStarted), its new
	// one (SessionRestarted) or its last (SessionEnded).
	PCID string
	// PrevPCID is the pc_id a restart retired (SessionRestarted only).
	PrevPCID string
	// Reason says why the session ended (SessionEnded only).
	Reason string
	// Request is the signalling request that caused the event (the /start
	// or the offer), whose context carries the caller's values; nil for
	// SessionEnded.
	Request *http.Request
}

// announce tells Options.OnSession of ev, in order with the session's
// other events and never after its SessionEnded.
func (s *Session) announce(ev SessionEvent) {
	hook := s.srv.opts.OnSession
	if hook == nil {
		return
	}
	s.eventMu.Lock()
	defer s.eventMu.Unlock()
	if s.announcedEnd {
		return
	}
	s.announcedEnd = ev.Kind == SessionEnded
	ev.Session = s
	if ev.StartID == "" {
		ev.StartID = s.startID
	}
	hook(ev)
}

// admitRetryAfter is the Retry-After, in seconds, of the 503 that answers
// a request Options.Admit refused.
const admitRetryAfter = 2

// admit asks Options.Admit about r, which would create something new (a
// /start id, a session), and returns its refusal: a 503 with Retry-After
// that the client retries, whose cause goes to the log only.
func (s *Server) admit(r *http.Request) *unavailableError {
	if s.opts.Admit == nil {
		return nil
	}
	err := s.opts.Admit(r)
	if err == nil {
		return nil
	}
	s.metrics.signal.Refused(r.Context(), limitAdmit)
	s.reqLog.Info("Admit refused a new session", zap.String("path", clip(r.URL.Path, 128)), zap.Error(err))
	return &unavailableError{"the server is not taking new sessions now; retry later", admitRetryAfter}
}

// Owns reports whether id is the pc_id of one of the server's live
// sessions, or a /start session id it still holds: whether the server
// would find the session a request with that id is for. A router in front
// of several servers asks it where such a request goes.
func (s *Server) Owns(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byPC[id]; ok {
		return true
	}
	return s.starts.has(id, time.Now())
}

// MaxSessions returns the bound on live sessions past which offers are
// refused: Options.MaxSessions with its default, negative for none.
func (s *Server) MaxSessions() int { return s.opts.MaxSessions }
