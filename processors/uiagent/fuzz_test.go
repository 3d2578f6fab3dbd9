package uiagent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/framewire/framewire/processors/rtvi/wire"
)

// FuzzRenderUIState renders whatever snapshot the decoder accepts: it
// never panics, always produces one block, and has a line per node at
// least.
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
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := wire.DecodeSnapshot(b)
		if err != nil {
			return
		}
		out := RenderUIState(s)
		if !strings.HasPrefix(out, "<ui_state>\n- ") || !strings.HasSuffix(out, "\n</ui_state>") {
			t.Fatalf("not a block: %q", out)
		}
		if lines, nodes := strings.Count(out, "\n")+1, countNodes(&s.Root); lines < nodes+2 {
			t.Fatalf("%d lines for %d nodes", lines, nodes)
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

// FuzzRenderEvent checks that any payload renders to one block holding
// valid JSON.
func FuzzRenderEvent(f *testing.F) {
	f.Add("note_click", []byte(`{"ref":"e7"}`))
	f.Add("x", []byte("{\n \"a\" : [1, 2]\n}"))
	f.Add("", []byte(`{"a":`))
	f.Fuzz(func(t *testing.T, name string, payload []byte) {
		out := RenderEvent(name, payload)
		head := uiEventOpen + name + `">`
		if !strings.HasPrefix(out, head) || !strings.HasSuffix(out, uiEventClose) {
			t.Fatalf("not a block: %q", out)
		}
		inner := strings.TrimSuffix(strings.TrimPrefix(out, head), uiEventClose)
		if !json.Valid([]byte(inner)) || (utf8.ValidString(inner) && strings.ContainsAny(inner, "\n\r")) {
			t.Fatalf("payload %q rendered as %q", payload, inner)
		}
	})
}
