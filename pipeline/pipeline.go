package pipeline

import (
	"context"
	"sync"

	"github.com/framewire/framewire/frames"
)

// Pipeline composes processors in a line: downstream frames go from the
// first to the last, upstream frames the other way. A Pipeline is itself a
// [Processor], so pipelines nest; when a task runs it, nested pipelines are
// flattened, so composition adds no hops.
type Pipeline struct {
	procs []Processor
}

// New returns a pipeline of procs, in downstream order.
func New(procs ...Processor) *Pipeline {
	return &Pipeline{procs: procs}
}

// Processors returns the pipeline's direct children.
func (p *Pipeline) Processors() []Processor { return p.procs }

// ProcessFrame implements [Processor]. A running task never calls it,
// because it flattens pipelines into their children; used on its own, a
// Pipeline passes frames through.
func (p *Pipeline) ProcessFrame(context.Context, *Handle, frames.Frame, frames.Direction) error {
	return nil
}

// build creates the nodes of p and links them in order. It returns the
// chain's first and last nodes, or nils for an empty pipeline.
func (b *builder) build(p Processor) []*node {
	switch p := p.(type) {
	case *Pipeline:
		var chain []*node
		for _, c := range p.procs {
			chain = append(chain, b.build(c)...)
		}
		return chain
	case *ParallelPipeline:
		return []*node{b.buildParallel(p)}
	default:
		n := newNode(p, b.rt)
		b.nodes = append(b.nodes, n)
		return []*node{n}
	}
}

// builder turns a processor tree into linked nodes.
type builder struct {
	rt    *runtime
	nodes []*node
}

// link connects chain between the receivers before and after it: frames
// leaving the chain downstream go to after, upstream ones to before.
func link(chain []*node, before, after endpoint) {
	for i, n := range chain {
		if i == 0 {
			n.up = before
		} else {
			n.up = endpoint{chain[i-1], chain[i-1]}
		}
		if i == len(chain)-1 {
			n.down = after
		} else {
			n.down = endpoint{chain[i+1], chain[i+1]}
		}
	}
}

// ParallelPipeline sends every frame into each of its branches and merges
// what they emit. A frame that comes out of several branches is forwarded
// once (the first copy wins). Start, End, Stop and Cancel pass a barrier:
// the ParallelPipeline waits until every branch has emitted them, buffers
// what the branches emit meanwhile, and releases Start before the buffer
// and End, Stop or Cancel after it, so a fast branch cannot let a lifecycle
// frame escape early.
type ParallelPipeline struct {
	branches []*Pipeline
}

// NewParallel returns a ParallelPipeline with one branch per argument.
func NewParallel(branches ...*Pipeline) *ParallelPipeline {
	return &ParallelPipeline{branches: branches}
}

// ProcessFrame implements [Processor]; like [Pipeline.ProcessFrame] it is
// only used outside a task.
func (p *ParallelPipeline) ProcessFrame(context.Context, *Handle, frames.Frame, frames.Direction) error {
	return nil
}

// dedupeWindow bounds how many fanned-out frames the merge remembers. A
// frame consumed inside a branch never comes out, so its entry is evicted
// by newer ones instead of growing the table forever.
const dedupeWindow = 4096

// parallel is the processor behind a ParallelPipeline's node.
type parallel struct {
	heads, tails []endpoint // where to deliver frames into each branch
	self         *node

	mu       sync.Mutex
	pending  map[uint64]int // fanned-out frame id -> copies still expected
	recent   [dedupeWindow]uint64
	next     int
	barrier  *barrier
	finished [4]uint64 // ids of the last lifecycle frames released
	fin      int
	cancel   chan struct{}
}

type barrier struct {
	id        uint64
	remaining int
	buffer    []item
	done      chan struct{}
	lifecycle frames.Frame
}

func (b *builder) buildParallel(p *ParallelPipeline) *node {
	par := &parallel{pending: make(map[uint64]int), cancel: make(chan struct{}, 1)}
	n := newNode(par, b.rt)
	n.name = processorName(p)
	n.log = b.rt.log.Named(n.name)
	par.self = n
	n.onCancelReceived = func() {
		select {
		case par.cancel <- struct{}{}:
		default:
		}
	}
	b.nodes = append(b.nodes, n)
	for _, br := range p.branches {
		chain := b.build(br)
		downOut := &merge{par: par, dir: frames.Downstream}
		upOut := &merge{par: par, dir: frames.Upstream}
		if len(chain) == 0 {
			par.heads = append(par.heads, endpoint{r: downOut})
			par.tails = append(par.tails, endpoint{r: upOut})
			continue
		}
		link(chain, endpoint{r: upOut}, endpoint{r: downOut})
		par.heads = append(par.heads, endpoint{chain[0], chain[0]})
		par.tails = append(par.tails, endpoint{chain[len(chain)-1], chain[len(chain)-1]})
	}
	return n
}

func isLifecycle(f frames.Frame) bool {
	switch f.(type) {
	case *frames.Start, *frames.End, *frames.Stop, *frames.Cancel:
		return true
	}
	return false
}

// ProcessFrame fans f out into every branch.
func (p *parallel) ProcessFrame(ctx context.Context, h *Handle, f frames.Frame, dir frames.Direction) error {
	h.Consume()
	targets := p.heads
	if dir == frames.Upstream {
		targets = p.tails
	}
	if len(targets) == 0 {
		h.Forward()
		return nil
	}
	id := f.FrameBase().ID()
	var wait chan struct{}
	p.mu.Lock()
	if isLifecycle(f) && dir == frames.Downstream {
		if p.barrier != nil {
			// A Cancel overtakes a pending End or Start: keep the buffer.
			p.barrier.id, p.barrier.remaining, p.barrier.lifecycle = id, len(targets), f
		} else {
			p.barrier = &barrier{id: id, remaining: len(targets), done: make(chan struct{}), lifecycle: f}
		}
		wait = p.barrier.done
	} else {
		if old := p.recent[p.next]; old != 0 {
			delete(p.pending, old)
		}
		p.recent[p.next] = id
		p.next = (p.next + 1) % dedupeWindow
		p.pending[id] = len(targets)
	}
	p.mu.Unlock()
	for _, t := range targets {
		p.self.rt.hub.pushed(p.self, t.node, f, dir, false, true)
		t.r.receive(item{f, dir})
	}
	if wait == nil {
		return nil
	}
	if _, isCancel := f.(*frames.Cancel); isCancel {
		select {
		case <-wait:
		case <-p.self.rt.ctx.Done():
		}
		return nil
	}
	select {
	case <-wait:
	case <-p.cancel:
		// A Cancel is waiting in our inbox; it takes the barrier over.
	case <-ctx.Done():
	}
	return nil
}

// merge receives what one branch emits in one direction.
type merge struct {
	par *parallel
	dir frames.Direction
}

func (m *merge) receive(it item) {
	p := m.par
	id := it.f.FrameBase().ID()
	// Branches emit concurrently; holding the lock while pushing makes the
	// merged output one ordered stream, as if one processor emitted it.
	p.mu.Lock()
	defer p.mu.Unlock()
	if b := p.barrier; b != nil {
		if id == b.id {
			b.remaining--
			if b.remaining > 0 {
				return
			}
			p.barrier = nil
			p.finished[p.fin] = id
			p.fin = (p.fin + 1) % len(p.finished)
			if _, isStart := it.f.(*frames.Start); isStart {
				p.self.Push(it.f, it.dir)
				p.flush(b.buffer)
			} else {
				p.flush(b.buffer)
				p.self.Push(it.f, it.dir)
			}
			close(b.done)
			return
		}
		if !p.seenLocked(it) {
			b.buffer = append(b.buffer, it)
		}
		return
	}
	if isLifecycle(it.f) {
		for _, done := range p.finished {
			if done == id {
				return // a late copy of a lifecycle frame already released
			}
		}
	}
	if !p.seenLocked(it) {
		p.self.Push(it.f, it.dir)
	}
}

// seenLocked counts a copy of a fanned-out frame and reports whether an
// earlier copy already went out. p.mu must be held.
func (p *parallel) seenLocked(it item) bool {
	id := it.f.FrameBase().ID()
	left, ok := p.pending[id]
	if !ok {
		return false
	}
	total := len(p.heads)
	if left == 1 {
		delete(p.pending, id)
	} else {
		p.pending[id] = left - 1
	}
	return left != total
}

func (p *parallel) flush(buf []item) {
	for _, it := range buf {
		p.self.Push(it.f, it.dir)
	}
}
