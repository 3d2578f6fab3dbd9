package uibus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/framewire/framewire/bus"
	"github.com/framewire/framewire/processors/uiagent"
)

// askVersion is the "v" of the agent payloads.
const askVersion = 1

// MaxQuestion caps the question of an [Agent.Ask], in bytes.
const MaxQuestion = 64 << 10

// DefaultAskTimeout bounds an [Agent.Ask] whose Agent has no Timeout.
const DefaultAskTimeout = 30 * time.Second

// ErrAskTimeout: the other agent did not answer within the Agent's
// Timeout. The error also wraps context.DeadlineExceeded.
var ErrAskTimeout = errors.New("uibus: no answer in time")

type askRequest struct {
	V        int    `json:"v"`
	Question string `json:"question"`
}

// Error codes of an askResult: the uiagent errors that cross the bus.
const (
	askCancelled = "cancelled"
	askTimedOut  = "timed_out"
	askNoAnswer  = "no_answer"
	askError     = "error"
)

type askResult struct {
	V           int      `json:"v"`
	Text        string   `json:"text,omitempty"`
	Outcome     string   `json:"outcome,omitempty"`
	SkippedRefs []string `json:"skipped_refs,omitempty"`
	Code        string   `json:"code,omitempty"`
	Error       string   `json:"error,omitempty"`
}

// outcomes maps the wire names of the outcomes (their String) back.
var outcomes = map[string]uiagent.Outcome{}

func init() {
	for _, o := range []uiagent.Outcome{uiagent.Replied, uiagent.StrayText, uiagent.NoAnswer, uiagent.TimedOut, uiagent.Cancelled} {
		outcomes[o.String()] = o
	}
}

// Agent asks an agent that [ServeAgent] serves elsewhere, as
// uiagent.Agent.Ask asks a local one. The zero Timeout means
// [DefaultAskTimeout].
type Agent struct {
	// Bus carries the question.
	Bus bus.Bus
	// Subject is where the other agent is served.
	Subject string
	// Timeout bounds each Ask.
	Timeout time.Duration
}

// Ask sends question and waits for the answer. Ending ctx (an
// interruption) or the Timeout cancels the other agent's turn. The
// errors are uiagent's (ErrCancelled, ErrTimedOut, ErrNoAnswer, with the
// Answer), ctx's, [ErrAskTimeout], or the bus's (the other side went
// away, nobody serves the subject).
func (a Agent) Ask(ctx context.Context, question string) (uiagent.Answer, error) {
	none := uiagent.Answer{Outcome: uiagent.Cancelled, Asked: true}
	if a.Bus == nil {
		return none, errors.New("uibus: an Agent without a Bus")
	}
	if len(question) > MaxQuestion {
		return none, fmt.Errorf("uibus: ask %s: the question has %d bytes, over the cap of %d: %w",
			a.Subject, len(question), MaxQuestion, bus.ErrTooLarge)
	}
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = DefaultAskTimeout
	}
	tctx, cancel := context.WithTimeoutCause(ctx, timeout, ErrAskTimeout)
	defer cancel()
	req, _ := json.Marshal(askRequest{V: askVersion, Question: question}) // cannot fail
	out, err := a.Bus.Request(tctx, a.Subject, req, nil)
	if err != nil {
		if ctx.Err() == nil && errors.Is(context.Cause(tctx), ErrAskTimeout) {
			return none, fmt.Errorf("uibus: ask %s: no answer within %v: %w", a.Subject, timeout,
				errors.Join(ErrAskTimeout, context.DeadlineExceeded))
		}
		return none, err
	}
	var r askResult
	if err := json.Unmarshal(out, &r); err != nil || r.V != askVersion {
		return none, fmt.Errorf("uibus: ask %s: an unreadable answer: %w", a.Subject, bus.ErrProtocol)
	}
	ans := uiagent.Answer{Text: r.Text, Outcome: outcomes[r.Outcome], SkippedRefs: r.SkippedRefs, Asked: true}
	switch r.Code {
	case "":
		return ans, nil
	case askCancelled:
		return ans, uiagent.ErrCancelled
	case askTimedOut:
		return ans, uiagent.ErrTimedOut
	case askNoAnswer:
		return ans, uiagent.ErrNoAnswer
	}
	return ans, &bus.RemoteError{Subject: a.Subject, Message: r.Error}
}

// ServeAgent serves ask (typically a uiagent.Agent's Ask) on subject for
// [Agent]s elsewhere, until ctx ends or the service is stopped. ask's
// context ends when the caller cancels, times out or goes away.
func ServeAgent(ctx context.Context, b bus.Bus, subject string, ask func(ctx context.Context, question string) (uiagent.Answer, error)) (*bus.Service, error) {
	if ask == nil {
		return nil, fmt.Errorf("uibus: serve agent %s: nothing to ask", subject)
	}
	return b.Serve(ctx, subject, func(ctx context.Context, req []byte, _ func([]byte)) ([]byte, error) {
		var q askRequest
		if err := json.Unmarshal(req, &q); err != nil || q.V != askVersion {
			return nil, errors.New("not a question of version 1")
		}
		ans, err := ask(ctx, q.Question)
		r := askResult{V: askVersion, Text: ans.Text, SkippedRefs: ans.SkippedRefs}
		if ans.Outcome != 0 {
			r.Outcome = ans.Outcome.String()
		}
		switch {
		case err == nil:
		case errors.Is(err, uiagent.ErrCancelled):
			r.Code = askCancelled
		case errors.Is(err, uiagent.ErrTimedOut):
			r.Code = askTimedOut
		case errors.Is(err, uiagent.ErrNoAnswer):
			r.Code = askNoAnswer
		default:
			if ctx.Err() != nil {
				return nil, ctx.Err() // the caller is gone
			}
			r.Code, r.Error = askError, errorText(err)
		}
		return json.Marshal(r)
	})
}

// errorText is what crosses the bus of an error: its text, cut at
// [bus.MaxErrorText] as the bus cuts a handler's.
func errorText(err error) string {
	s := err.Error()
	if len(s) > bus.MaxErrorText {
		s = s[:bus.MaxErrorText]
	}
	return s
}
