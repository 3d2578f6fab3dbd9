package demobrain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/processors/rtvi/wire"
	"github.com/framewire/framewire/processors/uiagent"
)

// page loads a snapshot the demo page really sent (captured with
// window.__demo.snapshot() in Chromium) and renders it the way the UI
// agent shows it to a model.
func page(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := wire.DecodeSnapshot(b)
	if err != nil {
		t.Fatalf("decoding %s: %v", name, err)
	}
	return uiagent.RenderUIState(s)
}

func parsed(t testing.TB, name string) *UIState {
	t.Helper()
	st, ok := ParseUIState(page(t, name))
	if !ok {
		t.Fatalf("%s: no <ui_state> block", name)
	}
	return st
}

func TestParseUIStateReadsEveryPart(t *testing.T) {
	text := strings.Join([]string{
		"noise before",
		"<ui_state>",
		"- generic [ref=e9]:",
		"  - heading \"Title\" [level=1] [ref=e1]",
		"  - list \"Grid\" [cols=4] [rows=2] [ref=e2]:",
		"    - listitem \"A \\\"quoted\\\" name\" [focused] [offscreen] [ref=e3]",
		"    - textbox \"Email\" = \"a = \"b\"\" [disabled] [ref=e4]",
		"  - text \"plain\"",
		"<selection ref=\"e3\">",
		"line one",
		"- not a node",
		"</selection>",
		"</ui_state>",
	}, "\n")
	st, ok := ParseUIState(text)
	if !ok {
		t.Fatal("no block found")
	}
	type row struct {
		Role, Name, Value, Ref string
		Level, Cols, Rows      int
		State                  []string
		Parent                 string
	}
	var got []row
	for _, n := range st.All() {
		p := ""
		if n.Parent != nil {
			p = n.Parent.Ref
		}
		got = append(got, row{n.Role, n.Name, n.Value, n.Ref, n.Level, n.Cols, n.Rows, n.State, p})
	}
	want := []row{
		{Role: "generic", Ref: "e9"},
		{Role: "heading", Name: "Title", Ref: "e1", Level: 1, Parent: "e9"},
		{Role: "list", Name: "Grid", Ref: "e2", Cols: 4, Rows: 2, Parent: "e9"},
		{Role: "listitem", Name: `A \"quoted\" name`, Ref: "e3", State: []string{"focused", "offscreen"}, Parent: "e2"},
		{Role: "textbox", Name: "Email", Value: `a = "b"`, Ref: "e4", State: []string{"disabled"}, Parent: "e2"},
		{Role: "text", Name: "plain", Parent: "e9"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	if st.SelectionRef != "e3" || st.SelectionText != "line one\n- not a node" {
		t.Errorf("selection = %q %q, want e3 and the two lines verbatim", st.SelectionRef, st.SelectionText)
	}
	if n := st.Find("e4"); n == nil || n.Index != 1 {
		t.Errorf("Find(e4) = %+v, want the second child of the list", n)
	}
}

func TestParseUIStateWithoutBlock(t *testing.T) {
	if _, ok := ParseUIState("just words"); ok {
		t.Error("found a block in text without one")
	}
	st, ok := ParseUIState("<ui_state>\n</ui_state>")
	if !ok || st.Root == nil || len(st.All()) != 1 {
		t.Errorf("empty block: ok=%v root=%+v, want an empty generic root", ok, st)
	}
}

func TestParseUIStateOfTheRealPage(t *testing.T) {
	st := parsed(t, "top")
	list := st.Find("e9")
	if list == nil || list.Role != "list" || list.Cols != 3 || len(list.Children) != 16 {
		t.Fatalf("phone list = %+v, want a list of 16 cards in 3 columns", list)
	}
	phone := list.Children[13]
	if phone.Name != "iPhone 17" || !phone.Offscreen() || describe(phone) != "Apple · 6.3″ display · $799" {
		t.Errorf("card 14 = %q offscreen=%v %q", phone.Name, phone.Offscreen(), describe(phone))
	}
}

func FuzzParseUIState(f *testing.F) {
	for _, name := range []string{"top", "article-selection", "form-filled"} {
		f.Add(page(f, name))
	}
	f.Add("<ui_state>\n- a\n      - b\n- c\n<selection ref=\"\n</ui_state>")
	f.Add("<ui_state>- [ref=]: [\n  - \" = \"\" []]:</ui_state>")
	f.Fuzz(func(t *testing.T, text string) {
		st, ok := ParseUIState(text)
		if !ok {
			return
		}
		for _, n := range st.All() {
			if n.Ref != "" && st.Find(n.Ref) == nil {
				t.Fatalf("node with ref %q not findable", n.Ref)
			}
			if n.Parent != nil && n.Parent.Children[n.Index] != n {
				t.Fatalf("node %q not at its index in its parent", n.Ref)
			}
		}
		// Whatever the page says, deciding on it must not panic.
		offered := map[string]bool{ReplyTool: true, ResearchTool: true}
		for _, u := range []string{
			"where is the iPhone 17? explain this, my name is Ada Lovelace, submit",
			"the phone at the top right", "the last one", "which phones are from Google", "what's the cheapest phone",
			"which phones can I see", "add the Pixel 10 to my cart", "where does it talk about octopus", "scroll to the top",
		} {
			Decide(u, st, offered)
		}
	})
}
