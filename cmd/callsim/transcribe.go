package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/processors/stt"
	"github.com/framewire/framewire/processors/stt/pocketsphinx"
)

// Bounds of the transcript: utterances are cut at this much silence, and
// at most maxUtterances are transcribed, each within utteranceTimeout.
const (
	utteranceGap     = 500 * time.Millisecond
	maxUtterances    = 20
	utteranceTimeout = 30 * time.Second
)

// utterances splits what the caller heard (8 kHz) into the bot's
// utterances: voiced 20 ms frames, cut at utteranceGap of silence.
func utterances(heard []int16) [][]int16 {
	const n = 160
	gap := int(utteranceGap / (20 * time.Millisecond))
	var out [][]int16
	start, end, quiet := -1, 0, 0 // the utterance so far: heard[start:end]
	for i := 0; i < len(heard); i += n {
		f := heard[i:min(i+n, len(heard))]
		if dsp.RMS(dsp.AppendPCM(nil, f)) > 0.01 {
			if start < 0 {
				start = i
			}
			end, quiet = i+len(f), 0
			continue
		}
		if start >= 0 {
			if quiet++; quiet >= gap {
				out = append(out, heard[start:end])
				start = -1
			}
		}
	}
	if start >= 0 {
		out = append(out, heard[start:end])
	}
	return out
}

// errNoTranscriber: callsim was built without PocketSphinx.
var errNoTranscriber = errors.New("build callsim with -tags pocketsphinx (Debian: libpocketsphinx-dev, pocketsphinx-en-us) to transcribe the bot")

// transcribe returns what PocketSphinx hears in each of the bot's
// utterances.
func transcribe(ctx context.Context, heard []int16) ([]string, error) {
	eng, err := pocketsphinx.New(pocketsphinx.Options{})
	if errors.Is(err, pocketsphinx.ErrUnavailable) {
		return nil, errNoTranscriber
	}
	if err != nil {
		return nil, fmt.Errorf("loading PocketSphinx: %w", err)
	}
	var out []string
	for i, u := range utterances(heard) {
		if i == maxUtterances {
			break
		}
		text, err := recognize(ctx, eng, u)
		if err != nil {
			return out, err
		}
		out = append(out, text)
	}
	return out, nil
}

// recognize transcribes one utterance, 8 kHz mono.
func recognize(ctx context.Context, eng *pocketsphinx.Engine, u []int16) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, utteranceTimeout)
	defer cancel()
	s, err := eng.Connect(ctx, stt.Format{SampleRate: 8000, Channels: 1})
	if err != nil {
		return "", fmt.Errorf("opening a PocketSphinx session: %w", err)
	}
	defer func() { _ = s.Abort() }()
	pcm := dsp.AppendSilence(dsp.AppendPCM(nil, u), 8000, 1, 300*time.Millisecond)
	if err := s.SendAudio(ctx, pcm); err != nil {
		return "", fmt.Errorf("transcribing: %w", err)
	}
	if err := s.Finalize(ctx); err != nil {
		return "", fmt.Errorf("transcribing: %w", err)
	}
	var said []string
	for {
		ev, err := s.Recv(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("transcribing: %w", err)
		}
		if ev.Kind == stt.EventFinal && ev.Text != "" {
			said = append(said, ev.Text)
		}
		if ev.Kind == stt.EventFinal && ev.Finalized {
			break
		}
	}
	return strings.Join(said, " "), nil
}
