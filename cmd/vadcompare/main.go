// Command vadcompare measures framewire's two voice activity detectors on
// the same audio: the energy detector (audio.VAD with its default
// SpeechBandScorer, 10 ms windows) and Silero VAD v5 (silero.NewVAD, 32 ms
// windows), both with Pipecat's default parameters. Speech is espeak-ng
// (two voices, eight sentences, each after 2 s of noise), mixed with white
// noise, pink noise and babble (six other espeak-ng voices overlapped) at
// several signal-to-noise ratios. For each detector and mix it reports the
// delay from speech onset to the VAD start, from speech end to the VAD
// stop, the sentences missed, and the false starts per minute of a
// separate minute of the same noise alone, with the share of that minute
// the detector called speech.
//
//	go run ./cmd/vadcompare
//
// It needs espeak-ng on the PATH and the model in the cache
// (processors/audio/silero/fetch-model.sh). Everything else is generated
// with fixed seeds, so the table is reproducible. It prints a Markdown
// table; docs/decisions/audio-silero.md has its output.
package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/processors/audio"
	"github.com/framewire/framewire/processors/audio/silero"
)

const (
	rate        = 16000
	speechDBFS  = -26.0 // active speech level
	gap         = 2 * time.Second
	noiseMinute = time.Minute
)

var sentences = []struct{ voice, text string }{
	{"en-us", "Hello, can you hear me?"},
	{"en-us+f3", "Yes."},
	{"en-us", "Please book a table for two at seven tonight."},
	{"en-us+f3", "Six sisters sat silently by the shore."},
	{"en-us", "Stop."},
	{"en-us+f3", "What is the weather like in Paris tomorrow morning?"},
	{"en-us", "I would like to change my flight to Friday."},
	{"en-us+f3", "No, thank you, that is all."},
}

var babbleVoices = []struct{ voice, text string }{
	{"en-gb", "The meeting was moved to the large room on the second floor."},
	{"en+m3", "They said the train would be late again this evening."},
	{"en-us+f2", "My sister bought a new bicycle and rides it every day."},
	{"en+m7", "Could you pass me the salt and the pepper, please."},
	{"en-gb+f4", "We walked along the river until the sun went down."},
	{"en-us+m2", "The children were playing football in the park after school."},
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "vadcompare:", err)
		os.Exit(1)
	}
}

type utterance struct {
	samples       []float64
	onset, offset int // sample offsets inside samples
	start, stop   int // sample offsets in the mix
}

func run() error {
	model, err := silero.LoadModel("")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "vadcompare")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	// The speech track: 2 s gap, sentence, 2 s gap, sentence, ... 2 s gap.
	var utts []utterance
	pos := int(gap.Seconds() * rate)
	for i, s := range sentences {
		x, err := speak(tmp, i, s.voice, s.text)
		if err != nil {
			return err
		}
		scale(x, speechDBFS-activeDBFS(x))
		on, off := span(x)
		utts = append(utts, utterance{samples: x, onset: on, offset: off, start: pos + on, stop: pos + off})
		pos += len(x) + int(gap.Seconds()*rate)
	}
	speech := make([]float64, pos)
	p := int(gap.Seconds() * rate)
	for _, u := range utts {
		copy(speech[p:], u.samples)
		p += len(u.samples) + int(gap.Seconds()*rate)
	}
	babble, err := makeBabble(tmp, pos+int(noiseMinute.Seconds()*rate))
	if err != nil {
		return err
	}

	type noise struct {
		name string
		gen  func(n int, seed uint64) []float64
	}
	noises := []noise{
		{"white", white},
		{"pink", pink},
		{"babble", func(n int, _ uint64) []float64 { return slices.Clone(babble[:n]) }},
	}
	detectors := []struct {
		name string
		make func() (audio.VADAnalyzer, error)
	}{
		{"energy", func() (audio.VADAnalyzer, error) { return audio.NewVAD(audio.VADOptions{}) }},
		{"silero", func() (audio.VADAnalyzer, error) { return silero.NewVAD(silero.Options{Model: model}) }},
	}

	fmt.Printf("| noise | SNR | detector | start delay median (max) | stop delay median (max) | missed | false starts/min | noise marked speech |\n")
	fmt.Printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	cases := []struct {
		noise int
		snr   float64
	}{{-1, math.Inf(1)}}
	for n := range noises {
		for _, snr := range []float64{20, 10, 5, 0} {
			cases = append(cases, struct {
				noise int
				snr   float64
			}{n, snr})
		}
	}
	for _, c := range cases {
		name, snr := "none", "clean"
		mix := slices.Clone(speech)
		var alone []float64
		if c.noise >= 0 {
			nz := noises[c.noise]
			name, snr = nz.name, fmt.Sprintf("%g dB", c.snr)
			all := nz.gen(len(speech)+int(noiseMinute.Seconds()*rate), 7)
			scale(all, speechDBFS-c.snr-rmsDBFS(all))
			for i := range mix {
				mix[i] += all[i]
			}
			alone = all[len(speech):]
		} else {
			alone = make([]float64, int(noiseMinute.Seconds()*rate)) // digital silence
		}
		for _, d := range detectors {
			v, err := d.make()
			if err != nil {
				return err
			}
			r := measure(v, toPCM(mix), utts)
			v, _ = d.make()
			ev := events(v, toPCM(alone))
			falseStarts, speaking := 0, 0
			for i, e := range ev {
				if !e.speaking {
					continue
				}
				falseStarts++
				end := len(alone)
				if i+1 < len(ev) {
					end = ev[i+1].at
				}
				speaking += end - e.at
			}
			fmt.Printf("| %s | %s | %s | %s | %s | %d/%d | %.1f | %.0f %% |\n", name, snr, d.name,
				stat(r.startDelays), stat(r.stopDelays), r.missed, len(utts),
				float64(falseStarts)/noiseMinute.Minutes(), 100*float64(speaking)/float64(len(alone)))
		}
	}
	return nil
}

type result struct {
	startDelays, stopDelays []time.Duration
	missed                  int
}

// measure runs v over the mix and matches its starts and stops to the
// utterances.
func measure(v audio.VADAnalyzer, pcm []byte, utts []utterance) result {
	ev := events(v, pcm)
	var r result
	toDur := func(n int) time.Duration { return time.Duration(n) * time.Second / rate }
	for i, u := range utts {
		next := len(pcm) / 2
		if i+1 < len(utts) {
			next = utts[i+1].start
		}
		// Speaking already at the onset (a false start in the gap that
		// lasted) counts as a start at the onset.
		startAt := -1
		if speakingAt(ev, u.start) {
			startAt = u.start
		}
		for _, e := range ev {
			if startAt < 0 && e.speaking && e.at >= u.start && e.at <= u.stop+rate/2 {
				startAt = e.at
			}
		}
		if startAt < 0 {
			r.missed++
			continue
		}
		r.startDelays = append(r.startDelays, toDur(startAt-u.start))
		for _, e := range ev {
			if !e.speaking && e.at >= u.stop && e.at < next {
				r.stopDelays = append(r.stopDelays, toDur(e.at-u.stop))
				break
			}
		}
	}
	return r
}

type event struct {
	at       int // sample offset after which the state changed
	speaking bool
}

// events feeds pcm in 20 ms chunks and returns the changes between quiet
// and speaking, timed at the end of the chunk.
func events(v audio.VADAnalyzer, pcm []byte) []event {
	const chunk = rate / 50
	var out []event
	speaking := false
	for i := 0; i+2*chunk <= len(pcm); i += 2 * chunk {
		st := v.Analyze(pcm[i : i+2*chunk])
		if now := st == audio.VADSpeaking || st == audio.VADStopping; now != speaking {
			speaking = now
			out = append(out, event{at: i/2 + chunk, speaking: now})
		}
	}
	return out
}

func speakingAt(ev []event, at int) bool {
	speaking := false
	for _, e := range ev {
		if e.at > at {
			break
		}
		speaking = e.speaking
	}
	return speaking
}

func stat(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	ms := func(d time.Duration) string { return fmt.Sprintf("%d", d.Milliseconds()) }
	return fmt.Sprintf("%s ms (%s)", ms(s[len(s)/2]), ms(s[len(s)-1]))
}

// speak renders text with espeak-ng and returns it at 16 kHz in [-1, 1].
func speak(dir string, i int, voice, text string) ([]float64, error) {
	path := filepath.Join(dir, fmt.Sprintf("s%d.wav", i))
	cmd := exec.Command("espeak-ng", "-v", voice, "-s", "160", "-w", path, text)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("espeak-ng %s: %v: %s", voice, err, strings.TrimSpace(string(out)))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	w, err := dsp.DecodeWAV(data)
	if err != nil {
		return nil, err
	}
	if w.Channels != 1 {
		return nil, fmt.Errorf("espeak-ng wrote %d channels", w.Channels)
	}
	pcm := w.PCM
	if w.SampleRate != rate {
		r, err := dsp.NewResampler(w.SampleRate, rate, 1, dsp.ResamplerOptions{})
		if err != nil {
			return nil, err
		}
		pcm = append(r.Resample(nil, w.PCM), r.Flush(nil)...)
	}
	x := make([]float64, len(pcm)/2)
	for i := range x {
		x[i] = float64(dsp.SampleAt(pcm, i)) / 32768
	}
	return x, nil
}

// makeBabble overlaps the babble voices, each looped with its own offset,
// into n samples.
func makeBabble(dir string, n int) ([]float64, error) {
	out := make([]float64, n)
	rng := rand.New(rand.NewPCG(3, 4))
	for i, b := range babbleVoices {
		x, err := speak(dir, 100+i, b.voice, b.text)
		if err != nil {
			return nil, err
		}
		scale(x, -30-activeDBFS(x))
		pause := int(0.3 * rate)
		p := rng.IntN(len(x))
		for j := range out {
			k := (j + p) % (len(x) + pause)
			if k < len(x) {
				out[j] += x[k]
			}
		}
	}
	return out, nil
}

func white(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

// pink filters white noise with Paul Kellet's refined -3 dB/octave filter.
func pink(n int, seed uint64) []float64 {
	w := white(n, seed)
	var b0, b1, b2, b3, b4, b5, b6 float64
	for i, x := range w {
		b0 = 0.99886*b0 + x*0.0555179
		b1 = 0.99332*b1 + x*0.0750759
		b2 = 0.96900*b2 + x*0.1538520
		b3 = 0.86650*b3 + x*0.3104856
		b4 = 0.55000*b4 + x*0.5329522
		b5 = -0.7616*b5 - x*0.0168980
		w[i] = b0 + b1 + b2 + b3 + b4 + b5 + b6 + x*0.5362
		b6 = x * 0.115926
	}
	return w
}

func scale(x []float64, db float64) {
	g := math.Pow(10, db/20)
	for i := range x {
		x[i] *= g
	}
}

func rmsDBFS(x []float64) float64 {
	var sq float64
	for _, v := range x {
		sq += v * v
	}
	return 10 * math.Log10(sq/float64(len(x))+1e-20)
}

// blockDBFS returns the level of each 10 ms block.
func blockDBFS(x []float64) []float64 {
	const block = rate / 100
	var out []float64
	for i := 0; i+block <= len(x); i += block {
		out = append(out, rmsDBFS(x[i:i+block]))
	}
	return out
}

// activeDBFS is the level of the blocks within 30 dB of the loudest one:
// the speech level without the pauses.
func activeDBFS(x []float64) float64 {
	levels := blockDBFS(x)
	top := slices.Max(levels)
	var sq float64
	n := 0
	for _, l := range levels {
		if l > top-30 {
			sq += math.Pow(10, l/10)
			n++
		}
	}
	return 10 * math.Log10(sq/float64(n))
}

// span returns the first and last sample of the blocks within 30 dB of
// the loudest one.
func span(x []float64) (onset, offset int) {
	levels := blockDBFS(x)
	top := slices.Max(levels)
	first, last := -1, 0
	for i, l := range levels {
		if l > top-30 {
			if first < 0 {
				first = i
			}
			last = i + 1
		}
	}
	return first * rate / 100, last * rate / 100
}

func toPCM(x []float64) []byte {
	pcm := make([]byte, 2*len(x))
	for i, v := range x {
		s := int16(max(-32768, min(32767, math.Round(v*32768))))
		pcm[2*i], pcm[2*i+1] = byte(s), byte(uint16(s)>>8)
	}
	return pcm
}
