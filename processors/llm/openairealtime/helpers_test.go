package openairealtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
)

// rig runs a Service against a fake server in a task: the service's
// pipeline, extra processors (a stand-in output), then its played tap.
type rig struct {
	svc  *Service
	fake *fakeRealtime
	res  *pipelinetest.Result
}

func startRig(t *testing.T, fake *fakeRealtime, o Options, send []frames.Frame, extra ...pipeline.Processor) *rig {
	t.Helper()
	return startRigLog(t, fake, o, send, nil, extra...)
}

// startRigLog is startRig with the task's logger (nil: none).
func startRigLog(t *testing.T, fake *fakeRealtime, o Options, send []frames.Frame, log *zap.Logger, extra ...pipeline.Processor) *rig {
	t.Helper()
	if o.BaseURL == "" {
		o.BaseURL = fake.baseURL()
	}
	if o.APIKey == "" {
		o.APIKey = "sk-test"
	}
	svc := New(o)
	fake.played = svc.tap.current
	procs := append([]pipeline.Processor{svc.Pipeline()}, extra...)
	procs = append(procs, svc.PlayedTap())
	res := pipelinetest.Start(t, pipeline.New(procs...), pipelinetest.Options{
		Send: send, NoEnd: true, Timeout: 20 * time.Second,
		Task: pipeline.TaskOptions{EnableUsageMetrics: true, Logger: log},
	})
	return &rig{svc: svc, fake: fake, res: res}
}

// end ends the task gracefully and waits for it.
func (r *rig) end(t *testing.T) {
	t.Helper()
	r.res.Task.EndWhenDone()
	r.res.Wait()
	if r.res.Err != nil {
		t.Fatalf("task ended with %v", r.res.Err)
	}
}

// waitDown waits until a frame downstream satisfies ok.
func (r *rig) waitDown(t *testing.T, what string, ok func(frames.Frame) bool) {
	t.Helper()
	waitFor(t, what, func() bool {
		for _, f := range r.res.Down() {
			if ok(f) {
				return true
			}
		}
		return false
	})
}

// countUp counts the frames upstream that satisfy ok.
func (r *rig) countUp(ok func(frames.Frame) bool) int {
	n := 0
	for _, f := range r.res.Up() {
		if ok(f) {
			n++
		}
	}
	return n
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func isType[T frames.Frame](f frames.Frame) bool { _, ok := f.(T); return ok }

// describe names a frame and the fields the tests check, so expectations
// read as a list of lines.
func describe(f frames.Frame) string {
	switch f := f.(type) {
	case *frames.TTSAudioRaw:
		return fmt.Sprintf("TTSAudioRaw %s %d samples at %d Hz", f.ContextID, f.NumFrames(), f.SampleRate)
	case *frames.LLMText:
		return fmt.Sprintf("LLMText %q", f.Text)
	case *frames.TTSText:
		return fmt.Sprintf("TTSText %q by %s for %s", f.Text, f.AggregatedBy, f.ContextID)
	case *frames.TTSStarted:
		return "TTSStarted " + f.ContextID
	case *frames.TTSStopped:
		return "TTSStopped " + f.ContextID
	case *frames.Transcription:
		return fmt.Sprintf("Transcription %q finalized=%v", f.Text, f.Finalized)
	case *frames.InterimTranscription:
		return fmt.Sprintf("InterimTranscription %q", f.Text)
	case *frames.Metrics:
		var parts []string
		for _, m := range f.Data {
			switch m.Kind {
			case frames.MetricLLMUsage:
				parts = append(parts, fmt.Sprintf("usage %s in=%d out=%d total=%d cached=%d", m.Model, m.Usage.PromptTokens, m.Usage.CompletionTokens, m.Usage.TotalTokens, m.Usage.CacheReadTokens))
			default:
				parts = append(parts, fmt.Sprintf("kind %d", m.Kind))
			}
		}
		return "Metrics " + strings.Join(parts, ", ")
	case *frames.Error:
		return fmt.Sprintf("Error %v [%v]", f.Err, f.Category)
	case *frames.LLMContext:
		var parts []string
		for _, m := range f.Messages {
			parts = append(parts, m.Role+": "+m.Content)
		}
		return "LLMContext " + strings.Join(parts, " | ")
	case *frames.FunctionCallInProgress:
		return fmt.Sprintf("FunctionCallInProgress %s %s %s", f.Name, f.ToolCallID, f.Arguments)
	case *frames.FunctionCallResult:
		b, _ := json.Marshal(f.Result)
		return fmt.Sprintf("FunctionCallResult %s %s %s", f.Name, f.ToolCallID, b)
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", f), "*frames.")
}

// lanes describes fs split by lane: ordered frames keep their order
// among themselves, system frames among themselves, but the two may
// interleave differently from run to run.
func lanes(fs []frames.Frame) (ordered, system []string) {
	for _, f := range fs {
		if f.Lane() == frames.LaneSystem {
			system = append(system, describe(f))
		} else {
			ordered = append(ordered, describe(f))
		}
	}
	return ordered, system
}

// gate stands in for an output transport that has played only the first
// limit of the bot's audio when the user barges in: it passes that much
// and drops the rest, counting the audio that reaches it after an
// interruption.
type gate struct {
	limit time.Duration

	mu          sync.Mutex
	passed      time.Duration
	interrupted bool
	late        int
}

func (g *gate) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	if isType[*frames.Interruption](f) {
		g.mu.Lock()
		g.interrupted = true
		g.mu.Unlock()
		return nil
	}
	a, ok := f.(*frames.TTSAudioRaw)
	if !ok || dir != frames.Downstream {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.interrupted {
		g.late++
	}
	if g.passed >= g.limit {
		h.Consume()
		return nil
	}
	g.passed += time.Duration(a.NumFrames()) * time.Second / time.Duration(a.SampleRate)
	return nil
}

func (g *gate) lateAudio() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.late
}

// userAudio returns n 20 ms frames of 16 kHz silence-ish audio.
func userAudio(n int) []frames.Frame {
	out := make([]frames.Frame, n)
	for i := range out {
		pcm := make([]byte, 640)
		for j := 0; j < len(pcm); j += 2 {
			pcm[j] = byte(j)
		}
		out[i] = &frames.InputAudioRaw{Audio: frames.Audio{PCM: pcm, SampleRate: 16000, Channels: 1}}
	}
	return out
}

// startTask runs svc alone with an output rate.
func startTask(t *testing.T, svc *Service, outRate int) *pipelinetest.Result {
	t.Helper()
	return pipelinetest.Start(t, svc.Pipeline(), pipelinetest.Options{NoEnd: true, Timeout: 20 * time.Second,
		Task: pipeline.TaskOptions{AudioOutSampleRate: outRate}})
}
