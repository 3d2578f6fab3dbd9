package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sourcegraph/conc"
	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/framebook"
)

// Run runs the task until End, Stop or Cancel has gone through the whole
// pipeline, or ctx is done (which cancels the task). It returns nil when the
// pipeline finished, ctx's error when ctx ended it, and an error for a setup
// or start timeout. Run may be called once.
func (t *Task) Run(ctx context.Context) error {
	if !t.ran.CompareAndSwap(false, true) {
		return errors.New("pipeline: task already ran")
	}
	defer close(t.finished)
	log := t.opts.Logger
	runCtx, stopAll := context.WithCancel(context.WithoutCancel(ctx))
	defer stopAll()
	t.rt.ctx = runCtx

	b := &builder{rt: t.rt}
	chain := b.build(t.root)
	t.nodesMu.Lock()
	t.nodes = b.nodes
	t.nodesMu.Unlock()
	for _, n := range t.nodes {
		if p, ok := n.proc.(ObserverProvider); ok {
			if o := p.Observer(); o != nil {
				t.hub.add(o)
			}
		}
	}
	src, sink := endpoint{r: sourceEdge{t}}, endpoint{r: sinkEdge{t}}
	link(chain, src, sink)
	t.first, t.last = sink, src
	if len(chain) > 0 {
		t.first = endpoint{chain[0], chain[0]}
		t.last = endpoint{chain[len(chain)-1], chain[len(chain)-1]}
	}

	reason := "ended"
	var runErr error
	stopped := false
	defer func() {
		t.teardown(ctx, !stopped)
		t.hub.close(t.opts.DrainTimeout)
		for _, fn := range handlersOf(t, &t.finishedFn) {
			fn(reason)
		}
	}()

	var loops conc.WaitGroup
	defer func() {
		for _, n := range t.nodes {
			n.stop()
		}
		t.waitJobs(&loops)
	}()
	if err := t.setup(ctx, runCtx); err != nil {
		var c cancelledError
		if errors.As(err, &c) {
			reason = "cancelled: " + string(c)
			return nil
		}
		if ctx.Err() != nil {
			reason = "context done"
			return ctx.Err()
		}
		reason = "setup failed"
		return err
	}

	for _, n := range t.nodes {
		loops.Go(n.run)
	}

	t.inject(&frames.Start{
		AudioInSampleRate:  t.opts.AudioInSampleRate,
		AudioOutSampleRate: t.opts.AudioOutSampleRate,
		EnableMetrics:      t.opts.EnableMetrics,
		EnableUsageMetrics: t.opts.EnableUsageMetrics,
	}, frames.Downstream)
	startTimer := time.NewTimer(t.opts.StartTimeout)
	defer startTimer.Stop()
waitStart:
	for {
		select {
		case f := <-t.reached:
			if _, ok := f.(*frames.Start); ok {
				break waitStart
			}
		case r := <-t.cancelCh:
			reason = "cancelled: " + r
			t.cancelAndWait(r)
			return nil
		case <-ctx.Done():
			reason = "context done"
			t.cancelAndWait("context done")
			return ctx.Err()
		case <-startTimer.C:
			reason = "start timeout"
			log.Error("start frame did not reach the sink", zap.Duration("timeout", t.opts.StartTimeout))
			t.cancelAndWait("start timeout")
			return ErrStartTimeout
		}
	}
	fire(handlersOf(t, &t.started))

	reason, stopped, runErr = t.loop(ctx)
	return runErr
}

// inject pushes f straight into the pipeline from outside.
func (t *Task) inject(f frames.Frame, dir frames.Direction) {
	first := framebook.MarkPushed(f.FrameBase())
	ep := t.first
	if dir == frames.Upstream {
		ep = t.last
	}
	t.hub.pushed(nil, ep.node, f, dir, first, false)
	ep.r.receive(item{f, dir})
}

// loop is the control loop: it feeds queued frames in and handles requests,
// timers and cancellation until the pipeline has finished.
func (t *Task) loop(ctx context.Context) (reason string, stopped bool, err error) {
	log := t.opts.Logger
	var (
		ending       frames.Frame // End or Stop pushed, waiting for it at the sink
		endTimer     <-chan time.Time
		idle         *time.Timer
		idleC        <-chan time.Time
		heartbeat    *time.Ticker
		heartbeatC   <-chan time.Time
		lastHBWarned time.Duration
	)
	if t.opts.IdleTimeout > 0 {
		t.hub.activity.Store(int64(t.rt.clock.Now()))
		idle = time.NewTimer(t.opts.IdleTimeout)
		defer idle.Stop()
		idleC = idle.C
	}
	if t.opts.Heartbeats {
		t.lastHeartbeat.Store(int64(t.rt.clock.Now()))
		heartbeat = time.NewTicker(t.opts.HeartbeatPeriod)
		defer heartbeat.Stop()
		heartbeatC = heartbeat.C
	}
	ingress := t.ingress.Ready()
	requests := t.requests.Ready()
	for {
		select {
		case <-ingress:
			if ending != nil {
				continue
			}
			for {
				f, dir, ok := t.ingress.Pop()
				if !ok {
					break
				}
				t.inject(f, dir)
				switch f.(type) {
				case *frames.End, *frames.Stop:
					ending = f
					if t.opts.EndTimeout > 0 {
						endTimer = time.After(t.opts.EndTimeout)
					}
				case *frames.Cancel:
					return "cancelled", false, t.waitCancel()
				}
				if ending != nil {
					break
				}
			}
		case <-requests:
			for {
				f, _, ok := t.requests.Pop()
				if !ok {
					break
				}
				switch f := f.(type) {
				case *frames.EndTask:
					t.QueueFrame(&frames.End{Reason: f.Reason})
				case *frames.StopTask:
					t.QueueFrame(&frames.Stop{})
				case *frames.CancelTask:
					t.cancelAndWait(f.Reason)
					return "cancelled: " + f.Reason, false, nil
				case *frames.InterruptionTask:
					t.inject(&frames.Interruption{}, frames.Downstream)
				case *frames.Error:
					if stop := t.onError(f); stop != nil {
						t.QueueFrame(stop)
					}
				}
			}
		case f := <-t.reached:
			switch f.(type) {
			case *frames.End:
				return "ended", false, nil
			case *frames.Stop:
				return "stopped", true, nil
			case *frames.Cancel:
				return "cancelled", false, nil
			}
		case r := <-t.cancelCh:
			t.cancelAndWait(r)
			return "cancelled: " + r, false, nil
		case <-ctx.Done():
			t.cancelAndWait("context done")
			return "context done", false, ctx.Err()
		case <-endTimer:
			log.Warn("end frame did not reach the sink in time; cancelling", zap.Duration("timeout", t.opts.EndTimeout))
			t.cancelAndWait("end timeout")
			return "end timeout", false, nil
		case <-idleC:
			last := time.Duration(t.hub.activity.Load())
			if wait := last + t.opts.IdleTimeout - t.rt.clock.Now(); wait > 0 {
				idle.Reset(wait)
				continue
			}
			log.Info("pipeline idle", zap.Duration("timeout", t.opts.IdleTimeout))
			fire(handlersOf(t, &t.idleFn))
			if !t.opts.KeepRunningWhenIdle {
				t.cancelAndWait("idle timeout")
				return "idle timeout", false, nil
			}
			idle.Reset(t.opts.IdleTimeout)
		case <-heartbeatC:
			now := t.rt.clock.Now()
			t.inject(&frames.Heartbeat{SentAt: int64(now)}, frames.Downstream)
			since := now - time.Duration(t.lastHeartbeat.Load())
			if since > t.opts.HeartbeatMonitor && now-lastHBWarned > t.opts.HeartbeatMonitor {
				lastHBWarned = now
				log.Warn("no heartbeat came back", zap.Duration("since", since))
				fire(handlersOf(t, &t.hbTimeout))
			}
		}
	}
}

// onError fires the error handlers and applies the unusable policy; it
// returns a frame to queue when the policy ends the task.
func (t *Task) onError(e *frames.Error) frames.Frame {
	for _, fn := range handlersOf(t, &t.errorFn) {
		fn(e)
	}
	if !e.Permanent() || t.unusableSeen[e.Processor] {
		return nil
	}
	t.unusableSeen[e.Processor] = true
	switch t.opts.Unusable {
	case EndWhenUnusable:
		return &frames.End{Reason: fmt.Sprintf("processor %s is unusable", e.Processor)}
	case CancelWhenUnusable:
		t.Cancel(fmt.Sprintf("processor %s is unusable", e.Processor))
	}
	return nil
}

// cancelAndWait pushes Cancel straight into the pipeline (it overtakes
// anything queued, and does not wait behind a stuck End) and waits for it at
// the sink, bounded by the cancel timeout.
func (t *Task) cancelAndWait(reason string) {
	t.inject(&frames.Cancel{Reason: reason}, frames.Downstream)
	if err := t.waitCancel(); err != nil {
		t.opts.Logger.Warn("cancel frame did not reach the sink in time", zap.Duration("timeout", t.opts.CancelTimeout))
	}
}

func (t *Task) waitCancel() error {
	timer := time.NewTimer(t.opts.CancelTimeout)
	defer timer.Stop()
	for {
		select {
		case f := <-t.reached:
			if _, ok := f.(*frames.Cancel); ok {
				return nil
			}
		case <-timer.C:
			return errors.New("pipeline: cancel timeout")
		}
	}
}

// cancelledError says the task was cancelled, with its reason, while it
// was setting up.
type cancelledError string

func (c cancelledError) Error() string { return "pipeline: cancelled during setup: " + string(c) }

// setup sets up every processor concurrently, bounded by the setup timeout.
// Cancel and the end of the caller's ctx stop it at once: the setups see
// their context end, and setup waits for them so none outlives the task.
func (t *Task) setup(callerCtx, runCtx context.Context) error {
	ctx, cancel := context.WithTimeout(runCtx, t.opts.SetupTimeout)
	defer cancel()
	done := make(chan struct{})
	var wg conc.WaitGroup
	for _, n := range t.nodes {
		s, ok := n.proc.(Setupper)
		if !ok {
			continue
		}
		wg.Go(func() {
			err := s.Setup(ctx, Setup{Logger: n.log, Name: n.name, Clock: t.rt.clock, n: n})
			if err != nil {
				n.log.Error("setup failed; the processor is unusable", zap.Error(err))
				n.unusable.Store(true)
			}
		})
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case reason := <-t.cancelCh:
		cancel()
		<-done
		return cancelledError(reason)
	case <-callerCtx.Done():
		cancel()
		<-done
		return callerCtx.Err()
	case <-ctx.Done():
		t.opts.Logger.Error("processor setup timed out", zap.Duration("timeout", t.opts.SetupTimeout))
		<-done
		return ErrSetupTimeout
	}
}

// teardown cleans processors up (unless the task stopped, which keeps them).
// The cleanup keeps ctx's values (loggers, trace spans) but not its
// cancellation: a task whose caller has gone still releases what it holds,
// within CancelTimeout.
func (t *Task) teardown(ctx context.Context, cleanup bool) {
	if !cleanup {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.opts.CancelTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, n := range t.nodes {
		c, ok := n.proc.(Cleaner)
		if !ok {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Cleanup(ctx); err != nil {
				n.log.Warn("cleanup failed", zap.Error(err))
			}
		}()
	}
	wg.Wait()
}

// waitJobs waits for the node loops, their jobs and their background work,
// bounded by the cancel timeout; work that ignores its context is named in
// the log, not waited for.
func (t *Task) waitJobs(loops *conc.WaitGroup) {
	done := make(chan struct{})
	go func() {
		loops.Wait()
		for _, n := range t.nodes {
			n.jobs.Wait()
			n.bgWG.Wait()
		}
		close(done)
	}()
	timer := time.NewTimer(t.opts.CancelTimeout)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		var stuck []string
		for _, n := range t.nodes {
			stuck = append(stuck, n.stuckBackground()...)
		}
		slices.Sort(stuck)
		t.opts.Logger.Error("work still running after the task ended; it ignores its context",
			zap.Duration("waited", t.opts.CancelTimeout), zap.Strings("background", stuck))
	}
}
