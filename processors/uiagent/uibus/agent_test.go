package uibus

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/bus"
	"github.com/framewire/framewire/bus/bustest"
	"github.com/framewire/framewire/processors/uiagent"
)

func serveAgent(t *testing.T, b bus.Bus, subject string, ask func(context.Context, string) (uiagent.Answer, error)) *bus.Service {
	t.Helper()
	svc, err := ServeAgent(t.Context(), b, subject, ask)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	return svc
}

func TestAgentAskGetsTheAnswer(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		serveAgent(t, p.Callee, "agents.ui", func(_ context.Context, q string) (uiagent.Answer, error) {
			return uiagent.Answer{Text: "The form has two fields. " + q, Outcome: uiagent.Replied, SkippedRefs: []string{"e9"}, Asked: true}, nil
		})
		ans, err := Agent{Bus: p.Caller, Subject: "agents.ui"}.Ask(t.Context(), "What is on screen?")
		if err != nil {
			t.Fatal(err)
		}
		want := uiagent.Answer{Text: "The form has two fields. What is on screen?", Outcome: uiagent.Replied, SkippedRefs: []string{"e9"}, Asked: true}
		if d := cmp.Diff(want, ans); d != "" {
			t.Errorf("answer (-want +got):\n%s", d)
		}
	})
}

func TestAgentAskKeepsTheAgentsErrors(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		for _, tc := range []struct {
			err     error
			outcome uiagent.Outcome
		}{
			{uiagent.ErrNoAnswer, uiagent.NoAnswer},
			{uiagent.ErrTimedOut, uiagent.TimedOut},
			{uiagent.ErrCancelled, uiagent.Cancelled},
		} {
			svc := serveAgent(t, p.Callee, "agents.ui", func(context.Context, string) (uiagent.Answer, error) {
				return uiagent.Answer{Text: "Sorry.", Outcome: tc.outcome, Asked: true}, tc.err
			})
			ans, err := Agent{Bus: p.Caller, Subject: "agents.ui"}.Ask(t.Context(), "?")
			if !errors.Is(err, tc.err) {
				t.Errorf("error %v, want %v", err, tc.err)
			}
			if d := cmp.Diff(uiagent.Answer{Text: "Sorry.", Outcome: tc.outcome, Asked: true}, ans); d != "" {
				t.Errorf("answer (-want +got):\n%s", d)
			}
			_ = svc.Stop()
		}
	})
}

func TestAgentAskTimesOutAndCancelsTheTurn(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		ended := make(chan struct{})
		serveAgent(t, p.Callee, "agents.slow", func(ctx context.Context, _ string) (uiagent.Answer, error) {
			<-ctx.Done()
			close(ended)
			return uiagent.Answer{Outcome: uiagent.Cancelled, Asked: true}, uiagent.ErrCancelled
		})
		start := time.Now()
		ans, err := Agent{Bus: p.Caller, Subject: "agents.slow", Timeout: 100 * time.Millisecond}.Ask(t.Context(), "?")
		if !errors.Is(err, ErrAskTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v, want ErrAskTimeout and context.DeadlineExceeded", err)
		}
		if ans.Outcome != uiagent.Cancelled || !ans.Asked {
			t.Errorf("answer %+v, want a cancelled ask", ans)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("took %v for a 100ms timeout", took)
		}
		bustest.Within(t, ended, bustest.Wait, "the other agent's turn was cancelled")
	})
}

func TestAgentAskInterruptedByTheCaller(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		started, ended := make(chan struct{}), make(chan struct{})
		serveAgent(t, p.Callee, "agents.slow", func(ctx context.Context, _ string) (uiagent.Answer, error) {
			close(started)
			<-ctx.Done()
			close(ended)
			return uiagent.Answer{}, ctx.Err()
		})
		ctx, cancel := context.WithCancel(t.Context())
		interrupted := make(chan struct{})
		go func() { defer close(interrupted); <-started; cancel() }() // the user interrupts
		_, err := Agent{Bus: p.Caller, Subject: "agents.slow"}.Ask(ctx, "?")
		<-interrupted
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrAskTimeout) {
			t.Errorf("error %v, want context.Canceled", err)
		}
		bustest.Within(t, ended, bustest.Wait, "the other agent's turn was cancelled")
	})
}

func TestAgentAskWhenTheOtherAgentDies(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		started := make(chan struct{})
		svc := serveAgent(t, p.Callee, "agents.ui", func(ctx context.Context, _ string) (uiagent.Answer, error) {
			close(started)
			<-ctx.Done()
			return uiagent.Answer{}, ctx.Err()
		})
		killed := make(chan struct{})
		go func() { defer close(killed); <-started; p.Kill(svc) }()
		_, err := Agent{Bus: p.Caller, Subject: "agents.ui"}.Ask(t.Context(), "?")
		<-killed
		if !errors.Is(err, bus.ErrGone) {
			t.Errorf("error %v, want ErrGone", err)
		}
	})
}

func TestAgentAskRefusesHugeQuestions(t *testing.T) {
	_, err := Agent{Bus: bus.Local(bus.Options{}), Subject: "agents.ui"}.Ask(t.Context(), strings.Repeat("?", MaxQuestion+1))
	if !errors.Is(err, bus.ErrTooLarge) {
		t.Errorf("error %v, want ErrTooLarge", err)
	}
	if _, err := (Agent{}).Ask(t.Context(), "?"); err == nil {
		t.Error("an Agent without a Bus asked")
	}
}
