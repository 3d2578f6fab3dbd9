//go:build pocketsphinx && cgo

package pocketsphinx

/*
#cgo pkg-config: pocketsphinx
#include <stdlib.h>
#include <pocketsphinx.h>
#include <sphinxbase/err.h>
#include <sphinxbase/feat.h>
#include <sphinxbase/cmn.h>

// fw_init makes a decoder from command-line style arguments. The decoder
// keeps its own reference to the configuration.
static ps_decoder_t *fw_init(int argc, char **argv) {
	cmd_ln_t *cfg = cmd_ln_parse_r(NULL, ps_args(), argc, argv, FALSE);
	if (cfg == NULL) {
		return NULL;
	}
	ps_decoder_t *ps = ps_init(cfg);
	cmd_ln_free_r(cfg);
	return ps;
}

// fw_quiet turns the library's logging (to stderr by default) off.
static void fw_quiet(void) { err_set_logfp(NULL); }

typedef struct {
	int32 ascr;   // acoustic score of the best path, in the decoder's log base
	int frames;   // frames searched
	double post;  // posterior probability of the best path
} fw_scores;

// fw_score fills s for the hypothesis of the utterance just ended.
static void fw_score(ps_decoder_t *ps, fw_scores *s) {
	logmath_t *lm = ps_get_logmath(ps);
	s->frames = ps_get_n_frames(ps);
	s->post = logmath_exp(lm, ps_get_prob(ps));
	s->ascr = 0;
	for (ps_seg_t *seg = ps_seg_iter(ps); seg != NULL; seg = ps_seg_next(seg)) {
		int32 ascr = 0, lscr = 0, lback = 0;
		ps_seg_prob(seg, &ascr, &lscr, &lback);
		s->ascr += ascr;
	}
}

// fw_mean holds a decoder's cepstral mean.
typedef struct {
	mfcc_t v[64];
	int n;
} fw_mean;

// fw_mean_get copies the decoder's cepstral mean into m.
static void fw_mean_get(ps_decoder_t *ps, fw_mean *m) {
	cmn_t *cmn = ps_get_feat(ps)->cmn_struct;
	m->n = 0;
	if (cmn != NULL && cmn->veclen <= 64) {
		cmn_live_get(cmn, m->v);
		m->n = cmn->veclen;
	}
}

// fw_mean_set makes m the decoder's cepstral mean.
static void fw_mean_set(ps_decoder_t *ps, fw_mean const *m) {
	cmn_t *cmn = ps_get_feat(ps)->cmn_struct;
	if (cmn != NULL && m->n == cmn->veclen) {
		cmn_live_set(cmn, m->v);
	}
}

// fw_known reports whether word is in the decoder's dictionary.
static int fw_known(ps_decoder_t *ps, const char *word) {
	char *p = ps_lookup_word(ps, word);
	if (p == NULL) {
		return 0;
	}
	free(p);
	return 1;
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/stt"
)

const (
	rate         = 16000 // the decoder's sample rate
	chunkSamples = 320   // 20 ms: the unit of decoding and endpointing
	// idleRestart is how long an utterance may go without speech before
	// it is started over (bounding its buffer), keeping the last preroll.
	idleRestart = 2 * time.Second
	preroll     = 300 * time.Millisecond
	// eventBuffer bounds the results waiting for Recv.
	eventBuffer = 32
)

var quiet sync.Once

// Engine is an [stt.Streamer] that recognises US English offline with
// CMU PocketSphinx: each session has its own decoder. It is safe for
// concurrent use; [Engine.SetGrammar] may be called at any time.
type Engine struct {
	opts    Options
	grammar atomic.Pointer[Grammar]

	mu       sync.Mutex
	compiled map[*Grammar]*compiled // restricted grammars by source grammar, at most a few
	status   grammarStatus
}

// compiled is a grammar restricted to the dictionary, as JSGF.
type compiled struct {
	jsgf    string   // "" when nothing of the grammar was left
	grammar *Grammar // the restricted grammar
	missing []string
}

type grammarStatus struct {
	missing []string
	err     error
}

// New returns an engine over the models opts names. It checks that the
// model files exist; the models are loaded per session, by Connect.
func New(opts Options) (*Engine, error) {
	opts.defaults()
	for _, p := range []string{opts.AcousticModel, opts.LanguageModel, opts.Dictionary} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("pocketsphinx: model: %w", err)
		}
	}
	if err := checkPronunciations(opts.Pronunciations); err != nil {
		return nil, err
	}
	quiet.Do(func() { C.fw_quiet() })
	e := &Engine{opts: opts, compiled: make(map[*Grammar]*compiled)}
	if opts.Grammar != nil {
		e.grammar.Store(opts.Grammar)
	}
	return e, nil
}

// Model implements frames.Modeler for the STT metrics.
func (e *Engine) Model() string { return "pocketsphinx-en-us" }

// SetGrammar replaces the grammar of every session, nil to listen with
// the general language model only. Each session applies it at the start
// of its next utterance; the utterance in progress keeps the grammar it
// started with.
func (e *Engine) SetGrammar(g *Grammar) {
	if g != nil && g.empty() {
		g = nil
	}
	e.grammar.Store(g)
}

// Grammar returns the grammar set last, or nil.
func (e *Engine) Grammar() *Grammar { return e.grammar.Load() }

// GrammarStatus returns what a session found when it last applied a
// grammar: the words left out because they are not in the dictionary
// (with the items and phrasings that use them), and the error when
// PocketSphinx could not compile it (the session then used the general
// model alone).
func (e *Engine) GrammarStatus() (missing []string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.status.missing, e.status.err
}

// compile returns g restricted to the dictionary of ps, computed once per
// grammar.
func (e *Engine) compile(g *Grammar, ps *C.ps_decoder_t) *compiled {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.compiled[g]; ok {
		return c
	}
	r, missing := g.restrict(func(w string) bool {
		cw := C.CString(w)
		defer C.free(unsafe.Pointer(cw))
		return C.fw_known(ps, cw) != 0
	}, e.opts.NoSpelling)
	c := &compiled{missing: missing, grammar: r}
	if !r.empty() {
		c.jsgf = r.JSGF()
	}
	if len(e.compiled) >= 4 {
		clear(e.compiled) // old grammars: the current one is compiled again
	}
	e.compiled[g] = c
	return c
}

func (e *Engine) report(missing []string, err error) {
	e.mu.Lock()
	e.status = grammarStatus{missing: missing, err: err}
	e.mu.Unlock()
}

// Connect implements [stt.Streamer]: it opens a [Session].
func (e *Engine) Connect(ctx context.Context, f stt.Format) (stt.Stream, error) {
	s, err := e.Open(ctx, f)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Open loads a decoder and returns a session for audio in format f (any
// rate, resampled to 16 kHz; mono or interleaved channels, mixed down).
// Loading takes a few hundred milliseconds and tens of megabytes.
func (e *Engine) Open(ctx context.Context, f stt.Format) (*Session, error) {
	if f.SampleRate <= 0 || f.Channels <= 0 {
		return nil, permanentError{fmt.Errorf("pocketsphinx: bad audio format %d Hz × %d channels", f.SampleRate, f.Channels)}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Session{
		e:       e,
		in:      f,
		events:  make(chan Result, eventBuffer),
		aborted: make(chan struct{}),
	}
	if f.SampleRate != rate {
		rs, err := dsp.NewResampler(f.SampleRate, rate, 1, dsp.ResamplerOptions{})
		if err != nil {
			return nil, permanentError{fmt.Errorf("pocketsphinx: audio rate %d Hz: %w", f.SampleRate, err)}
		}
		s.rs = rs
	}
	s.ps = e.load()
	if s.ps == nil {
		return nil, permanentError{fmt.Errorf("pocketsphinx: cannot load the models in %s (or a phone of Options.Pronunciations is not the model's)", e.opts.ModelDir)}
	}
	s.lmSearch = C.GoString(C.ps_get_search(s.ps))
	s.lmName = C.CString(s.lmSearch)
	if C.ps_start_stream(s.ps) < 0 {
		s.free()
		return nil, errors.New("pocketsphinx: cannot start the stream")
	}
	s.utt = make([]byte, 0, 2*rate)
	return s, nil
}

// load makes a decoder with the engine's models and settings.
func (e *Engine) load() *C.ps_decoder_t {
	args := append([]string{
		"-hmm", e.opts.AcousticModel, "-lm", e.opts.LanguageModel, "-dict", e.opts.Dictionary,
		"-samprate", "16000", "-dither", "yes",
		// The second passes add hundreds of milliseconds at the end of
		// each utterance for little gain on short commands.
		"-fwdflat", "no", "-bestpath", "no",
	}, e.opts.Args...)
	argv := make([]*C.char, len(args))
	for i, a := range args {
		argv[i] = C.CString(a)
	}
	defer func() {
		for _, p := range argv {
			C.free(unsafe.Pointer(p))
		}
	}()
	// argv holds C pointers only, so C may read it in place.
	ps := C.fw_init(C.int(len(argv)), (**C.char)(unsafe.Pointer(&argv[0])))
	if ps == nil {
		return nil
	}
	n := 0
	for _, word := range slices.Sorted(maps.Keys(e.opts.Pronunciations)) {
		n++
		cw, cp := C.CString(word), C.CString(e.opts.Pronunciations[word])
		// Only the last addition rebuilds the search's tables.
		ok := C.ps_add_word(ps, cw, cp, C.int(boolInt(n == len(e.opts.Pronunciations)))) >= 0
		C.free(unsafe.Pointer(cw))
		C.free(unsafe.Pointer(cp))
		if !ok {
			C.ps_free(ps)
			return nil
		}
	}
	return ps
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (o *Options) defaults() {
	if o.ModelDir == "" {
		o.ModelDir = DefaultModelDir
	}
	o.AcousticModel = under(o.ModelDir, o.AcousticModel, "en-us")
	o.LanguageModel = under(o.ModelDir, o.LanguageModel, "en-us.lm.bin")
	o.Dictionary = under(o.ModelDir, o.Dictionary, "cmudict-en-us.dict")
	if o.MaxPhoneRatio <= 1 {
		o.MaxPhoneRatio = DefaultMaxPhoneRatio
	}
	if o.MaxFit <= 0 {
		o.MaxFit = DefaultMaxFit
	}
	if o.EndSilence == 0 {
		o.EndSilence = DefaultEndSilence
	}
	if o.MaxUtterance <= 0 {
		o.MaxUtterance = DefaultMaxUtterance
	}
	if o.InterimInterval <= 0 {
		o.InterimInterval = DefaultInterimInterval
	}
}

func under(dir, path, def string) string {
	if path == "" {
		path = def
	}
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// permanentError is an error that retrying cannot help: stt.Streaming
// gives up instead of reconnecting.
type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }

// Category implements the stt error classification.
func (permanentError) Category() frames.ErrorCategory { return frames.ErrorPermanent }

// errAborted is what a session returns after Abort.
var errAborted = errors.New("pocketsphinx: session aborted")

// Session is one stream of audio decoded by its own PocketSphinx decoder.
// Its audio methods (SendAudio, Finalize, KeepAlive, Close, Abort) are
// called from one goroutine, which decodes; Recv or Next, which read the
// results, from another.
type Session struct {
	e  *Engine
	in stt.Format

	// mu guards the decoder: Abort frees it, possibly while another
	// goroutine is in SendAudio.
	mu       sync.Mutex
	ps       *C.ps_decoder_t
	lmSearch string
	lmName   *C.char // C copy of lmSearch
	gramName *C.char // name of the grammar search, nil when none is set
	applied  *Grammar
	phrases  *Grammar // the applied grammar restricted, for matching
	active   bool     // the grammar search holds the applied grammar
	// adapted tells that an utterance with speech has ended, so the
	// decoder's cepstral mean has moved from the model's default towards
	// this session's audio (see finish).
	adapted bool

	rs   *dsp.Resampler
	mono []byte
	conv []byte

	// The utterance in progress.
	inUtt       bool
	utt         []byte // its 16 kHz audio, for the grammar's decoding
	fed         int    // bytes of utt fed to the decoder
	speech      bool   // the decoder heard speech in it
	silence     int    // samples since it last heard speech
	sinceHyp    int    // samples since the last interim
	lastInterim string

	closed  bool
	events  chan Result
	aborted chan struct{}
	abortMu sync.Once
}

// SendAudio implements [stt.Stream]: it decodes pcm (16-bit little-endian
// in the session's format) and queues interim results, and the final one
// when the decoder's own endpointing or MaxUtterance ends the utterance.
func (s *Session) SendAudio(ctx context.Context, pcm []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ps == nil {
		return errAborted
	}
	if s.closed {
		return errors.New("pocketsphinx: session closed")
	}
	if s.in.Channels > 1 {
		s.mono = dsp.AppendMono(s.mono[:0], pcm, s.in.Channels)
		pcm = s.mono
	}
	if s.rs != nil {
		s.conv = s.rs.Resample(s.conv[:0], pcm)
		pcm = s.conv
	}
	pcm = pcm[:len(pcm)&^1]
	for len(pcm) > 0 {
		n := min(len(pcm), 2*chunkSamples)
		if err := s.feed(ctx, pcm[:n]); err != nil {
			return err
		}
		pcm = pcm[n:]
	}
	return nil
}

// feed decodes one chunk of 16 kHz audio of at most 20 ms.
func (s *Session) feed(ctx context.Context, pcm []byte) error {
	if !s.inUtt {
		if err := s.startUtt(); err != nil {
			return err
		}
	}
	s.utt = append(s.utt, pcm...)
	if err := s.process(); err != nil {
		return err
	}
	n := len(pcm) / 2
	if C.ps_get_in_speech(s.ps) != 0 {
		s.speech, s.silence = true, 0
	} else if s.speech {
		s.silence += n
	}
	if !s.speech {
		if time.Duration(len(s.utt)/2)*time.Second/rate >= idleRestart {
			return s.restartIdle()
		}
		return nil
	}
	s.sinceHyp += n
	if time.Duration(s.sinceHyp)*time.Second/rate >= s.e.opts.InterimInterval {
		s.sinceHyp = 0
		s.interim()
	}
	o := s.e.opts
	if (o.EndSilence > 0 && time.Duration(s.silence)*time.Second/rate >= o.EndSilence) ||
		time.Duration(len(s.utt)/2)*time.Second/rate >= o.MaxUtterance {
		return s.finish(ctx, false)
	}
	return nil
}

// process feeds the decoder the utterance's audio it has not seen.
func (s *Session) process() error {
	b := s.utt[s.fed:]
	if len(b) < 2 {
		return nil
	}
	if C.ps_process_raw(s.ps, (*C.int16)(unsafe.Pointer(&b[0])), C.size_t(len(b)/2), 0, 0) < 0 {
		return errors.New("pocketsphinx: decoding failed")
	}
	s.fed += len(b) &^ 1
	return nil
}

// startUtt starts an utterance with the general model, applying the
// engine's grammar first when it changed.
func (s *Session) startUtt() error {
	if g := s.e.grammar.Load(); g != s.applied {
		s.apply(g)
	}
	if C.ps_start_utt(s.ps) < 0 {
		return errors.New("pocketsphinx: cannot start an utterance")
	}
	s.inUtt, s.speech, s.silence, s.sinceHyp, s.lastInterim = true, false, 0, 0, ""
	s.utt, s.fed = s.utt[:0], 0
	return nil
}

// apply makes g the grammar of the session's next utterances. The general
// model's search is the active one between utterances, so replacing the
// grammar's search is safe. Searches alternate between two names, so the
// old one is gone only once the new one is in.
func (s *Session) apply(g *Grammar) {
	s.applied, s.active = g, false
	if g == nil {
		s.e.report(nil, nil)
		return
	}
	c := s.e.compile(g, s.ps)
	if c.jsgf == "" {
		s.e.report(c.missing, errors.New("pocketsphinx: no phrase of the grammar is in the dictionary"))
		return
	}
	name := "grammar0"
	if s.gramName != nil && C.GoString(s.gramName) == name {
		name = "grammar1"
	}
	cname := C.CString(name)
	src := C.CString(c.jsgf)
	defer C.free(unsafe.Pointer(src))
	if C.ps_set_jsgf_string(s.ps, cname, src) < 0 {
		C.free(unsafe.Pointer(cname))
		s.e.report(c.missing, errors.New("pocketsphinx: PocketSphinx cannot compile the grammar"))
		return
	}
	if s.gramName != nil {
		C.ps_unset_search(s.ps, s.gramName)
		C.free(unsafe.Pointer(s.gramName))
	}
	s.gramName, s.active, s.phrases = cname, true, c.grammar
	s.e.report(c.missing, nil)
}

// restartIdle starts the utterance over when it has gone on without
// speech, keeping its last preroll of audio, so its buffer stays small.
func (s *Session) restartIdle() error {
	C.ps_end_utt(s.ps)
	s.inUtt = false
	keep := 2 * int(int64(rate)*int64(preroll)/int64(time.Second))
	tail := s.utt[len(s.utt)-keep:]
	copy(s.utt[:keep], tail)
	keepBuf := s.utt[:keep]
	if err := s.startUtt(); err != nil {
		return err
	}
	s.utt = keepBuf
	return s.process()
}

// interim queues the hypothesis so far when it changed; it is dropped
// when the reader is behind.
func (s *Session) interim() {
	h := C.ps_get_hyp(s.ps, nil)
	if h == nil {
		return
	}
	text := C.GoString(h)
	if text == "" || text == s.lastInterim {
		return
	}
	s.lastInterim = text
	select {
	case s.events <- Result{Text: text}:
	default:
	}
}

// hypothesis returns the text and scores of the utterance just ended.
func (s *Session) hypothesis() (string, C.fw_scores) {
	var sc C.fw_scores
	h := C.ps_get_hyp(s.ps, nil)
	if h == nil {
		return "", sc
	}
	text := C.GoString(h)
	if text != "" {
		C.fw_score(s.ps, &sc)
	}
	return text, sc
}

// finish ends the utterance, decodes it with the grammar too, and queues
// the final result.
func (s *Session) finish(ctx context.Context, finalized bool) error {
	start := time.Now()
	if C.ps_end_utt(s.ps) < 0 {
		return errors.New("pocketsphinx: cannot end the utterance")
	}
	s.inUtt = false
	lmText, lmScores := s.hypothesis()
	r := Result{Final: true, Finalized: finalized, Model: lmText, Audio: time.Duration(len(s.utt)/2) * time.Second / rate}
	var gScores C.fw_scores
	grammar := s.active && s.speech
	var mean C.fw_mean // the cepstral mean the grammar's pass decodes with
	if grammar {
		C.fw_mean_get(s.ps, &mean)
		var err error
		if r.Grammar, gScores, err = s.decodeAgain(s.gramName); err != nil {
			return err
		}
	}
	lmPhones, gPhones := 0, 0
	if grammar {
		lmPhones, gPhones = s.phones(r.Model), s.phones(r.Grammar)
	}
	o := &s.e.opts
	decide(&r, grammar, lmScores, lmScores, gScores, lmPhones, gPhones, o)
	if grammar && !s.adapted && r.Source == SourceModel && r.Fit > o.MaxFit &&
		r.PhoneRatio >= minPhoneRatio && r.PhoneRatio <= o.MaxPhoneRatio {
		// The live pass of a session's first utterance was normalised
		// with the model's default cepstral mean, which suits few
		// channels; ending it moved the mean towards this audio, and the
		// grammar's pass used the moved one. Before the grammar's phrase
		// is rejected for its fit, the general model decodes the
		// utterance again with that mean, so that the costs compare under
		// one normalisation. Its live text stays the transcript and the
		// phone ratio's measure. This costs a decode of the utterance,
		// once per session at most.
		C.fw_mean_set(s.ps, &mean)
		_, ref, err := s.decodeAgain(s.lmName)
		if err != nil {
			return err
		}
		decide(&r, grammar, lmScores, ref, gScores, lmPhones, gPhones, o)
	}
	if s.speech {
		s.adapted = true
	}
	r.Decode = time.Since(start)
	s.utt, s.fed = s.utt[:0], 0
	if fn := s.e.opts.OnResult; fn != nil {
		fn(r)
	}
	return s.queue(ctx, r)
}

// phones counts the phones of text's words in the dictionary.
func (s *Session) phones(text string) int {
	n := 0
	for _, w := range strings.Fields(text) {
		cw := C.CString(w)
		p := C.ps_lookup_word(s.ps, cw)
		C.free(unsafe.Pointer(cw))
		if p != nil {
			n += len(strings.Fields(C.GoString(p)))
			C.free(unsafe.Pointer(p))
		}
	}
	return n
}

// decodeAgain decodes the utterance's audio again with the search named
// name and returns its hypothesis; the general model's search is the
// active one again afterwards.
func (s *Session) decodeAgain(name *C.char) (string, C.fw_scores, error) {
	var none C.fw_scores
	if name != s.lmName {
		if C.ps_set_search(s.ps, name) < 0 {
			return "", none, errors.New("pocketsphinx: cannot switch to the grammar")
		}
		defer C.ps_set_search(s.ps, s.lmName)
	}
	if C.ps_start_utt(s.ps) < 0 {
		return "", none, errors.New("pocketsphinx: cannot start an utterance")
	}
	b := s.utt
	for len(b) >= 2 {
		n := min(len(b)&^1, 2*4096)
		C.ps_process_raw(s.ps, (*C.int16)(unsafe.Pointer(&b[0])), C.size_t(n/2), 0, 0)
		b = b[n:]
	}
	if C.ps_end_utt(s.ps) < 0 {
		return "", none, errors.New("pocketsphinx: cannot end the utterance")
	}
	text, sc := s.hypothesis()
	return text, sc, nil
}

// decide picks the result of an utterance and its confidence; see the
// package documentation for the rule. lm scores the general model's
// text, ref is what the grammar's scores g are measured against (lm, or
// the general model decoded again, see finish); lmPhones and gPhones are
// the phone counts of the two hypotheses; costs are the best paths'
// acoustic scores per frame, negated (PocketSphinx normalises each frame's scores to its
// best senone, so a path that fits the audio well costs little).
func decide(r *Result, grammar bool, lm, ref, g C.fw_scores, lmPhones, gPhones int, o *Options) {
	lmCost := cost(lm)
	r.Source, r.Text = SourceModel, r.Model
	modelConf := 0.5 * clamp01(float64(lm.post)) * clamp01(1-lmCost/fullCost)
	if r.Model == "" {
		modelConf = 0
	}
	if !grammar {
		r.Confidence = modelConf
		return
	}
	if refCost := cost(ref); r.Grammar != "" && r.Model != "" && gPhones > 0 && refCost > 0 {
		r.Fit = cost(g) / refCost
		r.PhoneRatio = float64(lmPhones) / float64(gPhones)
		if r.PhoneRatio <= o.MaxPhoneRatio && r.PhoneRatio >= minPhoneRatio && r.Fit <= o.MaxFit {
			// Confidence falls as either measure nears its bound.
			lr := math.Log(r.PhoneRatio) / math.Log(o.MaxPhoneRatio)
			if r.PhoneRatio < 1 {
				lr = math.Log(r.PhoneRatio) / math.Log(minPhoneRatio)
			}
			r.Source, r.Text = SourceGrammar, r.Grammar
			r.Confidence = 0.51 + 0.49*clamp01(min(1-lr, 1-r.Fit/o.MaxFit))
			return
		}
	}
	r.Confidence = 0.5 * modelConf // at most 0.25: outside the grammar
}

// minPhoneRatio is the smallest PhoneRatio at which the grammar's result
// stands: the general model often hears fewer sounds than were said, so
// a phrase longer than what it heard is weak evidence against the phrase.
const minPhoneRatio = 0.5

// fullCost is the cost per frame at which the general model's confidence
// reaches 0: worse than any speech measured.
const fullCost = 100

// cost returns the acoustic cost per frame of a best path.
func cost(s C.fw_scores) float64 {
	if s.frames <= 0 {
		return 0
	}
	return -float64(s.ascr) / float64(s.frames)
}

func clamp01(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return max(0, min(1, v))
}

// queue hands r to the reader, waiting when it is behind.
func (s *Session) queue(ctx context.Context, r Result) error {
	select {
	case s.events <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.aborted:
		return errAborted
	}
}

// Finalize implements [stt.Stream]: the user stopped speaking, so the
// utterance ends and its final result (Finalized) is queued; an empty one
// when there was no utterance.
func (s *Session) Finalize(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ps == nil {
		return errAborted
	}
	if s.closed {
		return errors.New("pocketsphinx: session closed")
	}
	if !s.inUtt || !s.speech {
		if s.inUtt {
			C.ps_end_utt(s.ps)
			s.inUtt = false
		}
		return s.queue(ctx, Result{Final: true, Finalized: true})
	}
	return s.finish(ctx, true)
}

// KeepAlive implements [stt.Stream]; a local session needs none.
func (s *Session) KeepAlive(context.Context) error { return nil }

// Close implements [stt.Stream]: it queues the final result of the
// utterance in progress, then Recv returns io.EOF. The decoder is freed
// by Abort, which stt.Streaming calls when the session ends.
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ps == nil {
		return errAborted
	}
	if s.closed {
		return nil
	}
	var err error
	if s.inUtt && s.speech {
		err = s.finish(ctx, true)
	} else if s.inUtt {
		C.ps_end_utt(s.ps)
		s.inUtt = false
	}
	s.closed = true
	close(s.events)
	return err
}

// Abort implements [stt.Stream]: it frees the decoder at once; Recv
// returns an error. It is safe to call more than once, and from any
// goroutine.
func (s *Session) Abort() error {
	s.abortMu.Do(func() { close(s.aborted) })
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free()
	return nil
}

// free releases the decoder and its searches' names.
func (s *Session) free() {
	if s.ps == nil {
		return
	}
	C.ps_free(s.ps)
	s.ps = nil
	C.free(unsafe.Pointer(s.lmName))
	if s.gramName != nil {
		C.free(unsafe.Pointer(s.gramName))
	}
	s.lmName, s.gramName = nil, nil
	s.utt = nil
}

// Next returns the next result: interim ones as the decoder goes, a final
// one per utterance. It returns io.EOF after Close, an error after Abort.
func (s *Session) Next(ctx context.Context) (Result, error) {
	select {
	case r, ok := <-s.events:
		if !ok {
			return Result{}, io.EOF
		}
		return r, nil
	case <-s.aborted:
		return Result{}, errAborted
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

// Recv implements [stt.Stream]: [Session.Next] as an stt event. A final
// result's text is the chosen search's and its confidence the result's
// (above 0.5 from the grammar, at most 0.5 from the general model); the
// rest of the [Result] is only on Next's results and Options.OnResult.
func (s *Session) Recv(ctx context.Context) (stt.Event, error) {
	r, err := s.Next(ctx)
	if err != nil {
		return stt.Event{}, err
	}
	ev := stt.Event{Kind: stt.EventInterim, Text: r.Text, Language: "en-US"}
	if r.Final {
		ev.Kind, ev.Finalized, ev.Confidence = stt.EventFinal, r.Finalized, r.Confidence
	}
	return ev, nil
}
