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
// seconds to load (stt.Streaming holds the audio meanwhile). Audio of any rate is resampled to 16 kHz and decoded in
// 20 ms steps as it arrives; every [Options.InterimInterval] of speech the
// hypothesis so far is an interim result. An utterance ends at Finalize,
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
// on the utterance's audio (on the 2-CPU test machine, busy, the final
// result came 195 ms after the end of the utterance with the grammar, 74
// ms without).
// The rule that picks the final text:
//
//   - No grammar, or the grammar found no path through the audio: the
//     general model's text.
//   - Otherwise two measures compare the grammar's phrase with what the
//     general model heard. PhoneRatio is the phones of the model's words
//     over the phones of the phrase: the general model gets the words of
//     out-of-vocabulary-for-it speech wrong but their number of sounds
//     about right, so speech in the grammar gives a ratio near 1 (0.8 to
//     1.38 on espeak-ng speech) and speech outside it, forced onto the
//     nearest (shorter) phrase, a ratio well above 1 (1.43 to 2.9). Fit is
//     the grammar's acoustic cost per frame over the general model's (0.3
//     to 1.04 for speech in the grammar). The live pass of a session's
//     first utterance is normalised with the model's default cepstral
//     mean, the grammar's pass with one adapted to the utterance; before
//     the phrase of a first utterance is rejected for its fit, the general
//     model decodes it again with the grammar's mean and the fit is
//     measured against that (a decode more, about half a second per second of
//     audio on the demo's beams). The phrase stands when
//     PhoneRatio is between 0.5 and [Options.MaxPhoneRatio] (1.4) and Fit
//     is at most [Options.MaxFit] (1.1), with a confidence from 1 down to
//     0.51 as either measure nears its bound. (The general model often
//     hears fewer sounds than were said, hence the wide lower bound.)
//   - Otherwise the general model's text, with a confidence of at most
//     0.25.
//
// The bounds were set on the 20 demo phrases and 6 phrases outside the
// grammar, in two espeak-ng voices (en-us, en-gb; the test
// TestRecognitionFigures): with the grammar 39 of the 40 demo utterances
// came out exactly (the 40th found no path through the grammar and fell
// back), without it 2 of 40 (word accuracy 0.24); all 12 utterances
// outside the grammar fell back to the general model. The bounds were
// tuned on those same utterances and the gap between the two phone
// ratios is narrow: tune them on real speech.
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
// default: they added 100 to 800 ms after each utterance for little gain
// on short commands.
package pocketsphinx
