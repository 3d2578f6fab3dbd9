//go:build pocketsphinx && cgo

package pocketsphinx

import (
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/stt"
)

// The demo's grammar: what a shop page shows, and what users say about it.
var (
	demoPhrasings = []string{
		"where is the {item}", "show me the {item}", "how much is the {item}", "tell me more about the {item}",
		"go to {item}", "scroll to {item}", "fill in my {item}",
		"explain this", "read this aloud", "scroll down", "scroll up", "go back", "what is this",
	}
	demoItems = []string{
		"iPhone 17", "Galaxy S25", "Pixel 9 Pro", "MacBook Air", "Kindle", "ThinkPad X1", "Headphones",
		"Shipping address", "Contact us", "Our story", "Featured products",
		"Name", "Email", "Phone number", "City",
	}
	// demoSpoken are 20 things a user says to the demo, as espeak-ng reads them.
	demoSpoken = []string{
		"Where is the iPhone 17?", "Where is the Galaxy S25?", "Show me the Pixel 9 Pro", "Show me the MacBook Air",
		"How much is the Kindle?", "Tell me more about the headphones", "Go to shipping address", "Scroll to contact us",
		"Scroll to featured products", "Fill in my name", "Fill in my email", "Fill in my phone number",
		"Fill in my city", "Explain this", "Read this aloud", "Scroll down", "Scroll up", "Go back",
		"What is this?", "Where is the ThinkPad X1?",
	}
)

func demoGrammar(t testing.TB) *Grammar {
	t.Helper()
	g, err := NewGrammar(demoPhrasings, demoItems)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func expected(spoken string) string { return strings.Join(Words(spoken), " ") }

func TestGrammarPhrasesAreRecognisedExactly(t *testing.T) {
	e := newEngine(t, Options{Grammar: demoGrammar(t)})
	for _, spoken := range []string{"Where is the iPhone 17?", "Fill in my name", "Explain this", "Show me the Pixel 9 Pro", "Scroll to contact us"} {
		r := recognize(t, e, speak(t, "en-us", spoken))
		if r.Text != expected(spoken) || r.Source != SourceGrammar || r.Confidence <= 0.5 {
			t.Errorf("%q: got %q from the %v, confidence %.2f (fit %.2f, model heard %q); want %q from the grammar, confidence above 0.5 (phone ratio %.2f)",
				spoken, r.Text, r.Source, r.Confidence, r.Fit, r.Model, expected(spoken), r.PhoneRatio)
		}
	}
	if missing, err := e.GrammarStatus(); err != nil || len(missing) != 0 {
		t.Errorf("GrammarStatus = %q, %v; want every word in the dictionary", missing, err)
	}
}

func TestWithoutGrammarTheGeneralModelTranscribes(t *testing.T) {
	e := newEngine(t, Options{})
	phrases := []string{"I would like to buy a car", "What is the weather like today", "Where is the iPhone 17?"}
	var total float64
	for _, spoken := range phrases {
		r := recognize(t, e, speak(t, "en-us", spoken))
		acc := wordAccuracy(expected(spoken), r.Text)
		total += acc
		t.Logf("%q → %q: word accuracy %.2f, confidence %.2f", spoken, r.Text, acc, r.Confidence)
		if r.Source != SourceModel || r.Confidence > 0.5 || r.Grammar != "" {
			t.Errorf("%q: source %v, confidence %.2f, grammar %q; want the model's, at most 0.5, no grammar", spoken, r.Source, r.Confidence, r.Grammar)
		}
	}
	if mean := total / float64(len(phrases)); mean < 0.4 {
		t.Errorf("mean word accuracy %.2f, want at least 0.4", mean)
	}
}

func TestOutsideTheGrammarFallsBackToTheGeneralModel(t *testing.T) {
	e := newEngine(t, Options{Grammar: demoGrammar(t)})
	for _, spoken := range []string{"I would like to buy a car", "What is the weather like today"} {
		r := recognize(t, e, speak(t, "en-us", spoken))
		if r.Source != SourceModel || r.Confidence > 0.25 || r.Text != r.Model || r.Text == "" {
			t.Errorf("%q: %q from the %v, confidence %.2f (fit %.2f, grammar %q); want the model's text, confidence at most 0.25",
				spoken, r.Text, r.Source, r.Confidence, r.Fit, r.Grammar)
		}
		if acc := wordAccuracy(expected(spoken), r.Text); acc < 0.5 {
			t.Errorf("%q → %q: word accuracy %.2f, want at least 0.5", spoken, r.Text, acc)
		}
	}
}

func TestGrammarReplacedMidStream(t *testing.T) {
	first, err := NewGrammar([]string{"where is the {item}"}, []string{"iPhone 17", "Pixel 9 Pro"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := NewGrammar([]string{"fill in my {item}"}, []string{"Name", "City"})
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, Options{Grammar: first})
	ctx, cancel := context.WithTimeout(t.Context(), decodeWait)
	defer cancel()
	s, err := e.Open(ctx, stt.Format{SampleRate: rate, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()

	pcm := speak(t, "en-us", "Where is the iPhone 17?")
	half := len(pcm) / 2 &^ 1
	// The utterance starts with first. Once it is under way, other
	// goroutines replace the grammar all along (the race detector watches
	// the hand-over); then second is set.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }); wg.Wait() }
	defer halt() // also when the test fails half-way
	r := decodeParts(t, ctx, s, [][]byte{pcm[:half], pcm[half:]}, func() {
		for range 3 {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if i%2 == 0 {
						e.SetGrammar(second)
					} else {
						e.SetGrammar(nil)
					}
					time.Sleep(time.Millisecond)
				}
			})
		}
	})
	halt()
	e.SetGrammar(second)
	if r.Text != "where is the iphone seventeen" || r.Source != SourceGrammar {
		t.Errorf("utterance in progress: %q from the %v; want the first grammar's phrase", r.Text, r.Source)
	}
	r = decodeUtterance(t, ctx, s, speak(t, "en-us", "Fill in my city"))
	if r.Text != "fill in my city" || r.Source != SourceGrammar {
		t.Errorf("next utterance: %q from the %v; want the second grammar's phrase", r.Text, r.Source)
	}
	r = decodeUtterance(t, ctx, s, speak(t, "en-us", "Where is the iPhone 17?"))
	if r.Source == SourceGrammar && r.Text == "where is the iphone seventeen" {
		t.Errorf("a phrase of the replaced grammar still came from the grammar: %q", r.Text)
	}
}

func TestTheDecodersOwnEndpointingEndsAnUtterance(t *testing.T) {
	e := newEngine(t, Options{Grammar: demoGrammar(t), EndSilence: 600 * time.Millisecond})
	ctx, cancel := context.WithTimeout(t.Context(), decodeWait)
	defer cancel()
	s, err := e.Open(ctx, stt.Format{SampleRate: rate, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	pcm := append(speak(t, "en-us", "Explain this"), noise(2*rate, 3)...)
	if err := s.SendAudio(ctx, pcm); err != nil {
		t.Fatal(err)
	}
	for {
		r, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.Final {
			if r.Text != "explain this" || r.Finalized {
				t.Errorf("final %q finalized=%v; want \"explain this\", not finalized (no Finalize was sent)", r.Text, r.Finalized)
			}
			return
		}
	}
}

func TestAudioIsResampledAndMixedDown(t *testing.T) {
	e := newEngine(t, Options{Grammar: demoGrammar(t)})
	ctx, cancel := context.WithTimeout(t.Context(), decodeWait)
	defer cancel()
	s, err := e.Open(ctx, stt.Format{SampleRate: 48000, Channels: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	mono := speak(t, "en-us", "Scroll down")
	// 16 kHz → 48 kHz by repeating samples, then the same on both channels.
	stereo := make([]byte, 0, 12*len(mono))
	for i := 0; i+1 < len(mono); i += 2 {
		for range 3 {
			stereo = append(stereo, mono[i], mono[i+1], mono[i], mono[i+1])
		}
	}
	r := decodeUtterance(t, ctx, s, stereo)
	if r.Text != "scroll down" {
		t.Errorf("48 kHz stereo: %q, want \"scroll down\"", r.Text)
	}
}

func TestStreamLifecycle(t *testing.T) {
	e := newEngine(t, Options{})
	ctx, cancel := context.WithTimeout(t.Context(), decodeWait)
	defer cancel()

	t.Run("Finalize without speech answers with an empty final", func(t *testing.T) {
		s, err := e.Open(ctx, stt.Format{SampleRate: rate, Channels: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Abort()
		if err := s.SendAudio(ctx, noise(rate/2, 4)); err != nil {
			t.Fatal(err)
		}
		if err := s.Finalize(ctx); err != nil {
			t.Fatal(err)
		}
		ev, err := s.Recv(ctx)
		if diff := cmp.Diff(stt.Event{Kind: stt.EventFinal, Finalized: true, Language: "en-US"}, ev); err != nil || diff != "" {
			t.Errorf("Recv: %v (-want +got):\n%s", err, diff)
		}
	})
	t.Run("Close sends the last final then EOF", func(t *testing.T) {
		s, err := e.Open(ctx, stt.Format{SampleRate: rate, Channels: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Abort()
		if err := s.SendAudio(ctx, speak(t, "en-us", "I would like to buy a car")); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		var final stt.Event
		for {
			ev, err := s.Recv(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind == stt.EventFinal {
				final = ev
			}
		}
		if !final.Finalized || !strings.Contains(final.Text, "like to") || final.Confidence <= 0 || final.Confidence > 0.5 {
			t.Errorf("last final %+v; want the utterance, finalized, with the general model's confidence in (0, 0.5]", final)
		}
		if err := s.SendAudio(ctx, noise(320, 1)); err == nil {
			t.Error("SendAudio after Close: no error")
		}
	})
	t.Run("Abort unblocks a waiting sender and Recv", func(t *testing.T) {
		s, err := e.Open(ctx, stt.Format{SampleRate: rate, Channels: 1})
		if err != nil {
			t.Fatal(err)
		}
		// Nobody reads: finals fill the queue, then Finalize waits.
		sent := make(chan error, 1)
		go func() {
			for {
				if err := s.Finalize(ctx); err != nil {
					sent <- err
					return
				}
			}
		}()
		time.Sleep(50 * time.Millisecond)
		if err := s.Abort(); err != nil {
			t.Fatal(err)
		}
		if err := <-sent; !errors.Is(err, errAborted) {
			t.Errorf("blocked Finalize after Abort: %v, want errAborted", err)
		}
		for {
			if _, err := s.Recv(ctx); err != nil {
				if !errors.Is(err, errAborted) {
					t.Errorf("Recv after Abort: %v, want errAborted", err)
				}
				break
			}
		}
		if err := s.Abort(); err != nil {
			t.Errorf("second Abort: %v", err)
		}
		if err := s.SendAudio(ctx, noise(320, 1)); !errors.Is(err, errAborted) {
			t.Errorf("SendAudio after Abort: %v, want errAborted", err)
		}
	})
	t.Run("a cancelled context ends a waiting sender", func(t *testing.T) {
		s, err := e.Open(ctx, stt.Format{SampleRate: rate, Channels: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Abort()
		cctx, ccancel := context.WithCancel(ctx)
		time.AfterFunc(50*time.Millisecond, ccancel)
		for {
			if err := s.Finalize(cctx); err != nil {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("Finalize: %v, want context.Canceled", err)
				}
				break
			}
		}
	})
	t.Run("a bad format is a permanent error", func(t *testing.T) {
		_, err := e.Connect(ctx, stt.Format{SampleRate: 0, Channels: 1})
		if frames.CategoryOf(err) != frames.ErrorPermanent {
			t.Errorf("Connect with rate 0: %v (category %v), want a permanent error", err, frames.CategoryOf(err))
		}
	})
}

func TestNewChecksTheModels(t *testing.T) {
	_, err := New(Options{ModelDir: t.TempDir()})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("New over an empty folder: %v, want os.ErrNotExist", err)
	}
}

// rssKB returns the process's resident memory.
func rssKB(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	t.Skip("no VmRSS")
	return 0
}

func TestDecodersAreFreed(t *testing.T) {
	if testing.Short() {
		t.Skip("loads fifteen decoders")
	}
	// One OS thread makes all C allocations from one malloc arena, so
	// freed decoders are reused rather than left in other threads' arenas.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	e := newEngine(t, Options{Grammar: demoGrammar(t)})
	ctx := t.Context()
	pcm := speak(t, "en-us", "Explain this")
	cycle := func() {
		s, err := e.Open(ctx, stt.Format{SampleRate: rate, Channels: 1})
		if err != nil {
			t.Fatal(err)
		}
		decodeUtterance(t, ctx, s, pcm)
		if err := s.Abort(); err != nil {
			t.Fatal(err)
		}
	}
	start := rssKB(t)
	for range 3 {
		cycle()
	}
	warm := rssKB(t)
	const n = 12
	for range n {
		cycle()
	}
	grown := rssKB(t) - warm
	t.Logf("resident: %d MB at start, %d MB after 3 sessions (one decoder's worth, kept by malloc), %+d kB after %d more (%+d kB each)",
		start/1024, warm/1024, grown, n, grown/n)
	// A decoder is some 60 MB: one not freed per session would show.
	if grown > 20<<10 {
		t.Errorf("resident memory grew by %d kB over %d sessions: decoders leak", grown, n)
	}
}

func TestAsTheStreamingService(t *testing.T) {
	var mu sync.Mutex
	var finals []Result
	e := newEngine(t, Options{Grammar: demoGrammar(t), OnResult: func(r Result) {
		mu.Lock()
		finals = append(finals, r)
		mu.Unlock()
	}})
	svc := stt.NewStreaming(e, stt.StreamingOptions{UserID: "caller", CloseTimeout: 30 * time.Second, MaxBuffered: 10 * time.Second})
	var send []frames.Frame
	pcm := speak(t, "en-us", "Where is the iPhone 17?")
	for b := pcm; len(b) > 0; {
		n := min(len(b), 640)
		send = append(send, &frames.InputAudioRaw{Audio: frames.Audio{PCM: b[:n], SampleRate: rate, Channels: 1}})
		b = b[n:]
	}
	send = append(send, &frames.VADUserStoppedSpeaking{})
	// Loading the decoder takes a second or more on a busy machine.
	res := pipelinetest.Run(t, svc, pipelinetest.Options{Send: send, Timeout: time.Minute})
	var got []string
	for _, tr := range pipelinetest.OfType[*frames.Transcription](res.Down()) {
		got = append(got, tr.Text+" "+tr.UserID+" "+tr.Language+" finalized="+strconv.FormatBool(tr.Finalized))
	}
	if diff := cmp.Diff([]string{"where is the iphone seventeen caller en-US finalized=true"}, got); diff != "" {
		t.Errorf("transcriptions (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(finals) != 1 || finals[0].Source != SourceGrammar || finals[0].Confidence <= 0.5 {
		t.Errorf("OnResult saw %+v; want one result from the grammar", finals)
	}
}

// outsideSpoken are things a user says that the demo's grammar does not
// have.
var outsideSpoken = []string{
	"I would like to buy a car", "What is the weather like today", "Where is the nearest station",
	"Can you help me with my order", "Is this product in stock", "Explain that again please",
}

// TestRecognitionFigures measures, on the 20 demo phrases in two voices,
// the share recognised exactly with the demo's grammar and without it,
// and the share of phrases outside the grammar that fall back to the
// general model. It takes a minute or two: set POCKETSPHINX_FIGURES=1.
func TestRecognitionFigures(t *testing.T) {
	if os.Getenv("POCKETSPHINX_FIGURES") == "" {
		t.Skip("set POCKETSPHINX_FIGURES=1 to measure the recognition figures")
	}
	e := newEngine(t, Options{})
	ctx := t.Context()
	s, err := e.Open(ctx, stt.Format{SampleRate: rate, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	voices := []string{"en-us", "en-gb"}
	type tally struct {
		exact, n int
		acc      float64
		decode   time.Duration
	}
	var with, without, outside tally
	audio := map[string][]byte{}
	for _, v := range voices {
		for _, p := range append(append([]string(nil), demoSpoken...), outsideSpoken...) {
			audio[v+p] = speak(t, v, p)
		}
	}
	for _, g := range []*Grammar{nil, demoGrammar(t)} {
		e.SetGrammar(g)
		decodeUtterance(t, ctx, s, noise(rate/10, 9)) // the next utterance starts with g
		for _, v := range voices {
			for _, p := range demoSpoken {
				r := decodeUtterance(t, ctx, s, audio[v+p])
				tl := &without
				if g != nil {
					tl = &with
				}
				tl.n++
				tl.acc += wordAccuracy(expected(p), r.Text)
				tl.decode += r.Decode
				if r.Text == expected(p) {
					tl.exact++
				} else {
					t.Logf("grammar=%v %s %q → %q (%v, confidence %.2f)", g != nil, v, p, r.Text, r.Source, r.Confidence)
				}
			}
			if g == nil {
				continue
			}
			for _, p := range outsideSpoken {
				r := decodeUtterance(t, ctx, s, audio[v+p])
				outside.n++
				outside.acc += wordAccuracy(expected(p), r.Text)
				if r.Source == SourceModel && r.Confidence <= 0.25 {
					outside.exact++
				} else {
					t.Logf("outside %s %q → %q from the grammar (ratio %.2f, fit %.2f)", v, p, r.Text, r.PhoneRatio, r.Fit)
				}
			}
		}
	}
	t.Logf("with the grammar: %d/%d exact (%.0f%%), word accuracy %.2f, decode after the utterance %v on average",
		with.exact, with.n, 100*float64(with.exact)/float64(with.n), with.acc/float64(with.n), with.decode/time.Duration(with.n))
	t.Logf("without: %d/%d exact (%.0f%%), word accuracy %.2f, decode after the utterance %v on average",
		without.exact, without.n, 100*float64(without.exact)/float64(without.n), without.acc/float64(without.n), without.decode/time.Duration(without.n))
	t.Logf("outside the grammar: %d/%d fell back to the general model, its word accuracy %.2f", outside.exact, outside.n, outside.acc/float64(outside.n))
	if with.exact*10 < with.n*9 {
		t.Errorf("with the grammar %d/%d exact, want at least 90%%", with.exact, with.n)
	}
	if outside.exact*10 < outside.n*8 {
		t.Errorf("outside the grammar %d/%d fell back, want at least 80%%", outside.exact, outside.n)
	}
}
