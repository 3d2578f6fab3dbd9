package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/transports/telephony/telephonytest"
)

// maxWAVBytes bounds the caller's WAV: about 6 minutes of 48 kHz stereo.
const maxWAVBytes = 64 << 20

// Exit statuses.
const (
	exitFailed   = 1
	exitUsage    = 2
	exitProtocol = 3
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command: args without the program's name; it returns the
// exit status.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("callsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		provider  = fs.String("provider", "twilio", "the provider to play: twilio (the one wired to the telephony transport so far)")
		answerURL = fs.String("answer", "http://127.0.0.1:8080/twilio/answer", "the bot's incoming-call webhook URL")
		streamURL = fs.String("stream", "", "dial this stream URL instead of the TwiML's (a bot behind a tunnel answers with its public URL)")
		authToken = fs.String("auth-token", "", "sign the webhook with this Twilio auth token (default: $TWILIO_AUTH_TOKEN; none: unsigned)")
		wavPath   = fs.String("wav", "", "the caller's speech, a 16-bit PCM WAV of any rate and channels (none: the caller only listens)")
		bargeIn   = fs.Duration("barge-in", 0, "speak over the greeting once this much of it was heard (0: wait for it to end)")
		digits    = fs.String("dtmf", "", "keys to press after the bot's answer, one at a time: 0-9, *, #, A-D")
		record    = fs.String("record", "", "write what the caller heard to this WAV (8 kHz mono)")
		from      = fs.String("from", "+15005550006", "the caller's number")
		to        = fs.String("to", "+15005550001", "the called number")
		quiet     = fs.Duration("quiet", 800*time.Millisecond, "the bot's turn is over after this long without its voice")
		reply     = fs.Duration("reply-timeout", 15*time.Second, "how long to wait for each of the bot's answers")
		linger    = fs.Duration("linger", 2*time.Second, "how long the caller stays on the line after its last turn (the bot may hang up)")
		maxCall   = fs.Duration("max-call", 2*time.Minute, "the longest the call may last")
		noText    = fs.Bool("no-transcript", false, "do not transcribe the bot's audio (PocketSphinx, when callsim is built with -tags pocketsphinx)")
		verbose   = fs.Bool("v", false, "log what happens on the call")
	)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "callsim: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}
	if *provider != "twilio" {
		fmt.Fprintf(stderr, "callsim: -provider %q: only twilio is wired to the telephony transport so far\n", *provider)
		return exitUsage
	}
	if bad := strings.Trim(*digits, "0123456789*#ABCD"); bad != "" {
		fmt.Fprintf(stderr, "callsim: -dtmf %q: keys are 0-9, *, #, A-D\n", *digits)
		return exitUsage
	}
	o := telephonytest.Options{
		AnswerURL: *answerURL, StreamURL: *streamURL, AuthToken: *authToken, From: *from, To: *to, DTMF: *digits,
		Quiet: *quiet, ReplyTimeout: *reply, MaxCall: *maxCall, BargeIn: *bargeIn, Linger: *linger,
	}
	if o.AuthToken == "" {
		o.AuthToken = getenv("TWILIO_AUTH_TOKEN")
	}
	if *verbose {
		o.Logf = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	}
	if *wavPath != "" {
		speech, err := loadSpeech(*wavPath)
		if err != nil {
			fmt.Fprintf(stderr, "callsim: %v\n", err)
			return exitFailed
		}
		o.Speech = speech
	}
	res, err := telephonytest.Call(ctx, o)
	if res != nil {
		summarize(stdout, res, len(o.Speech) > 0)
		if !*noText {
			said, terr := transcribe(context.WithoutCancel(ctx), res.Heard)
			printTranscript(stdout, said, terr)
		}
		if *record != "" {
			if werr := writeRecording(*record, res.Heard); werr != nil {
				fmt.Fprintf(stderr, "callsim: %v\n", werr)
				if err == nil {
					return exitFailed
				}
			}
		}
	}
	switch {
	case errors.Is(err, telephonytest.ErrProtocol):
		fmt.Fprintf(stderr, "callsim: %v\n", err)
		return exitProtocol
	case err != nil:
		fmt.Fprintf(stderr, "callsim: %v\n", err)
		return exitFailed
	}
	return 0
}

// loadSpeech reads a WAV of any rate and channels as 8 kHz mono.
func loadSpeech(path string) ([]int16, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the caller's WAV: %w", err)
	}
	defer f.Close()
	w, err := dsp.ReadWAV(f, maxWAVBytes)
	if err != nil {
		return nil, fmt.Errorf("the caller's WAV %s: %w", path, err)
	}
	return toCallAudio(w)
}

// toCallAudio mixes w to mono and resamples it to 8 kHz.
func toCallAudio(w dsp.WAV) ([]int16, error) {
	if w.SampleRate <= 0 || w.Channels <= 0 {
		return nil, fmt.Errorf("a WAV of %d Hz × %d channels", w.SampleRate, w.Channels)
	}
	mono := dsp.AppendMono(nil, w.PCM, w.Channels)
	if w.SampleRate != 8000 {
		r, err := dsp.NewResampler(w.SampleRate, 8000, 1, dsp.ResamplerOptions{})
		if err != nil {
			return nil, fmt.Errorf("resampling the caller's %d Hz audio to 8 kHz: %w", w.SampleRate, err)
		}
		mono = r.Flush(r.Resample(nil, mono))
	}
	return dsp.AppendSamples(nil, mono), nil
}

// writeRecording writes what the caller heard, 8 kHz mono.
func writeRecording(path string, heard []int16) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("the recording: %w", err)
	}
	if err := dsp.WriteWAV(f, dsp.AppendPCM(nil, heard), 8000, 1); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing the recording %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing the recording %s: %w", path, err)
	}
	return nil
}

// summarize prints what the caller heard and saw.
func summarize(w io.Writer, r *telephonytest.Result, spoke bool) {
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	fmt.Fprintf(w, "stream:          %s\n", r.StreamURL)
	fmt.Fprintf(w, "call:            %s (recorded)\n", ms(time.Duration(len(r.Heard))*time.Second/8000))
	fmt.Fprintf(w, "bot audio heard: %.2f s in %d media messages", r.BotAudio.Seconds(), r.Media)
	if r.Dropped > 0 {
		fmt.Fprintf(w, " (%.2f s more cleared before it played)", r.Dropped.Seconds())
	}
	fmt.Fprintln(w)
	switch {
	case !spoke:
		fmt.Fprintln(w, "voice-to-voice:  - (no -wav: the caller did not speak)")
	case r.SpeechEnd == 0:
		fmt.Fprintln(w, "voice-to-voice:  - (the WAV has no speech loud enough to find)")
	case r.Answered:
		fmt.Fprintf(w, "voice-to-voice:  %s (the caller's speech %s-%s, the bot's answer from %s)\n",
			ms(r.VoiceToVoice), ms(r.SpeechStart), ms(r.SpeechEnd), ms(r.SpeechEnd+r.VoiceToVoice))
	default:
		fmt.Fprintf(w, "voice-to-voice:  - (the bot did not answer the speech that ended at %s)\n", ms(r.SpeechEnd))
	}
	for i, d := range r.KeyAnswers {
		if d < 0 {
			fmt.Fprintf(w, "key %d:           not answered\n", i+1)
		} else {
			fmt.Fprintf(w, "key %d:           answered after %s\n", i+1, ms(d))
		}
	}
	fmt.Fprintf(w, "marks:           %d (%d echoed)\n", r.Marks, r.MarkEchoes)
	fmt.Fprintf(w, "clears:          %d", r.Clears)
	if r.Cleared {
		fmt.Fprintf(w, " (the first %s after the caller started speaking)", ms(r.ClearAfter))
	}
	fmt.Fprintln(w)
	if r.BotHungUp {
		fmt.Fprintln(w, "hang-up:         by the bot")
	} else {
		fmt.Fprintln(w, "hang-up:         by the caller")
	}
	if r.LateTicks > 0 {
		fmt.Fprintf(w, "late ticks:      %d (the machine did not keep real time)\n", r.LateTicks)
	}
}

// printTranscript prints what the bot said, utterance by utterance.
func printTranscript(w io.Writer, said []string, err error) {
	switch {
	case errors.Is(err, errNoTranscriber):
		fmt.Fprintf(w, "transcript:      - (%v)\n", err)
		return
	case err != nil:
		fmt.Fprintf(w, "transcript:      failed: %v\n", err)
	case len(said) == 0:
		fmt.Fprintln(w, "transcript:      - (the bot said nothing)")
	}
	for i, s := range said {
		fmt.Fprintf(w, "bot said %2d:     %q\n", i+1, s)
	}
}
