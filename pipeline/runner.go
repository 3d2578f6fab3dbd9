package pipeline

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sourcegraph/conc"
	"go.uber.org/zap"
)

// Runner runs tasks until they finish and turns SIGINT and SIGTERM into a
// graceful end: each task gets an End, and whatever is still running after
// GracePeriod (or at a second signal) is cancelled.
type Runner struct {
	// Logger receives the runner's logs. Default: zap.NewNop().
	Logger *zap.Logger
	// GracePeriod is how long tasks may take to end after a signal before
	// they are cancelled. Default: 10s.
	GracePeriod time.Duration
	// NoSignals leaves SIGINT and SIGTERM alone (for tests and embedding).
	NoSignals bool
}

// Run runs tasks concurrently and returns when all have finished. When ctx
// is done, tasks are ended gracefully like on a signal. It returns the
// errors the tasks returned, joined.
func (r *Runner) Run(ctx context.Context, tasks ...*Task) error {
	log := r.Logger
	if log == nil {
		log = zap.NewNop()
	}
	grace := r.GracePeriod
	if grace == 0 {
		grace = 10 * time.Second
	}
	sig := make(chan os.Signal, 2)
	if !r.NoSignals {
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(sig)
	}
	// The tasks keep ctx's values but not its cancellation: ctx ending
	// means "end gracefully", which the loop below turns into End frames.
	runCtx := context.WithoutCancel(ctx)
	errs := make([]error, len(tasks))
	finished := make(chan struct{}, len(tasks))
	var wg conc.WaitGroup
	for i, t := range tasks {
		wg.Go(func() {
			errs[i] = t.Run(runCtx)
			finished <- struct{}{}
		})
	}
	running := len(tasks)

	ending := false
	var graceTimer <-chan time.Time
	cancelAll := func(reason string) {
		for _, t := range tasks {
			t.Cancel(reason)
		}
	}
	ctxDone := ctx.Done()
	for running > 0 {
		select {
		case <-finished:
			running--
		case s := <-sig:
			if ending {
				log.Warn("second signal: cancelling", zap.Stringer("signal", s))
				cancelAll("second signal")
				continue
			}
			log.Info("signal: ending tasks", zap.Stringer("signal", s), zap.Duration("grace", grace))
			ending = true
			graceTimer = time.After(grace)
			for _, t := range tasks {
				t.EndWhenDone()
			}
		case <-ctxDone:
			ctxDone = nil
			if !ending {
				ending = true
				graceTimer = time.After(grace)
				for _, t := range tasks {
					t.EndWhenDone()
				}
			}
		case <-graceTimer:
			log.Warn("tasks did not end within the grace period: cancelling", zap.Duration("grace", grace))
			cancelAll("grace period over")
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}
