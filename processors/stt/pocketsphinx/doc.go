// Package pocketsphinx is an offline speech-to-text engine for framewire:
// an [stt.Streamer] on CMU PocketSphinx, through cgo, so a voice agent
// listens with nothing to configure and no network. Use it with
// stt.Streaming, after the VAD processor:
//
//	eng, err := pocketsphinx.New(pocketsphinx.Options{})
//	...
//	proc := stt.NewStreaming(eng, stt.StreamingOptions{})
//	eng.SetGrammar(g) // at any time, from any goroutine
//
// The engine needs the build tag pocketsphinx, cgo, and Debian's
// libpocketsphinx-dev (the 5prealpha library, with sphinxbase) and
// pocketsphinx-en-us (the US English models, read from [DefaultModelDir]
// unless [Options] name others). Built without them, [New] returns
// [ErrUnavailable] and the rest of the package, the grammar builder,
// still works.
//
// # Streaming and utterances
//
// Each session has its own decoder: some 60 MB, and one to two and a half
// seconds to load (stt.Streaming holds the audio meanwhile). Audio of any
// rate is resampled to 16 kHz and decoded in 20 ms steps as it arrives;
// every [Options.InterimInterval] of speech the hypothesis so far is an
// interim result. An utterance ends at Finalize,
// which stt.Streaming sends when the pipeline's VAD says the user stopped
// speaking; the decoder's own voice activity detection ends it too after
// [Options.EndSilence] of silence, for pipelines without a VAD, and
// [Options.MaxUtterance] bounds it. Stretches without speech are started
// over every two seconds, so the audio kept per utterance stays small.
//
// # Grammar and fallback
//
// A [Grammar] ([NewGrammar] from phrasings and the items a page shows, or
// [ParseJSGF]) is what the engine listens for first. [Engine.SetGrammar]
// hands it to every session through an atomic pointer; a session applies
// it when its next utterance starts. Items and phrasings with words that
// are not in the dictionary are left out (short ones are spelled out
// letter by letter when the letters are words), see [Engine.GrammarStatus].
//
// Both searches decode every utterance: the general language model live
// (its hypotheses are the interim results), then, at the end, the grammar
// on the utterance's audio. The rule that picks the final text:
//
//   - No grammar, or the grammar found no path through the audio: the
//     general model's text.
//   - Otherwise two measures compare the grammar's phrase with what the
//     general model heard. PhoneRatio is the phones of the model's words
//     over the phones of the phrase: the general model gets the words of
//     out-of-vocabulary-for-it speech wrong but their number of sounds
//     about right, so speech in the grammar gives a ratio near 1 and
//     speech outside it, forced onto the nearest (shorter) phrase, a
//     ratio well above 1. Fit is the grammar's acoustic cost per frame
//     over the general model's. The live pass of a session's
//     first utterance is normalised with the model's default cepstral
//     mean, the grammar's pass with one adapted to the utterance; before
//     the phrase of a first utterance is rejected for its fit, the general
//     model decodes it again with the grammar's mean and the fit is
//     measured against that (one decode more). The phrase stands when
//     PhoneRatio is between 0.5 and [Options.MaxPhoneRatio] (1.4) and Fit
//     is at most [Options.MaxFit] (1.1), with a confidence from 1 down to
//     0.51 as either measure nears its bound. (The general model often
//     hears fewer sounds than were said, hence the wide lower bound.)
//   - Otherwise the general model's text, with a confidence of at most
//     0.25.
//
// The default bounds were tuned on synthesized speech (espeak-ng) of the
// demo's phrases, and nothing in CI measures how well they recognize:
// tune them on real speech. What they gave, and the opt-in tests that
// measure it, are in docs/decisions/demo-offline-voice.md.
//
// So a transcript's confidence says where it came from: above 0.5 a phrase
// of the grammar; at most 0.5 the general model (at most 0.25 when the
// grammar was rejected). The general model's confidence is rough: its
// acoustic fit, times the posterior probability when "-bestpath yes" is
// set through [Options.Args]. A final stt event carries the confidence
// (and so frames.Transcription.Confidence); [Options.OnResult] and
// [Session.Next] give the whole [Result].
//
// The second passes of PocketSphinx (-fwdflat, -bestpath) are off by
// default: they delay each final result for little gain on short
// commands.
package pocketsphinx
