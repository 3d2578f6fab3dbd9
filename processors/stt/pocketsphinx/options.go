package pocketsphinx

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultModelDir is where Debian's pocketsphinx-en-us package installs
// the US English models.
const DefaultModelDir = "/usr/share/pocketsphinx/model/en-us"

// Defaults of [Options].
const (
	DefaultEndSilence      = 1500 * time.Millisecond
	DefaultMaxUtterance    = 20 * time.Second
	DefaultInterimInterval = 250 * time.Millisecond
	// DefaultMaxPhoneRatio and DefaultMaxFit bound [Result.PhoneRatio]
	// and [Result.Fit] for the grammar's result to stand. They were
	// measured on espeak-ng speech: see the package documentation.
	DefaultMaxPhoneRatio = 1.4
	DefaultMaxFit        = 1.1
	// MaxPronunciations bounds Options.Pronunciations.
	MaxPronunciations = 1000
)

// ErrUnavailable is what [New] returns when the package was built without
// the pocketsphinx build tag (or without cgo).
var ErrUnavailable = errors.New("pocketsphinx: built without pocketsphinx: rebuild with cgo and -tags pocketsphinx (Debian: libpocketsphinx-dev, pocketsphinx-en-us)")

// Options configure an [Engine]. The zero value uses the Debian models.
type Options struct {
	// ModelDir holds the models. Default: DefaultModelDir.
	ModelDir string
	// AcousticModel, LanguageModel and Dictionary are the model paths;
	// relative ones are under ModelDir. Defaults: "en-us",
	// "en-us.lm.bin" and "cmudict-en-us.dict".
	AcousticModel, LanguageModel, Dictionary string
	// Grammar is the grammar to start with; see [Engine.SetGrammar].
	Grammar *Grammar
	// NoSpelling leaves out the items and phrasings with a word that is
	// not in the dictionary, instead of spelling the word out letter by
	// letter ("oppo" → "o p p o"). Spelled items are short strings of
	// short sounds that much other speech fits: with many items on a page
	// they draw in speech outside the grammar.
	NoSpelling bool
	// Pronunciations adds to the dictionary: a word, or another way of
	// saying one already there named "word(2)", "word(3)", to its phones
	// in the acoustic model's set ("EH K S P L EY N"). The dictionary
	// lists one or two ways of saying most words, and people (and
	// synthesizers) use others: "explain" is only IH K S P L EY N in the
	// Debian dictionary. At most MaxPronunciations entries; [New] checks
	// their form, and a phone the model does not know fails the session's
	// start.
	Pronunciations map[string]string
	// MaxPhoneRatio and MaxFit decide between the two searches: the
	// grammar's result stands when [Result.PhoneRatio] is between 0.5 and
	// MaxPhoneRatio and [Result.Fit] is at most MaxFit;
	// otherwise the general model's is taken. Larger values trust the
	// grammar more. Defaults: DefaultMaxPhoneRatio, DefaultMaxFit.
	MaxPhoneRatio, MaxFit float64
	// EndSilence ends an utterance after this much silence (PocketSphinx's
	// own voice activity detection) when no Finalize came first: the
	// pipeline's VAD frames normally end utterances sooner. Negative
	// disables it. Default: DefaultEndSilence.
	EndSilence time.Duration
	// MaxUtterance ends an utterance that lasts longer. Default:
	// DefaultMaxUtterance.
	MaxUtterance time.Duration
	// InterimInterval is how much audio goes between two interim results.
	// Default: DefaultInterimInterval.
	InterimInterval time.Duration
	// Args are more PocketSphinx settings, as command-line flags and
	// values ("-beam", "1e-60"); they override the engine's ("-bestpath",
	// "-fwdflat" and the like; see the package documentation).
	Args []string
	// OnResult, when set, sees every final result with its confidence and
	// the search that produced it, which stt events do not carry. It runs
	// on the goroutine that sends audio, with the session locked: it must
	// return quickly and not call the session.
	OnResult func(Result)
}

// Source says which search produced a result.
type Source uint8

const (
	// SourceModel is the general language model: no grammar was set, or
	// the utterance was outside it.
	SourceModel Source = iota
	// SourceGrammar is the grammar: the text is one of its phrases.
	SourceGrammar
)

// String returns "model" or "grammar".
func (s Source) String() string {
	if s == SourceGrammar {
		return "grammar"
	}
	return "model"
}

// Result is one transcript of an utterance.
type Result struct {
	// Text is the transcript, lower-case words ("" when nothing was
	// recognised).
	Text string
	// Final is false for an interim result, which may still change.
	Final bool
	// Finalized is true on the final result that answers a Finalize.
	Finalized bool
	// Source says which search produced Text.
	Source Source
	// Confidence is in [0, 1]. A result from the grammar has a confidence
	// above 0.5; one from the general model at most 0.5 (when a grammar
	// was set and rejected, at most 0.25), so one threshold says both how
	// sure the engine is and whether the grammar matched. Interim results
	// have no confidence (0).
	Confidence float64
	// Grammar and Model are the hypotheses of the two searches on a final
	// result: Grammar is "" when no grammar was set.
	Grammar, Model string
	// PhoneRatio is the number of phones in what the general model heard
	// over the number in the grammar's phrase: near 1 when the phrase
	// spans the speech, above it when the speech says more than the
	// phrase. Fit is the grammar's acoustic cost per frame over the
	// general model's: below 1 the phrase fits the audio better than what
	// the general model heard. Both are 0 unless both searches heard
	// something.
	PhoneRatio, Fit float64
	// Audio is the duration of the utterance's audio.
	Audio time.Duration
	// Decode is the time spent decoding after the end of the utterance:
	// the latency that the final result adds.
	Decode time.Duration
}

// checkPronunciations checks the form of Options.Pronunciations: a word of
// at most 64 bytes without spaces, optionally ending in "(2)" to "(99)",
// and 1 to 32 phones of one to three capital letters.
func checkPronunciations(p map[string]string) error {
	if len(p) > MaxPronunciations {
		return fmt.Errorf("pocketsphinx: %d pronunciations, at most %d", len(p), MaxPronunciations)
	}
	for word, phones := range p {
		base := word
		if i := strings.IndexByte(word, '('); i > 0 {
			n, err := strconv.Atoi(strings.TrimSuffix(word[i+1:], ")"))
			if !strings.HasSuffix(word, ")") || err != nil || n < 2 || n > 99 {
				return fmt.Errorf("pocketsphinx: pronunciation of %q: an alternative is named word(2) to word(99)", word)
			}
			base = word[:i]
		}
		if base == "" || len(word) > 64 || strings.ContainsFunc(base, func(r rune) bool { return r <= ' ' || r == '(' || r == ')' || r == 0x7f }) {
			return fmt.Errorf("pocketsphinx: pronunciation of %q: not a dictionary word", word)
		}
		ps := strings.Fields(phones)
		if len(ps) == 0 || len(ps) > 32 {
			return fmt.Errorf("pocketsphinx: pronunciation of %q: %d phones, want 1 to 32", word, len(ps))
		}
		for _, ph := range ps {
			if len(ph) > 3 || strings.ContainsFunc(ph, func(r rune) bool { return r < 'A' || r > 'Z' }) {
				return fmt.Errorf("pocketsphinx: pronunciation of %q: %q is not a phone", word, ph)
			}
		}
	}
	return nil
}
