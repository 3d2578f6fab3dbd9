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
// Each session has its own decoder (loading it takes about a second and
// some 40 MB). Audio of any rate is resampled to 16 kHz and decoded in
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
// on the utterance's audio (a few milliseconds: its graph is small). The
// rule that picks the final text:
//
//   - No grammar, or the grammar found no path through the audio: the
//     general model's text.
//   - Otherwise Fit = the grammar's acoustic cost per frame / the general
//     model's. Speech in the grammar fits it far better than whatever the
//     general model makes of it (Fit about 0.3 to 0.75 on espeak-ng
//     speech); speech outside it fits the grammar's nearest phrase worse
//     (about 0.95 to 1.2). Fit ≤ [Options.MaxFit] (0.85) takes the
//     grammar's phrase, with a confidence from 1 (Fit 0) down to 0.51.
//   - Above it, the general model's text with a confidence of at most
//     0.25.
//
// So a transcript's confidence says where it came from: above 0.5 a phrase
// of the grammar; at most 0.5 the general model (at most 0.25 when the
// grammar was rejected). The general model's confidence is rough: its
// acoustic fit, times the posterior probability when "-bestpath yes" is
// set through [Options.Args]. stt events carry no confidence, so
// [Options.OnResult] and [Session.Next] give the whole [Result].
//
// The second passes of PocketSphinx (-fwdflat, -bestpath) are off by
// default: they added 100 to 800 ms after each utterance for little gain
// on short commands.
package pocketsphinx
