package transporttest

import (
	"context"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// Speaker stands in for the output transport (it is an
// rtvi.OutputTransport): it passes every frame on, as a transport releases
// them after the audio ahead, and reports the bot speaking from the first
// audio of a response to its TTSStopped (BotStartedSpeaking and
// BotStoppedSpeaking, both ways, after the TTSStopped), so that the RTVI
// observer sends the spoken text it holds. An Interruption ends the
// speaking without a BotStoppedSpeaking, as the transport's flush does for
// the pipeline. The zero value is ready; use one per pipeline.
type Speaker struct{ speaking bool }

// OutputTransport marks Speaker as the output transport.
func (*Speaker) OutputTransport() {}

// ProcessFrame reports the bot's speaking state from the downstream audio,
// TTSStopped and Interruption frames.
func (s *Speaker) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	if dir != frames.Downstream {
		return nil
	}
	switch f.(type) {
	case *frames.TTSAudioRaw:
		if !s.speaking {
			s.speaking = true
			pipeline.Broadcast(h.Pusher(), func() *frames.BotStartedSpeaking { return &frames.BotStartedSpeaking{} })
		}
	case *frames.TTSStopped:
		if s.speaking {
			s.speaking = false
			h.Forward()
			pipeline.Broadcast(h.Pusher(), func() *frames.BotStoppedSpeaking { return &frames.BotStoppedSpeaking{} })
		}
	case *frames.Interruption:
		s.speaking = false
	}
	return nil
}
