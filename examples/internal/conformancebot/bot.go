package conformancebot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"unicode"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/rtvi"
	rtviwire "github.com/framewire/framewire/processors/rtvi/wire"
	"github.com/framewire/framewire/processors/uiagent"
)

// Client-message types (the t of client-message) the bot answers, besides
// startJobGroupType.
const (
	// echoType is answered with server-response {t:"echo", d:<the same d>}.
	echoType = "echo"
	// uiCommandType {command, payload} is sent back as ui-command.
	uiCommandType = "ui-command"
)

// keepMessages bounds the echo conversation kept per session: older
// turns are dropped before each inference, so a long session's memory
// stays bounded.
const keepMessages = 32

// Options configure a session's bot.
type Options struct {
	// Tone plays a 440 Hz tone at 24 kHz from client-ready on (over the
	// WebSocket transport, whose client tests can only hear a signal:
	// conformance-bot.md §14). Default: silence.
	Tone bool
}

// New builds one session's pipeline of the conformance bot between the transport's input and
// output processors:
//
//	in → audio meter → RTVI → task groups → user aggregator → echo LLM → tone → out → assistant aggregator
//
// with the RTVI observer, which turns what the bot says (LLM text, UI
// commands, job-group cards) into RTVI messages in the client's own
// vocabulary. The RTVI processor answers the handshake, disconnect-bot and
// bad input itself; the handlers registered here answer the conformance
// rows that are the application's to answer.
func New(in, out pipeline.Processor, log *zap.Logger, opts Options) *pipeline.Task {
	rt := rtvi.NewProcessor(rtvi.Options{Logger: log.Named("rtvi"), Observer: rtvi.ObserverOptions{Logger: log.Named("rtvi-observer")}})
	groups := uiagent.NewTaskGroups(uiagent.TaskGroupsOptions{Logger: log.Named("groups")})
	pair := llm.NewPair(llm.NewContext(), llm.PairOptions{BeforeInference: keepLast(keepMessages)})
	echo := llm.NewService(echoLLM{}, llm.ServiceOptions{Name: "echo-llm"})

	meter, tn := &audioMeter{}, &tone{}
	task := pipeline.NewTask(pipeline.New(in, meter, rt, groups, pair.User(), echo, tn, out, pair.Assistant()),
		pipeline.TaskOptions{
			Logger: log.Named("pipeline"),
		})

	// Rows 5, 6 and 10: every snapshot is answered with its rendered
	// ui_state, every event is echoed as a ui_event server-message.
	rt.OnUIMessage(func(_ context.Context, m rtvi.UIMessage) {
		switch m := m.(type) {
		case *rtvi.UISnapshotFrame:
			rt.SendServerMessage(uiagent.UIStateMessage{Text: uiagent.RenderUIState(m.Tree)})
		case *rtvi.UIEventFrame:
			rt.SendServerMessage(uiagent.UIEventMessage{Event: m.Event, Payload: m.Payload})
		}
	})
	rt.OnClientReady(func(_ context.Context, r *rtvi.ClientReadyFrame) {
		log.Info("client ready", zap.String("version", r.Version), zap.String("library", r.About.Library),
			zap.String("library_version", r.About.LibraryVersion))
		if opts.Tone {
			tn.start()
		}
	})
	rt.OnClientMessage(func(_ context.Context, m rtvi.ClientMessage) {
		switch m.Type {
		case echoType: // row 3
			rt.SendServerResponse(m, m.Data)
		case audioStatsType: // §14
			rt.SendServerResponse(m, rtviwire.JSON(meter.stats()))
		case uiCommandType: // row 4
			f, err := parseUICommand(m.Data)
			if err != nil {
				rt.SendErrorResponse(m, err.Error())
				return
			}
			task.QueueFrame(f)
		case startJobGroupType: // row 7; rows 8 and 13 are groups' and the observer's
			// A bad request gets an error-response that says why; a good
			// one gets none (the group's lifecycle is the answer).
			req, err := parseStartJobGroup(m.Data)
			if err == nil {
				_, err = req.start(groups)
			}
			if err != nil {
				rt.SendErrorResponse(m, err.Error())
			}
		default:
			log.Warn("unknown client-message type", zap.String("t", m.Type), zap.String("id", m.ID))
			rt.SendErrorResponse(m, fmt.Sprintf("unknown client-message type %q (this bot knows %q, %q, %q and %q)",
				m.Type, echoType, audioStatsType, uiCommandType, startJobGroupType))
		}
	})
	return task
}

// parseUICommand decodes the data of a ui-command client message,
// {command, payload?}, into the frame that sends it back: command must be
// a non-empty string; payload, any JSON value, is passed on untouched (and
// left out when the client left it out).
func parseUICommand(d rtviwire.RawJSON) (*rtvi.UICommandFrame, error) {
	trimmed := bytes.TrimSpace(d)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, errors.New("ui-command: the data must be an object {command, payload}")
	}
	var req struct {
		Command *string         `json:"command"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(trimmed, &req); err != nil {
		return nil, fmt.Errorf("ui-command: %w", err)
	}
	if req.Command == nil || *req.Command == "" {
		return nil, errors.New("ui-command: command must be a non-empty string")
	}
	f := &rtvi.UICommandFrame{Command: *req.Command}
	if len(req.Payload) > 0 {
		f.Payload = rtviwire.RawJSON(req.Payload)
	}
	return f, nil
}

// keepLast returns a BeforeInference hook that keeps only the last n
// messages of the context.
func keepLast(n int) func(*llm.Context) {
	return func(c *llm.Context) {
		if c.Len() <= n {
			return
		}
		c.Transform(func(ms []frames.LLMMessage) []frames.LLMMessage {
			if len(ms) <= n {
				return ms
			}
			return append([]frames.LLMMessage(nil), ms[len(ms)-n:]...)
		})
	}
}

// echoLLM is the bot's model: it answers the user's last message C with
// "echo: C", streamed in word-sized chunks as a real model would (row 9:
// bot-llm-started, bot-llm-text chunks that together read "echo: C",
// bot-llm-stopped). The chunks concatenate to exactly that text,
// whitespace included.
type echoLLM struct{}

// Model implements frames.Modeler.
func (echoLLM) Model() string { return "echo" }

// Stream implements llm.Provider.
func (echoLLM) Stream(ctx context.Context, req *frames.LLMContext) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		said := ""
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if req.Messages[i].Role == llm.RoleUser {
				said = req.Messages[i].Content
				break
			}
		}
		if !yield(llm.TextEvent("echo: "), nil) {
			return
		}
		for chunk := range wordChunks(said) {
			if ctx.Err() != nil || !yield(llm.TextEvent(chunk), nil) {
				return
			}
		}
	}
}

// wordChunks splits s into chunks that each end after a run of spaces (the
// last one at the end of s), so that the chunks concatenate back to s.
func wordChunks(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		start := 0
		inSpace := false
		for i, r := range s {
			space := unicode.IsSpace(r)
			if inSpace && !space {
				if !yield(s[start:i]) {
					return
				}
				start = i
			}
			inSpace = space
		}
		if start < len(s) {
			yield(s[start:])
		}
	}
}
