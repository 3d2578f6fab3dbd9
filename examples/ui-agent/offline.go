package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
	"github.com/framewire/framewire/processors/stt"
	"github.com/framewire/framewire/processors/stt/pocketsphinx"
)

// The offline speech-to-text of the demo (docs/decisions/demo-offline-voice.md):
// PocketSphinx listens first for what the page shows, in the phrasings the
// demo brain understands, and falls back to its general model outside
// them. Per session:
//
//	pageGrammar → VAD → stt.Streaming(pageSTT{PocketSphinx}) → turn tracker
//
// pageGrammar rebuilds the grammar from each new snapshot; pageSTT writes
// the recognised words back in the page's forms ("iphone seventeen" →
// "iPhone 17") as the transcript is made, so the user and the brain see
// the same text. The two share the page's vocabulary through an atomic
// pointer.

// demoPhrasings are what a user says around the page's items, after the
// intents of the demo brain (demobrain/intents.go): pointing, the cart,
// research, deixis, the form and a few others. pocketsphinx.Slot stands
// for an item. There is no bare "{item}": with it every short command
// ("explain this") competes with every name on the page, and loses to
// some.
var demoPhrasings = []string{
	// Pointing.
	"where is the {item}", "where's the {item}", "where is {item}", "show me the {item}", "find the {item}",
	"scroll to the {item}", "scroll to {item}", "highlight the {item}", "which phones are from {item}",
	"show me the phones from {item}", "click {item}", "click the {item} button",
	"which is the cheapest phone", "what is the most expensive phone", "what's the phone at the top right",
	"what's the phone at the top left", "which phones can i see", "scroll back to the top", "scroll to the top",
	"what is the cheapest phone", "which one is the cheapest", "which one is the most expensive",
	"tell me about the first phone", "tell me about the second phone", "tell me about the third phone",
	"tell me about the last phone",
	// The cart and research.
	"add the {item} to my cart", "add {item} to my cart", "remove the {item} from my cart",
	"compare prices for the {item}", "research the {item}",
	// Deixis and the essay.
	"explain this", "explain this paragraph", "explain that", "what does this mean", "summarize this",
	"what is this article about", "where does it talk about {item}",
	// The form (names: demoNames).
	"what have i entered", "read the form back to me", "submit", "submit the application", "clear the form",
	// The rest.
	"help", "what can you do", "hello", "thank you", "goodbye",
}

// demoNames are the names the form phrasings offer: a grammar cannot hold
// every name, so these are the demo's examples, and other names go to the
// general model (which hears names poorly).
var demoNames = []string{"Ada Lovelace", "Grace Hopper", "Alan Turing", "Katherine Johnson", "Margaret Hamilton"}

// formPhrasings returns the fixed phrases of the form around demoNames.
func formPhrasings() []string {
	var out []string
	for _, n := range demoNames {
		first := strings.ToLower(strings.Fields(n)[0])
		out = append(out, "my name is "+n, "my first name is "+strings.Fields(n)[0],
			"my email is "+first+" at example dot com", "fill in my name "+n)
	}
	return out
}

// phrasings are demoPhrasings and formPhrasings, built once.
var phrasings = append(slices.Clone(demoPhrasings), formPhrasings()...)

// Bounds of what a snapshot gives the grammar: the names a user may say,
// not the page's prose.
const (
	maxItemBytes  = 60  // longer names are prose, not names
	maxItemWords  = 8   // the same, in words
	maxPageItems  = 400 // items taken from one snapshot
	maxPageNodes  = 20000
	maxPageDepth  = 64
	slowRebuildAt = 20 * time.Millisecond // logged when a rebuild takes longer
)

// itemRoles are the roles whose names are items: what a user names to
// point at, click or fill.
var itemRoles = map[string]bool{
	"listitem": true, "heading": true, "button": true, "link": true, "textbox": true, "searchbox": true,
	"combobox": true, "checkbox": true, "radio": true, "switch": true, "tab": true, "menuitem": true, "option": true,
}

// properRoles are the roles whose names are proper names (products), so
// the transcript takes their page spelling even when it differs only in
// case ("pixel ten" → "Pixel 10", "galaxy" stays lower case in "which
// galaxy" only when no product is named Galaxy).
var properRoles = map[string]bool{"listitem": true}

// pageItem is one name the page shows.
type pageItem struct {
	text   string
	proper bool // a product or a brand: the transcript takes its spelling
}

// pageItems returns the names in the snapshot a user may say: the names
// of list items (product cards), headings, buttons, links and form
// controls, and the brand of each card (its description up to "·"),
// sorted, without duplicates, bounded.
func pageItems(s *wire.Snapshot) []pageItem {
	var (
		out   []pageItem
		nodes int
	)
	add := func(text string, proper bool) {
		text = strings.Join(strings.Fields(text), " ")
		if text == "" || len(text) > maxItemBytes || len(out) >= maxPageItems {
			return
		}
		if n := len(pocketsphinx.Words(text)); n == 0 || n > maxItemWords {
			return
		}
		out = append(out, pageItem{text: text, proper: proper})
	}
	var walk func(n *wire.Node, depth int, card bool)
	walk = func(n *wire.Node, depth int, card bool) {
		nodes++
		if nodes > maxPageNodes || depth > maxPageDepth {
			return
		}
		if itemRoles[n.Role] {
			add(n.Name, properRoles[n.Role])
		}
		if card && n.Role == "paragraph" {
			if brand, _, ok := strings.Cut(n.Name, "·"); ok {
				add(brand, true)
			}
		}
		for i := range n.Children {
			walk(&n.Children[i], depth+1, card || n.Role == "listitem")
		}
	}
	walk(&s.Root, 0, false)
	slices.SortFunc(out, func(a, b pageItem) int {
		if c := strings.Compare(a.text, b.text); c != 0 {
			return c
		}
		if a.proper == b.proper {
			return 0
		}
		if a.proper {
			return -1
		}
		return 1
	})
	return slices.CompactFunc(out, func(a, b pageItem) bool { return a.text == b.text })
}

// itemTexts returns the texts of items, for pocketsphinx.NewGrammar.
func itemTexts(items []pageItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.text
	}
	return out
}

// spokenForm is a text of the page as the recogniser writes it.
type spokenForm struct {
	words []string // pocketsphinx.Words of text
	text  string
}

// vocabulary maps what the recogniser writes back to the page's texts.
// It is immutable once built.
type vocabulary struct {
	forms []spokenForm // longest first
}

// newVocabulary builds the vocabulary of the page's items and the demo's
// names. An item whose spoken form is its text in lower case is left out
// unless it is a proper name: "phones" stays as said.
func newVocabulary(items []pageItem) *vocabulary {
	v := &vocabulary{}
	seen := make(map[string]bool)
	addForm := func(text string, proper bool) {
		w := pocketsphinx.Words(text)
		key := strings.Join(w, " ")
		if len(w) == 0 || seen[key] || (!proper && key == strings.ToLower(text)) || key == text {
			return
		}
		seen[key] = true
		v.forms = append(v.forms, spokenForm{words: w, text: text})
	}
	for _, it := range items {
		addForm(it.text, it.proper)
	}
	for _, n := range demoNames {
		addForm(n, true)
	}
	slices.SortStableFunc(v.forms, func(a, b spokenForm) int { return len(b.words) - len(a.words) })
	return v
}

// rewrite returns text with every run of words that is a page text's
// spoken form replaced by the page text, longest first: "where is the
// iphone seventeen" → "where is the iPhone 17". A word the recogniser
// spelled out letter by letter ("u s b", as the grammar spells words it
// cannot say) matches the word.
func (v *vocabulary) rewrite(text string) string {
	if v == nil || len(v.forms) == 0 || text == "" {
		return text
	}
	heard := strings.Fields(text)
	out := make([]string, 0, len(heard))
	changed := false
	for i := 0; i < len(heard); {
		n, form := 0, ""
		for _, f := range v.forms {
			if m := matchWords(f.words, heard[i:]); m > 0 {
				n, form = m, f.text
				break
			}
		}
		if n == 0 {
			out = append(out, heard[i])
			i++
			continue
		}
		out = append(out, form)
		i += n
		changed = true
	}
	if !changed {
		return text
	}
	return strings.Join(out, " ")
}

// matchWords reports how many of heard's first words say words (0 when
// they do not): each word as itself, or spelled out as single letters.
func matchWords(words, heard []string) int {
	j := 0
	for _, w := range words {
		if j < len(heard) && heard[j] == w {
			j++
			continue
		}
		k := 0
		for k < len(w) && j+k < len(heard) && len(heard[j+k]) == 1 && heard[j+k][0] == w[k] {
			k++
		}
		if k != len(w) || k < 2 {
			return 0
		}
		j += k
	}
	return j
}

// pageGrammar is the processor before the VAD and the STT that turns each
// new snapshot of the page into the recogniser's grammar: it rebuilds the
// grammar when the page's items change (not on every scroll) and hands
// it, and the vocabulary that maps the recognised words back to the
// page's forms, to the session's engine. Its state is its own node's.
type pageGrammar struct {
	eng      *pocketsphinx.Engine
	vocab    *atomic.Pointer[vocabulary]
	items    []pageItem // the items of the grammar in use
	rebuilds int        // grammars built, for the tests
}

// Name implements pipeline.Namer.
func (p *pageGrammar) Name() string { return "PageGrammar" }

// ProcessFrame implements pipeline.Processor: snapshots going downstream
// rebuild the grammar; every frame passes on.
func (p *pageGrammar) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	snap, ok := f.(*rtvi.UISnapshotFrame)
	if !ok || dir != frames.Downstream || snap.Tree == nil {
		return nil
	}
	items := pageItems(snap.Tree)
	if slices.Equal(items, p.items) {
		return nil
	}
	start := time.Now()
	g, err := pocketsphinx.NewGrammar(phrasings, itemTexts(items))
	if err != nil {
		h.Logger().Warn("the page gives no grammar: listening with the general model", zap.Error(err))
		return nil
	}
	p.items = items
	p.rebuilds++
	p.vocab.Store(newVocabulary(items))
	p.eng.SetGrammar(g)
	if took := time.Since(start); took > slowRebuildAt {
		h.Logger().Info("rebuilding the grammar was slow", zap.Duration("took", took), zap.Int("items", len(items)))
	}
	h.Logger().Debug("grammar rebuilt from the page", zap.Int("items", len(items)), zap.Int("dropped", g.Dropped()),
		zap.Duration("took", time.Since(start)))
	return nil
}

// pageSTT is the session's PocketSphinx engine as an stt.Streamer whose
// transcripts are in the page's forms.
type pageSTT struct {
	eng   *pocketsphinx.Engine
	vocab *atomic.Pointer[vocabulary]
}

// Model implements frames.Modeler for the STT metrics.
func (p pageSTT) Model() string { return p.eng.Model() }

// Connect implements stt.Streamer.
func (p pageSTT) Connect(ctx context.Context, f stt.Format) (stt.Stream, error) {
	s, err := p.eng.Connect(ctx, f)
	if err != nil {
		return nil, err
	}
	return &pageStream{Stream: s, vocab: p.vocab}, nil
}

// pageStream rewrites a session's transcripts in the page's forms.
type pageStream struct {
	stt.Stream
	vocab *atomic.Pointer[vocabulary]
}

// Recv implements stt.Stream.
func (s *pageStream) Recv(ctx context.Context) (stt.Event, error) {
	ev, err := s.Stream.Recv(ctx)
	if err == nil && (ev.Kind == stt.EventInterim || ev.Kind == stt.EventFinal) {
		ev.Text = s.vocab.Load().rewrite(ev.Text)
	}
	return ev, err
}

// offlineOptions are the demo's PocketSphinx settings, measured on the
// phrases of the browser test (TestOfflineRecognitionOfTheDemoPhrases and
// docs/decisions/demo-offline-voice.md):
//   - no spelling: names the dictionary lacks ("OPPO") are left out, not
//     spelled "o p p o", a string of short sounds that drew in speech
//     outside the grammar ("tell me a joke about cats" → "add the OPPO to
//     my cart");
//   - wider beams, so that the grammar finds a path through short
//     phrases said unlike the dictionary ("explain this" in espeak-ng's
//     en-us voice found none at the default -beam 1e-48);
//   - MaxFit 1.3 instead of 1.1: what comes through a browser's audio
//     processing and Opus fits the grammar worse than the synthesizer's
//     own audio. The margin against outside speech is thin ("tell me a
//     joke about cats" fits a phrasing at 1.22 to 1.30): tune it on real
//     speech;
//   - extraPronunciations.
func offlineOptions() pocketsphinx.Options {
	return pocketsphinx.Options{NoSpelling: true, MaxFit: 1.3, Args: []string{"-beam", "1e-80", "-wbeam", "1e-60"},
		Pronunciations: extraPronunciations}
}

// extraPronunciations are ways of saying the demo's words that the Debian
// dictionary lacks: it has "explain" only as IH K S P L EY N, and many
// speakers (espeak-ng among them) say EH K S P L EY N.
var extraPronunciations = map[string]string{"explain(2)": "EH K S P L EY N"}

// checkOfflineSTT loads a decoder once, at start-up: it checks that the
// models load (not only that their files exist), and it reads them into
// the page cache, so the first session's decoder loads in well under a
// second instead of seconds, while its user's audio waits.
func checkOfflineSTT(ctx context.Context) error {
	eng, err := pocketsphinx.New(offlineOptions())
	if err != nil {
		return err
	}
	s, err := eng.Connect(ctx, stt.Format{SampleRate: 16000, Channels: 1})
	if err != nil {
		return fmt.Errorf("its models do not load: %w", err)
	}
	return s.Abort()
}

// offlineSTT is the speech input of the offline voice: one engine per
// session (its decoder loads when the session's STT connects), the
// grammar processor before the VAD, the STT after it.
func offlineSTT(vad pipeline.Processor) ([]pipeline.Processor, error) {
	heard := &heardLog{}
	o := offlineOptions()
	o.OnResult = func(r pocketsphinx.Result) { heard.last.Store(&r) }
	eng, err := pocketsphinx.New(o)
	if err != nil {
		return nil, err
	}
	vocab := new(atomic.Pointer[vocabulary])
	return []pipeline.Processor{
		&pageGrammar{eng: eng, vocab: vocab},
		vad,
		stt.NewStreaming(pageSTT{eng: eng, vocab: vocab}, stt.StreamingOptions{}),
		heard,
	}, nil
}

// heardLog is the processor after the STT that logs each transcript with
// what the recogniser made of it: which search (the page's grammar or the
// general model), its confidence, and both hypotheses. The confidence does
// not reach the page (RTVI has no field for it), so this is where the
// fallback to the general model shows.
type heardLog struct {
	last atomic.Pointer[pocketsphinx.Result] // the engine's last final result (its audio goroutine stores it)
}

// Name implements pipeline.Namer.
func (p *heardLog) Name() string { return "OfflineSTTLog" }

// ProcessFrame implements pipeline.Processor: it logs transcriptions and
// passes every frame on.
func (p *heardLog) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	t, ok := f.(*frames.Transcription)
	if !ok || dir != frames.Downstream {
		return nil
	}
	fields := []zap.Field{zap.String("text", t.Text), zap.Float64("confidence", t.Confidence)}
	if r := p.last.Load(); r != nil {
		fields = append(fields, zap.Stringer("source", r.Source), zap.String("grammar", r.Grammar), zap.String("model", r.Model),
			zap.Float64("phone_ratio", r.PhoneRatio), zap.Float64("fit", r.Fit), zap.Duration("audio", r.Audio), zap.Duration("decode", r.Decode))
	}
	h.Logger().Info("heard", fields...)
	return nil
}
