package main

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
	"github.com/framewire/framewire/processors/stt"
	"github.com/framewire/framewire/processors/stt/pocketsphinx"
)

func demoSnapshot(t testing.TB, name string) *wire.Snapshot {
	t.Helper()
	b, err := os.ReadFile("demobrain/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := wire.DecodeSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The items of the demo page are what a user names: product cards and
// their brands, headings, buttons and form labels; never the prose.
func TestPageItemsAreTheNamesThePageShows(t *testing.T) {
	items := pageItems(demoSnapshot(t, "top.json"))
	got := map[string]bool{}
	for _, it := range items {
		got[it.text] = it.proper
	}
	for text, proper := range map[string]bool{
		"iPhone 17": true, "Galaxy S25": true, "Pixel 9a": true, "Google": true, "Apple": true,
		"Masters of disguise": false, "First name": false, "Email": false, "Submit application": false,
		"Add iPhone 17 to cart": false,
	} {
		if p, ok := got[text]; !ok || p != proper {
			t.Errorf("item %q: present %v, proper %v; want present, proper %v", text, ok, p, proper)
		}
	}
	for text := range got {
		if strings.HasPrefix(text, "In the lab") || strings.Contains(text, "display") {
			t.Errorf("item %q is prose, not a name", text)
		}
	}
	if len(items) > maxPageItems {
		t.Errorf("%d items, over the bound %d", len(items), maxPageItems)
	}
}

// The recogniser writes what it heard in spoken words; the transcript
// takes the page's spelling of every item it names, so the user and the
// demo brain see "iPhone 17".
func TestVocabularyWritesThePagesForms(t *testing.T) {
	v := newVocabulary(pageItems(demoSnapshot(t, "top.json")))
	for heard, want := range map[string]string{
		"where is the iphone seventeen":           "where is the iPhone 17",
		"where is the iphone seventeen pro":       "where is the iPhone 17 Pro",
		"add the galaxy s twenty five to my cart": "add the Galaxy S25 to my cart",
		"which phones are from google":            "which phones are from Google",
		"my name is ada lovelace":                 "my name is Ada Lovelace",
		"explain this":                            "explain this",
		"where is the pixel nine a":               "where is the Pixel 9a",
		"where is the p i x e l ten":              "where is the Pixel 10", // a word spelled out letter by letter
		"":                                        "",
	} {
		if got := v.rewrite(heard); got != want {
			t.Errorf("rewrite(%q) = %q, want %q", heard, got, want)
		}
	}
	var none *vocabulary
	if got := none.rewrite("where is the iphone seventeen"); got != "where is the iphone seventeen" {
		t.Errorf("no vocabulary: %q", got)
	}
}

// The grammar built from the page holds the three phrases of the browser
// test, as PocketSphinx would write them.
func TestPageGrammarHoldsTheDemoPhrases(t *testing.T) {
	items := itemTexts(pageItems(demoSnapshot(t, "top.json")))
	g, err := pocketsphinx.NewGrammar(phrasings, items)
	if err != nil {
		t.Fatal(err)
	}
	for _, said := range []string{"where is the iphone seventeen", "my name is ada lovelace", "explain this",
		"add the pixel ten to my cart", "which phones are from google", "my email is ada at example dot com"} {
		if !g.Has(said) {
			t.Errorf("the grammar lacks %q", said)
		}
	}
	if g.Has("what is the weather like in paris") {
		t.Error("the grammar holds a phrase the page does not suggest")
	}
	if g.Dropped() != 0 {
		t.Errorf("%d texts dropped by the grammar's bounds", g.Dropped())
	}
	t.Logf("%d items, %d phrasings, %d bytes of JSGF", len(items), len(phrasings), len(g.JSGF()))
}

// A new snapshot rebuilds the grammar only when its items changed: a
// scroll or a typed value leaves it as it is.
func TestPageGrammarRebuildsOnlyWhenTheItemsChange(t *testing.T) {
	eng, err := pocketsphinx.New(pocketsphinx.Options{})
	if err != nil {
		t.Skipf("no PocketSphinx: %v", err)
	}
	vocab := new(atomic.Pointer[vocabulary])
	p := &pageGrammar{eng: eng, vocab: vocab}
	top, filled := demoSnapshot(t, "top.json"), demoSnapshot(t, "form-filled.json")
	if !slices.Equal(pageItems(top), pageItems(filled)) {
		t.Fatal("the test needs two snapshots with the same items")
	}
	changed := demoSnapshot(t, "top.json")
	changed.Root.Children[0].Children[0].Name = "Phones on sale"
	res := pipelinetest.Run(t, p, pipelinetest.Options{Send: []frames.Frame{
		&rtvi.UISnapshotFrame{Tree: top}, &rtvi.UISnapshotFrame{Tree: top}, &rtvi.UISnapshotFrame{Tree: filled},
		&rtvi.UISnapshotFrame{Tree: changed},
	}})
	if p.rebuilds != 2 {
		t.Errorf("%d rebuilds for two item sets, want 2", p.rebuilds)
	}
	if g := eng.Grammar(); g == nil || !g.Has("where is the phones on sale") {
		t.Error("the engine does not have the grammar of the last snapshot")
	}
	if got := vocab.Load().rewrite("where is the iphone seventeen"); got != "where is the iPhone 17" {
		t.Errorf("vocabulary: %q", got)
	}
	if n := len(res.Down()); n != 4 {
		t.Errorf("%d frames passed on, want the 4 snapshots", n)
	}
}

// BenchmarkPageGrammar measures what a new snapshot costs on the frame
// path: the items, the grammar and the vocabulary of the demo page.
func BenchmarkPageGrammar(b *testing.B) {
	s := demoSnapshot(b, "top.json")
	b.ReportAllocs()
	for b.Loop() {
		items := pageItems(s)
		texts := itemTexts(items)
		if _, err := pocketsphinx.NewGrammar(phrasings, texts); err != nil {
			b.Fatal(err)
		}
		newVocabulary(items)
	}
}

// BenchmarkRewrite measures the rewriting of one transcript.
func BenchmarkRewrite(b *testing.B) {
	v := newVocabulary(pageItems(demoSnapshot(b, "top.json")))
	b.ReportAllocs()
	for b.Loop() {
		v.rewrite("where is the iphone seventeen")
	}
}

// The grammar of the demo page is compiled by each session when its next
// utterance starts, on the STT's audio path: the first 20 ms of that
// utterance wait for it. It took 170 to 230 ms on the 2-CPU test machine
// (docs/decisions/demo-offline-voice.md); the bound is ten times that, so
// only a grammar that stalls the audio for seconds fails.
func TestPageGrammarCompilesWithinTwoSecondsOfTheNextUtterance(t *testing.T) {
	eng, err := pocketsphinx.New(pocketsphinx.Options{})
	if err != nil {
		t.Skipf("no PocketSphinx: %v", err)
	}
	s, err := eng.Connect(t.Context(), stt.Format{SampleRate: 16000, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	chunk := make([]byte, 640)
	utterance := func() time.Duration {
		if err := s.Finalize(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(t.Context()); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := s.SendAudio(t.Context(), chunk); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	if err := s.SendAudio(t.Context(), chunk); err != nil {
		t.Fatal(err)
	}
	plain := utterance()
	top := demoSnapshot(t, "top.json")
	start := time.Now()
	g, err := pocketsphinx.NewGrammar(phrasings, itemTexts(pageItems(top)))
	if err != nil {
		t.Fatal(err)
	}
	eng.SetGrammar(g)
	build := time.Since(start)
	compile := utterance()
	if missing, err := eng.GrammarStatus(); err != nil {
		t.Fatalf("the grammar did not compile: %v (missing %v)", err, missing)
	} else {
		t.Logf("words not in the dictionary, left out: %v", missing)
	}
	t.Logf("NewGrammar+SetGrammar %v; first 20 ms of the next utterance %v with the new grammar, %v without", build, compile, plain)
	if compile > 2*time.Second {
		t.Errorf("the first 20 ms of the utterance after SetGrammar took %v, want at most 2s", compile)
	}
}

// espeakPCM returns text spoken by espeak-ng as 16 kHz mono PCM, with half a
// second of silence on each side.
func espeakPCM(t testing.TB, voice, text string) []byte {
	t.Helper()
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng is not installed")
	}
	path := filepath.Join(t.TempDir(), "speech.wav")
	if out, err := exec.Command("espeak-ng", "-v", voice, "-s", "150", "-w", path, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v: %s", err, out)
	}
	wav, err := os.ReadFile(path)
	if err != nil || len(wav) < 44 {
		t.Fatalf("espeak-ng wrote %d bytes: %v", len(wav), err)
	}
	rate := int(binary.LittleEndian.Uint32(wav[24:]))
	off := 12
	for off+8 <= len(wav) && string(wav[off:off+4]) != "data" {
		off += 8 + int(binary.LittleEndian.Uint32(wav[off+4:]))
	}
	pcm := wav[off+8:]
	rs, err := dsp.NewResampler(rate, 16000, 1, dsp.ResamplerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pad := make([]byte, 16000)
	return append(append(append([]byte(nil), pad...), rs.Resample(nil, pcm)...), pad...)
}

// The three phrases of the browser test, spoken by espeak-ng in two
// voices, are recognised through the page's grammar and written in the
// page's forms (the figures of docs/decisions/demo-offline-voice.md).
func TestOfflineRecognitionOfTheDemoPhrases(t *testing.T) {
	st, last := offlineHearing(t, pageItems(demoSnapshot(t, "top.json")), true)
	outside, fellBack := 0, 0
	defer func() { t.Logf("outside the grammar: %d of %d fell back to the general model", fellBack, outside) }()
	for _, voice := range []string{"en-us", "en-gb"} {
		// In a fixed order: one decoder hears them all, and its cepstral
		// normalisation adapts from one utterance to the next, so what it
		// hears depends on what came before (a map's random order made the
		// test flaky).
		for _, p := range []struct{ said, want string }{
			{"Where is the iPhone 17?", "where is the iPhone 17"},
			{"My name is Ada Lovelace.", "my name is Ada Lovelace"},
			{"Explain this.", "explain this"},
			{"What is the weather like in Paris tomorrow?", ""},
			{"Please book me a table for two.", ""},
			{"Tell me a joke about cats.", ""},
		} {
			said, want := p.said, p.want
			ev := hear(t, st, espeakPCM(t, voice, said))
			r := last.Load()
			t.Logf("%s %q → %q (%s, confidence %.2f, phone ratio %.2f, fit %.2f; grammar heard %q, model %q)", voice, said, ev.Text, r.Source, ev.Confidence, r.PhoneRatio, r.Fit, r.Grammar, r.Model)
			if want == "" {
				// Outside the grammar: counted, not required (the bounds
				// are thin; see offlineOptions).
				if r.Source == pocketsphinx.SourceModel {
					fellBack++
				}
				outside++
				continue
			}
			if ev.Text != want || ev.Confidence <= 0.5 {
				t.Errorf("%s %q → %q with confidence %.2f, want %q from the grammar", voice, said, ev.Text, ev.Confidence, want)
			}
		}
	}
}

// A session's first utterance is the one its decoder hears with the
// model's default cepstral mean. The recording is "Explain this." as the
// demo's server received it in the browser test (espeak-ng into Chromium's
// fake microphone, then Chromium's audio processing, Opus and
// resampling): far from that default in level and spectrum. Judged on the
// live pass's costs, the grammar's phrase fitted it at 1.39, over the
// demo's MaxFit of 1.3, and the general model's "episode liu lose" won;
// against the general model decoded again with the grammar pass's mean it
// fits at 1.07.
func TestTheFirstUtteranceAsTheBrowserSendsItIsHeard(t *testing.T) {
	pcm, err := os.ReadFile(filepath.Join("testdata", "explain-this-chromium.raw"))
	if err != nil {
		t.Fatal(err)
	}
	st, last := offlineHearing(t, pageItems(demoSnapshot(t, "top.json")), true)
	ev := hear(t, st, pcm)
	r := last.Load()
	if ev.Text != "explain this" || r.Source != pocketsphinx.SourceGrammar {
		t.Errorf("heard %q from the %v (fit %.2f, phone ratio %.2f, model %q); want \"explain this\" from the grammar", ev.Text, r.Source, r.Fit, r.PhoneRatio, r.Model)
	}
	t.Logf("fit %.2f, phone ratio %.2f, model heard %q, decoded %v after the utterance", r.Fit, r.PhoneRatio, r.Model, r.Decode)
}

// offlineHearing connects the demo's offline speech input to a decoder
// of its own: PocketSphinx with the demo's settings, the grammar of items
// when grammar is set, and the page's forms for the transcripts. last
// holds the engine's latest result.
func offlineHearing(t *testing.T, items []pageItem, grammar bool) (s stt.Stream, last *atomic.Pointer[pocketsphinx.Result]) {
	t.Helper()
	last = new(atomic.Pointer[pocketsphinx.Result])
	o := offlineOptions()
	o.OnResult = func(r pocketsphinx.Result) { last.Store(&r) }
	eng, err := pocketsphinx.New(o)
	if err != nil {
		t.Skipf("no PocketSphinx: %v", err)
	}
	if grammar {
		g, err := pocketsphinx.NewGrammar(phrasings, itemTexts(items))
		if err != nil {
			t.Fatal(err)
		}
		eng.SetGrammar(g)
	}
	vocab := new(atomic.Pointer[vocabulary])
	vocab.Store(newVocabulary(items))
	s, err = pageSTT{eng: eng, vocab: vocab}.Connect(t.Context(), stt.Format{SampleRate: 16000, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Abort() })
	return s, last
}

// hear sends an utterance to s in 20 ms chunks, ends it, and returns its
// final event.
func hear(t *testing.T, s stt.Stream, pcm []byte) stt.Event {
	t.Helper()
	for len(pcm) > 0 {
		n := min(640, len(pcm))
		if err := s.SendAudio(t.Context(), pcm[:n]); err != nil {
			t.Fatal(err)
		}
		pcm = pcm[n:]
	}
	if err := s.Finalize(t.Context()); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := s.Recv(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == stt.EventFinal {
			return ev
		}
	}
}
