package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/sourcegraph/conc"
	"go.uber.org/zap"
)

// Runner runs tasks until they finish, and ends them gracefully when its
// context ends: each task gets an End, and whatever is still running after
// GracePeriod is cancelled.
//
// Runner handles no signals: like net/http, it leaves them to main, which
// turns SIGINT and SIGTERM into the end of ctx and, after the first one,
// restores the default handling so that a second Ctrl-C kills the process
// at once:
//
//	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
//	defer stop()
//	context.AfterFunc(ctx, stop) // after the first signal, the next one kills the process
//	err := (&pipeline.Runner{}).Run(ctx, task)
type Runner struct {
	// Logger receives the runner's logs. Default: zap.NewNop().
	Logger *zap.Logger
	// GracePeriod is how long tasks may take to end once ctx is done
	// before they are cancelled. Default: 10s.
	GracePeriod time.Duration
}

// Run runs tasks concurrently and returns when all have finished. When ctx
// is done, each task gets an End; those still running GracePeriod later
// are cancelled. The tasks keep ctx's values. It returns the errors the
// tasks returned, joined.
func (r *Runner) Run(ctx context.Context, tasks ...*Task) error {
	log := r.Logger
	if log == nil {
		log = zap.NewNop()
	}
	period := r.GracePeriod
	if period == 0 {
		period = 10 * time.Second
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

	var grace *time.Timer
	var graceTimer <-chan time.Time
	defer func() {
		if grace != nil {
			grace.Stop()
		}
	}()
	ctxDone := ctx.Done()
	for running > 0 {
		select {
		case <-finished:
			running--
		case <-ctxDone:
			ctxDone = nil
			log.Debug("ending tasks", zap.Int("running", running), zap.Duration("grace", period))
			grace = time.NewTimer(period)
			graceTimer = grace.C
			for _, t := range tasks {
				t.EndWhenDone()
			}
		case <-graceTimer:
			graceTimer = nil
			log.Warn("tasks did not end within the grace period: cancelling", zap.Duration("grace", period))
			for _, t := range tasks {
				t.Cancel("grace period over")
			}
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}
