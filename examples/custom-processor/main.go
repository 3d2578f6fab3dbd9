package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
)

// Shout upper-cases text; every other frame passes through untouched.
type Shout struct{}

// ProcessFrame replaces each text frame with an upper-cased copy (frames
// are immutable once pushed, so it builds a new one). Start, End and every
// other frame are forwarded when it returns: forwarding is the default.
func (Shout) ProcessFrame(ctx context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	if t, ok := f.(*frames.Text); ok {
		h.Consume()
		h.Push(&frames.Text{Text: strings.ToUpper(t.Text)}, dir)
	}
	return nil
}

// WordCounter counts the words that pass and reports them when the
// pipeline ends. Its state needs no lock: one goroutine owns it.
type WordCounter struct{ words int }

// ProcessFrame counts words in text frames and prints a summary at End.
func (c *WordCounter) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	switch f := f.(type) {
	case *frames.Text:
		c.words += len(strings.Fields(f.Text))
	case *frames.End:
		h.Push(&frames.Text{Text: fmt.Sprintf("(%d words)", c.words)}, frames.Downstream)
	}
	return nil
}

func main() {
	// An observer sees every hop; this one prints each text frame where it
	// leaves the Shout processor.
	printer := observers.Func(func(e observers.Event) {
		if t, ok := e.Frame.(*frames.Text); ok && e.Kind == observers.Pushed && e.Source != nil {
			fmt.Printf("%-14s -> %-14s %q\n", short(e.Source), short(e.Destination), t.Text)
		}
	})
	counter := &WordCounter{}
	task := pipeline.NewTask(
		pipeline.New(Shout{}, counter),
		pipeline.TaskOptions{Observers: []observers.Observer{printer}},
	)
	task.QueueFrames(
		&frames.Text{Text: "hello from framewire"},
		&frames.Text{Text: "frames flow through processors"},
	)
	task.EndWhenDone()
	if err := task.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "pipeline failed:", err)
		os.Exit(1)
	}
	fmt.Println("done: the task ended after End went through every processor")
}

func short(n observers.Node) string {
	if n == nil {
		return "(end)"
	}
	name := n.Name()
	if i := strings.IndexByte(name, '#'); i > 0 {
		return name[:i]
	}
	return name
}
