package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/examples/ui-agent/demobrain"
	"github.com/framewire/framewire/processors/uiagent"
)

// intentPhrases are 20 things users say to the demo, with the page they
// say them on (demobrain/testdata).
var intentPhrases = []struct{ page, said string }{
	{"top", "Where is the iPhone 17?"},
	{"top", "Where is the Pixel 10?"},
	{"top", "Show me the iPhone 17 Pro."},
	{"top", "Which phones are from Google?"},
	{"top", "What is the cheapest phone?"},
	{"top", "Which one is the most expensive?"},
	{"top", "Which phones can I see?"},
	{"top", "Add the Pixel 9a to my cart."},
	{"top", "Tell me about the second phone."},
	{"top", "Where does it talk about problem solving?"},
	{"top", "What is this article about?"},
	{"top", "My name is Ada Lovelace."},
	{"top", "Fill in my name Grace Hopper."},
	{"top", "Read the form back to me."},
	{"top", "Compare prices for the iPhone 17."},
	{"top", "Submit."},
	{"article-selection", "Explain this."},
	{"article-selection", "Scroll back to the top."},
	{"form-filled", "What have I entered?"},
	{"form-filled", "Clear the form."},
}

// The share of intentPhrases, spoken by espeak-ng in two voices, for which
// the demo brain does what it does for the typed phrase, through the
// offline speech-to-text with the page's grammar and without it (the
// general model alone). A measurement for docs/decisions and the issue's
// note, with a floor: about 80 utterances take minutes, so it runs only
// when FRAMEWIRE_MEASURE_VOICE=1.
func TestOfflineIntentShare(t *testing.T) {
	if os.Getenv("FRAMEWIRE_MEASURE_VOICE") != "1" {
		t.Skip("a measurement: set FRAMEWIRE_MEASURE_VOICE=1")
	}
	offered := map[string]bool{demobrain.ReplyTool: true, demobrain.ResearchTool: true}
	states := map[string]*demobrain.UIState{}
	for _, name := range []string{"top", "article-selection", "form-filled"} {
		st, ok := demobrain.ParseUIState(uiagent.RenderUIState(demoSnapshot(t, name+".json")))
		if !ok {
			t.Fatalf("%s: no ui_state", name)
		}
		states[name] = st
	}
	right := map[bool]int{} // by grammar on
	for _, grammar := range []bool{true, false} {
		var items []pageItem
		for _, name := range []string{"top", "article-selection", "form-filled"} {
			items = append(items, pageItems(demoSnapshot(t, name+".json"))...)
		}
		s, _ := offlineHearing(t, items, grammar)
		total := 0
		var misses []string
		for _, voice := range []string{"en-us", "en-gb"} {
			for _, p := range intentPhrases {
				ev := hear(t, s, espeakPCM(t, voice, p.said))
				st := states[p.page]
				want, got := demobrain.Decide(p.said, st, offered), demobrain.Decide(ev.Text, st, offered)
				total++
				if cmp.Equal(want, got) {
					right[grammar]++
				} else {
					misses = append(misses, fmt.Sprintf("%s %q heard %q", voice, p.said, ev.Text))
				}
			}
		}
		s.Abort()
		t.Logf("grammar %v: the intent was right for %d of %d (%.0f%%)", grammar, right[grammar], total, 100*float64(right[grammar])/float64(total))
		t.Logf("grammar %v: missed:\n  %s", grammar, strings.Join(misses, "\n  "))
	}
	// Measured: 39 of 40 with the grammar, 7 without
	// (docs/decisions/demo-offline-voice.md). The floor is the figure
	// before the missed phrasings were added.
	if right[true] < 35 || right[true] <= right[false] {
		t.Errorf("the intent was right for %d of 40 with the grammar and %d without; want at least 35 with it, and more than without", right[true], right[false])
	}
}
