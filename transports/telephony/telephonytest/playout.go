package telephonytest

import (
	"errors"
	"fmt"
)

// DefaultMaxQueue bounds the bot's audio a [Playout] holds unplayed: one
// minute at 8 kHz.
const DefaultMaxQueue = 60 * 8000

// ErrQueueFull: the bot sent more audio ahead of real time than the
// playout holds.
var ErrQueueFull = errors.New("telephonytest: the bot's audio ran more than the playout holds ahead of real time")

// Playout is the caller's ear: the bot's audio queues up and plays one
// frame per [Playout.Tick]; a mark is echoed when the audio queued before
// it has played; a clear drops the queued audio and echoes the queued
// marks at once. Its zero value plays 20 ms frames of 8 kHz audio and
// holds at most DefaultMaxQueue samples. A Playout is not safe for
// concurrent use.
type Playout struct {
	// FrameSamples is the samples played per tick. Default: 160 (20 ms
	// at 8 kHz).
	FrameSamples int
	// MaxQueue bounds the samples queued and not played. Default:
	// DefaultMaxQueue.
	MaxQueue int

	queue  []int16 // unplayed audio
	marks  []mark  // in order of position
	pushed int64   // samples ever queued
	played int64   // samples played or dropped
	frame  []int16
	echoes []string
}

// mark is a mark waiting for the audio before it: at is the position
// (samples ever queued) it follows.
type mark struct {
	name string
	at   int64
}

func (p *Playout) frameSamples() int {
	if p.FrameSamples > 0 {
		return p.FrameSamples
	}
	return 160
}

// Push queues the bot's audio behind what is queued. It refuses audio
// past MaxQueue.
func (p *Playout) Push(pcm []int16) error {
	limit := p.MaxQueue
	if limit <= 0 {
		limit = DefaultMaxQueue
	}
	if len(p.queue)+len(pcm) > limit {
		return fmt.Errorf("%w (%d samples queued, %d more)", ErrQueueFull, len(p.queue), len(pcm))
	}
	p.queue = append(p.queue, pcm...)
	p.pushed += int64(len(pcm))
	return nil
}

// Mark queues a mark behind the audio queued: the Tick that plays the
// last of that audio echoes it (the next Tick when nothing is queued).
func (p *Playout) Mark(name string) {
	p.marks = append(p.marks, mark{name: name, at: p.pushed})
}

// Clear drops the queued audio and returns the names of the marks that
// were waiting for it, in order, to be echoed at once. It returns how many
// samples it dropped.
func (p *Playout) Clear() (echoes []string, dropped int) {
	dropped = len(p.queue)
	p.played += int64(dropped)
	p.queue = p.queue[:0]
	for _, m := range p.marks {
		echoes = append(echoes, m.name)
	}
	p.marks = p.marks[:0]
	return echoes, dropped
}

// Queued returns the samples queued and not yet played.
func (p *Playout) Queued() int { return len(p.queue) }

// Tick plays one frame: frame is what the caller hears (the next queued
// audio, then silence), bot how many of its samples came from the bot,
// and echoes the names of the marks whose audio has now played. The
// slices are the Playout's, valid until the next call.
func (p *Playout) Tick() (frame []int16, bot int, echoes []string) {
	n := p.frameSamples()
	if cap(p.frame) < n {
		p.frame = make([]int16, n)
	}
	frame = p.frame[:n]
	bot = copy(frame, p.queue)
	clear(frame[bot:])
	rest := copy(p.queue, p.queue[bot:])
	p.queue = p.queue[:rest]
	p.played += int64(bot)
	p.echoes = p.echoes[:0]
	i := 0
	for ; i < len(p.marks) && p.marks[i].at <= p.played; i++ {
		p.echoes = append(p.echoes, p.marks[i].name)
	}
	p.marks = append(p.marks[:0], p.marks[i:]...)
	return frame, bot, p.echoes
}
