package demobrain

import "testing"

// The brain's cost per turn: parsing the page's <ui_state> (about 100
// nodes) and deciding. A model call takes hundreds of milliseconds; the
// brain should take well under one.
func BenchmarkParseUIState(b *testing.B) {
	text := page(b, "top")
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := ParseUIState(text); !ok {
			b.Fatal("no block")
		}
	}
}

func BenchmarkDecide(b *testing.B) {
	st := parsed(b, "top")
	offered := map[string]bool{ReplyTool: true, ResearchTool: true}
	for _, u := range []string{"where is the iPhone 17?", "My name is Ada Lovelace and my email is ada@example.com", "Where does it talk about camouflage?"} {
		b.Run(u[:12], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Decide(u, st, offered)
			}
		})
	}
}
