package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
	"github.com/framewire/framewire/processors/uiagent"
)

func main() {
	speed := flag.Float64("speed", 1, "how much faster than real time the simulated workers run")
	flag.Parse()
	if *speed <= 0 {
		fmt.Fprintln(os.Stderr, "task-groups: -speed must be positive")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Stdout, *speed); err != nil {
		fmt.Fprintln(os.Stderr, "task-groups:", err)
		os.Exit(1)
	}
}

// run plays three groups and prints what the page receives.
func run(ctx context.Context, w io.Writer, speed float64) error {
	pace := func(d time.Duration) time.Duration { return time.Duration(float64(d) / speed) }
	page := &pageSide{w: w}
	rt := rtvi.NewProcessor(rtvi.Options{})
	groups := uiagent.NewTaskGroups(uiagent.TaskGroupsOptions{})
	// RTVI processor first (it turns the page's cancel requests into
	// frames), then the groups (which take those frames), then the "page".
	task := pipeline.NewTask(pipeline.New(rt, groups, page), pipeline.TaskOptions{})
	done := make(chan error, 1)
	go func() { done <- task.Run(ctx) }()

	// The page connects.
	task.QueueFrame(clientMessage("client-ready", map[string]any{"version": "2.1.0"}))
	if err := page.waitFor(ctx, "bot-ready"); err != nil {
		return err
	}

	// 1. A group that runs to the end: three workers, each with progress.
	fmt.Fprintln(w, "\n# 1. research that completes")
	g, err := groups.Start(uiagent.GroupOptions{Label: "Research: the Mariana Trench"},
		researcher("wikipedia", pace(300*time.Millisecond), "found 12 articles", "depth 10,935 m; explored 1960 and 2012"),
		researcher("news", pace(400*time.Millisecond), "found 5 stories", "a new deep-sea survey is planned"),
		researcher("scholar", pace(500*time.Millisecond), "found 31 papers", "microbes thrive at full depth"),
	)
	if err != nil {
		return err
	}
	if _, err := g.Wait(ctx); err != nil {
		return err
	}
	if err := page.waitCount(ctx, "group_completed", 1); err != nil {
		return err
	}

	// 2. A worker that fails: by default the group cancels the others.
	fmt.Fprintln(w, "\n# 2. a worker fails, the group stops")
	g, err = groups.Start(uiagent.GroupOptions{Label: "Price check"},
		researcher("store-a", pace(300*time.Millisecond), "found 3 offers", "best: $749"),
		uiagent.Worker{Name: "store-b", Work: func(ctx context.Context, update func(any)) (any, error) {
			update(map[string]string{"text": "connecting…"})
			if err := sleep(ctx, pace(200*time.Millisecond)); err != nil {
				return nil, err
			}
			return nil, uiagent.Failed(map[string]string{"reason": "store-b is closed today"})
		}},
	)
	if err != nil {
		return err
	}
	if _, err := g.Wait(ctx); err != nil {
		return err
	}
	if err := page.waitCount(ctx, "group_completed", 2); err != nil {
		return err
	}

	// 3. The user presses Cancel on the card: the page sends
	// ui-cancel-job-group, and every worker still running is cancelled.
	fmt.Fprintln(w, "\n# 3. the user cancels")
	g, err = groups.Start(uiagent.GroupOptions{Label: "Compare prices"},
		researcher("catalog", pace(2*time.Second), "searching…", "never reached"),
		researcher("reviews", pace(2*time.Second), "reading…", "never reached"),
	)
	if err != nil {
		return err
	}
	if err := page.waitCount(ctx, "group_started", 3); err != nil {
		return err
	}
	task.QueueFrame(clientMessage("ui-cancel-job-group", map[string]any{"job_id": g.ID(), "reason": "cancelled by user"}))
	if _, err := g.Wait(ctx); err != nil {
		return err
	}
	if err := page.waitCount(ctx, "group_completed", 3); err != nil {
		return err
	}

	task.EndWhenDone()
	return <-done
}

// researcher is a simulated worker: two progress updates, then a summary.
func researcher(name string, step time.Duration, found, summary string) uiagent.Worker {
	return uiagent.Worker{Name: name, Work: func(ctx context.Context, update func(any)) (any, error) {
		update(map[string]string{"text": "searching…"})
		if err := sleep(ctx, step); err != nil {
			return nil, err // cancelled: what a cancelled worker returns is not sent
		}
		update(map[string]string{"text": found})
		if err := sleep(ctx, step); err != nil {
			return nil, err
		}
		return map[string]string{"summary": summary}, nil
	}}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func clientMessage(typ string, data any) *frames.InputTransportMessage {
	b, _ := json.Marshal(map[string]any{"label": "rtvi-ai", "type": typ, "id": typ, "data": data})
	return &frames.InputTransportMessage{Message: b}
}

// pageSide stands in for the browser at the end of the pipeline: it
// prints every ui-job-group message it receives, one line each.
type pageSide struct {
	w io.Writer

	mu     sync.Mutex
	seen   map[string]int
	notify chan struct{}
}

func (p *pageSide) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	m, ok := f.(*frames.OutputTransportMessageUrgent)
	if !ok {
		return nil
	}
	h.Consume()
	var msg struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(m.Message, &msg); err != nil {
		return fmt.Errorf("the server sent invalid JSON: %w", err)
	}
	key := msg.Type
	if msg.Type == wire.TypeUIJobGroup {
		key, _ = msg.Data["kind"].(string)
		fmt.Fprintf(p.w, "page <- %s %s\n", msg.Type, describe(msg.Data))
	}
	p.mu.Lock()
	if p.seen == nil {
		p.seen = map[string]int{}
	}
	p.seen[key]++
	if p.notify != nil {
		close(p.notify)
		p.notify = nil
	}
	p.mu.Unlock()
	return nil
}

// waitFor waits until the page has received a message of type (or
// ui-job-group kind) key.
func (p *pageSide) waitFor(ctx context.Context, key string) error { return p.waitCount(ctx, key, 1) }

// waitCount waits until the page has received n messages of type (or
// ui-job-group kind) key. The messages travel through the pipeline after
// the group sent them, so the page is the one to ask.
func (p *pageSide) waitCount(ctx context.Context, key string, n int) error {
	timeout := time.After(30 * time.Second)
	for {
		p.mu.Lock()
		if p.seen[key] >= n {
			p.mu.Unlock()
			return nil
		}
		if p.notify == nil {
			p.notify = make(chan struct{})
		}
		ch := p.notify
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout:
			return errors.New("the page never received " + key)
		}
	}
}

// describe prints a job-group envelope compactly, without ids and times.
func describe(d map[string]any) string {
	var b strings.Builder
	b.WriteString(fmt.Sprint(d["kind"]))
	for _, k := range []string{"label", "workers", "worker_name", "status", "data", "response"} {
		v, ok := d[k]
		if !ok {
			continue
		}
		j, _ := json.Marshal(v)
		fmt.Fprintf(&b, " %s=%s", k, j)
	}
	return b.String()
}
