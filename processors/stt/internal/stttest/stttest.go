package stttest

import "github.com/framewire/framewire/frames"

// AudioFrames returns n frames of 20 ms of silence from the user "caller",
// 16 kHz mono: 640 bytes each.
func AudioFrames(n int) []frames.Frame {
	fs := make([]frames.Frame, 0, n)
	for range n {
		fs = append(fs, &frames.InputAudioRaw{Audio: frames.Audio{PCM: make([]byte, 640), SampleRate: 16000, Channels: 1}, UserID: "caller"})
	}
	return fs
}

// Results lists the transcription frames of fs compactly, one line each:
// "interim TEXT", or "final TEXT [LANGUAGE] USER TIMESTAMP" followed by
// " (finalized)" for a transcription that closes the turn.
func Results(fs []frames.Frame) []string {
	var out []string
	for _, f := range fs {
		switch f := f.(type) {
		case *frames.InterimTranscription:
			out = append(out, "interim "+f.Text)
		case *frames.Transcription:
			fin := ""
			if f.Finalized {
				fin = " (finalized)"
			}
			out = append(out, "final "+f.Text+" ["+f.Language+"] "+f.UserID+" "+f.Timestamp+fin)
		}
	}
	return out
}

// Seq joins lists of frames into one.
func Seq(parts ...[]frames.Frame) []frames.Frame {
	var out []frames.Frame
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
