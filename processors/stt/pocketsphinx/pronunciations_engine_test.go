//go:build pocketsphinx && cgo

package pocketsphinx

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/processors/stt"
)

// A word the dictionary lacks joins it through Options.Pronunciations:
// the grammar then holds it (GrammarStatus misses nothing) and the
// decoder hears it.
func TestPronunciationsAddWordsTheDictionaryLacks(t *testing.T) {
	g, err := NewGrammar([]string{"open {item}"}, []string{"framewire"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		p       map[string]string
		missing []string
	}{
		{"without", nil, []string{"framewire"}},
		{"with", map[string]string{"framewire": "F R EY M W AY ER"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t, Options{Grammar: g, Pronunciations: tc.p, NoSpelling: true})
			r := recognize(t, e, speak(t, "en-us", "Open framewire."))
			missing, _ := e.GrammarStatus()
			if d := cmp.Diff(tc.missing, missing); d != "" {
				t.Errorf("words missing from the dictionary (-want +got):\n%s", d)
			}
			t.Logf("heard %q from the %v (fit %.2f)", r.Text, r.Source, r.Fit)
			if tc.p != nil && r.Text != "open framewire" {
				t.Errorf("heard %q, want the added word", r.Text)
			}
		})
	}
}

// A phone the acoustic model does not know fails the session's start
// with an error that says where to look.
func TestAnUnknownPhoneFailsTheSession(t *testing.T) {
	e := newEngine(t, Options{Pronunciations: map[string]string{"zork": "ZZ AO R K"}})
	ctx, cancel := context.WithTimeout(t.Context(), decodeWait)
	defer cancel()
	s, err := e.Open(ctx, stt.Format{SampleRate: rate, Channels: 1})
	if err == nil {
		s.Abort()
		t.Fatal("a session started with an unknown phone")
	}
	if !strings.Contains(err.Error(), "Pronunciations") {
		t.Errorf("error %q does not point at the pronunciations", err)
	}
}
