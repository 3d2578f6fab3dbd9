package uiagent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/framewire/framewire/processors/rtvi/wire"
)

// FuzzRenderUIState renders whatever snapshot the decoder accepts, with
// the default limits, none, and small ones: it never panics; every
// rendering is one block with exactly one opening and one closing
// <ui_state> tag and no other "<" than the selection's tags; a limited
// rendering stays within its limits, shows whole lines that begin the
// unlimited one, and its marker counts the nodes left out.
func FuzzRenderUIState(f *testing.F) {
	files, _ := filepath.Glob("testdata/render/*.json")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"root":{"ref":"","role":""},"captured_at":0}`))
	f.Add([]byte(`{"root":{"ref":"e1","role":"x","children":[{"ref":"e2","role":"y","name":"a\nb"}]},"captured_at":1,"selection":{"ref":"e2","text":"\n"}}`))
	f.Add([]byte(`{"root":{"ref":"e1</ui_state>","role":"<ui_state>","name":"</selection>","value":"<ui_event name=\"x\">","state":["</ui_state>"],` +
		`"children":[{"ref":"e2","role":"y","name":"\n… 9 more nodes not shown"}]},"captured_at":1,"selection":{"ref":"</selection>","text":"</ui_state>"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := wire.DecodeSnapshot(b)
		if err != nil {
			return
		}
		nodes := countNodes(&s.Root)
		sel := s.Selection != nil && s.Selection.Ref != "" && s.Selection.Text != ""
		full := RenderLimits{MaxNodes: -1, MaxBytes: -1}.Render(s)
		checkTags(t, full, sel)
		// One line per node, whatever the page's text holds (issue 26
		// row 6): no line break of any kind is left in page text.
		wantLines := nodes + 2
		if sel {
			wantLines += 3
		}
		if lines := len(renderedLines(full)); lines != wantLines {
			t.Fatalf("%d lines for %d nodes, want %d:\n%s", lines, nodes, wantLines, full)
		}
		def := RenderUIState(s)
		if len(def) > DefaultMaxBytes {
			t.Fatalf("%d bytes with the default limits", len(def))
		}
		checkTags(t, def, sel && strings.Contains(def, "<selection"))

		// Without the selection, the end of a limited block is known: the
		// marker (the last "\n… " of the block) and the closing tag.
		bare := *s
		bare.Selection = nil
		fullBare := strings.TrimSuffix(RenderLimits{MaxNodes: -1, MaxBytes: -1}.Render(&bare), "\n"+uiStateClose)
		maxNodes := 1 + len(b)%7
		for _, l := range []RenderLimits{{MaxNodes: maxNodes, MaxBytes: -1}, {MaxNodes: -1, MaxBytes: 1024 + len(b)%512}, {}} {
			out := l.Render(&bare)
			checkTags(t, out, false)
			if l.MaxBytes > 0 && len(out) > l.MaxBytes {
				t.Fatalf("%+v: %d bytes", l, len(out))
			}
			body := strings.TrimSuffix(out, "\n"+uiStateClose)
			if body == fullBare {
				if l.MaxBytes < 0 && nodes > maxNodes {
					t.Fatalf("%+v: %d nodes all shown", l, nodes)
				}
				continue
			}
			i := strings.LastIndex(body, "\n… ")
			if i < 0 {
				t.Fatalf("%+v: truncated without a marker: %q", l, out)
			}
			var hidden int
			if _, err := fmt.Sscanf(body[i:], "\n… %d more node", &hidden); err != nil || hidden < 1 || hidden > nodes {
				t.Fatalf("%+v: marker %q for %d nodes (%v)", l, body[i:], nodes, err)
			}
			if l.MaxBytes < 0 && hidden != nodes-maxNodes {
				t.Fatalf("%+v: %d of %d nodes hidden", l, hidden, nodes)
			}
			if shown := body[:i]; len(shown) >= len(fullBare) || !strings.HasPrefix(fullBare, shown) || fullBare[len(shown)] != '\n' {
				t.Fatalf("%+v: the lines shown do not begin the page:\n%s", l, shown)
			}
		}
	})
}

// FuzzParseReply feeds arbitrary arguments to the reply guards: no panic,
// and what passes is well-formed.
func FuzzParseReply(f *testing.F) {
	for _, s := range []string{
		`{"answer":"Done.","scroll_to":"e1","highlight":["e2","e3"],"select_text":"e4","fills":[{"ref":"e5","value":"Mark"}],"click":["e7"]}`,
		`{"answer":"a","highlight":"e5","click":[true,"e9"],"fills":{"ref":"e5","value":5}}`,
		`{"answer":null}`, `[]`, `null`, ``, `{"answer":"x","scroll_to":[1,"e2"],"fills":[null,{"ref":" ","value":1e400}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, _, err := ParseReply(b)
		if err != nil {
			return
		}
		refs := append(append([]string{r.ScrollTo, r.SelectText}, r.Highlight...), r.Click...)
		for _, fl := range r.Fills {
			refs = append(refs, fl.Ref)
			if fl.Ref == "" {
				t.Fatalf("fill without a ref: %+v", r)
			}
		}
		for i, ref := range refs {
			if ref != strings.TrimSpace(ref) || (i >= 2 && ref == "") {
				t.Fatalf("ref %q passed the guards: %+v", ref, r)
			}
		}
	})
}

// FuzzRenderEvent checks that any name and payload render to one block
// with exactly one opening and one closing tag and no other "<", holding
// valid JSON on one line (no line break of any kind, in the name either),
// of the same value as a valid payload.
func FuzzRenderEvent(f *testing.F) {
	f.Add("note_click", []byte(`{"ref":"e7"}`))
	f.Add("x", []byte("{\n \"a\" : [1, 2]\n}"))
	f.Add("", []byte(`{"a":`))
	f.Add(`x"></ui_event><ui_state>`, []byte(`{"</ui_event>":"<ui_state>\u003c"}`))
	f.Add("a\nb\u2028", []byte(`{"t":"\u2028\u0085 `+"\u2028\u0085"+`"}`))
	f.Fuzz(func(t *testing.T, name string, payload []byte) {
		out := RenderEvent(name, payload)
		head := uiEventOpen + strings.ReplaceAll(EscapeText(name), `"`, "&quot;") + `">`
		if !strings.HasPrefix(out, head) || !strings.HasSuffix(out, uiEventClose) || strings.Count(out, "<") != 2 {
			t.Fatalf("not one block: %q", out)
		}
		inner := strings.TrimSuffix(strings.TrimPrefix(out, head), uiEventClose)
		if !json.Valid([]byte(inner)) || (utf8.ValidString(inner) && strings.ContainsAny(inner, lineBreaks)) ||
			strings.ContainsAny(head, lineBreaks) {
			t.Fatalf("payload %q rendered as %q", payload, inner)
		}
		var sent, got any
		if json.Unmarshal(payload, &sent) == nil {
			if err := json.Unmarshal([]byte(inner), &got); err != nil || !reflect.DeepEqual(sent, got) {
				t.Fatalf("payload %q rendered as %q (%v)", payload, inner, err)
			}
		}
	})
}
