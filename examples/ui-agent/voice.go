package main

import "github.com/framewire/framewire/pipeline"

// voice is the speech side of the demo: which services run and what the
// page tells the user about it.
type voice struct {
	// STT and TTS say whether speech-to-text and text-to-speech run.
	STT bool `json:"stt"`
	TTS bool `json:"tts"`
	// Note is shown next to the microphone button.
	Note string `json:"note"`

	// newSTT and newTTS build a session's services; nil when off.
	newSTT func() pipeline.Processor
	newTTS func() pipeline.Processor
}

// chooseVoice picks the speech services from the environment. Until the
// speech packages land (processors/stt, processors/tts engines) the demo
// is a text chat and says so.
func chooseVoice(getenv func(string) string) voice {
	_ = getenv
	return voice{Note: "Voice is off: no speech-to-text service is available in this build, so the demo is a text chat. Type below."}
}
