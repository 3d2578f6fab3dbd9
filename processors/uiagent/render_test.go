package uiagent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/processors/rtvi/wire"
)

// decodeSnapshotFile decodes a snapshot tree (the tree member of
// ui-snapshot) the way the RTVI processor does.
func decodeSnapshotFile(t testing.TB, path string) *wire.Snapshot {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := wire.DecodeSnapshot(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

// Every testdata/render/NAME.json renders to NAME.golden byte for byte.
// The goldens are written by hand from ui-agent.md §1.4; the JSON comes
// from the spec's example, the RTVI vectors and edge cases.
func TestRenderUIStateGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/render/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, in := range files {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(strings.TrimSuffix(in, ".json") + ".golden")
			if err != nil {
				t.Fatal(err)
			}
			got := RenderUIState(decodeSnapshotFile(t, in))
			if d := cmp.Diff(strings.TrimSuffix(string(want), "\n"), got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestRenderUIStateWithoutSnapshot(t *testing.T) {
	if got := RenderUIState(nil); got != "" {
		t.Errorf("nil snapshot rendered %q", got)
	}
	if got := string(AppendUIState([]byte("x"), nil)); got != "x" {
		t.Errorf("nil snapshot appended %q", got)
	}
}

// A node without a role (built by hand, or a root the client sent empty)
// renders as generic; a node with nothing else is just "- generic".
func TestRenderMissingRole(t *testing.T) {
	s := &wire.Snapshot{Root: wire.Node{Children: []wire.Node{{Ref: "e2"}, {Name: "x"}}}}
	want := "<ui_state>\n- generic:\n  - generic [ref=e2]\n  - generic \"x\"\n</ui_state>"
	if got := RenderUIState(s); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// Values set by hand count as present when not zero; zero ones only when
// marked in Set, as decoding does.
func TestRenderHandBuiltIntegers(t *testing.T) {
	s := &wire.Snapshot{Root: wire.Node{Role: "grid", ColCount: 4, RowCount: 0, Level: 0, Set: wire.FieldRowCount}}
	want := "<ui_state>\n- grid [cols=4] [rows=0]\n</ui_state>"
	if got := RenderUIState(s); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The client's budget is 200 nodes; the server renders them all, one line
// each, in pre-order.
func TestRender200Nodes(t *testing.T) {
	root := map[string]any{"ref": "e1", "role": "generic"}
	var children []any
	want := []string{"<ui_state>", "- generic [ref=e1]:"}
	ref := 1
	next := func() string { ref++; return fmt.Sprintf("e%d", ref) }
	for l := range 9 {
		list := map[string]any{"ref": next(), "role": "list", "name": fmt.Sprintf("List %d", l)}
		want = append(want, fmt.Sprintf("  - list \"List %d\" [ref=%s]:", l, list["ref"]))
		var items []any
		for i := range 21 {
			item := map[string]any{"ref": next(), "role": "listitem", "name": fmt.Sprintf("Item %d.%d", l, i)}
			state := ""
			if i%7 == 6 {
				item["state"] = []string{"offscreen"}
				state = " [offscreen]"
			}
			items = append(items, item)
			want = append(want, fmt.Sprintf("    - listitem \"Item %d.%d\"%s [ref=%s]", l, i, state, item["ref"]))
		}
		list["children"] = items
		children = append(children, list)
	}
	children = append(children, map[string]any{"ref": "", "role": "text", "name": "The end"})
	want = append(want, "  - text \"The end\"", "</ui_state>")
	root["children"] = children
	b, err := json.Marshal(map[string]any{"root": root, "captured_at": 1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := wire.DecodeSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if n := countNodes(&s.Root); n != 200 {
		t.Fatalf("built %d nodes, want 200", n)
	}
	got := RenderUIState(s)
	if d := cmp.Diff(want, strings.Split(got, "\n")); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestRenderEvent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		payload wire.RawJSON
		want    string
	}{
		{"note_click", wire.RawJSON(`{"ref":"e7"}`), `<ui_event name="note_click">{"ref":"e7"}</ui_event>`},
		{"hello", nil, `<ui_event name="hello">null</ui_event>`},
		{"pretty", wire.RawJSON("{\n  \"a\": [1, 2],\n  \"s\": \"h\u00e9llo\"\n}"), `<ui_event name="pretty">{"a":[1,2],"s":"héllo"}</ui_event>`},
		{"scalar", wire.RawJSON(`42`), `<ui_event name="scalar">42</ui_event>`},
		{`odd"name`, wire.RawJSON(`"x"`), `<ui_event name="odd&quot;name">"x"</ui_event>`},
		{"broken", wire.RawJSON(`{"a":`), `<ui_event name="broken">null</ui_event>`},
	} {
		if got := RenderEvent(tc.name, tc.payload); got != tc.want {
			t.Errorf("RenderEvent(%q, %s) = %s, want %s", tc.name, tc.payload, got, tc.want)
		}
	}
}

func TestConformanceMessages(t *testing.T) {
	state := "<ui_state>\n- heading \"Caf\u00e9 & co\" [ref=e1]\n</ui_state>"
	got := string(UIStateMessage{Text: state}.AppendJSON(nil))
	want := `{"type":"ui_state","text":"<ui_state>\n- heading \"Café & co\" [ref=e1]\n</ui_state>"}`
	if got != want {
		t.Errorf("ui_state message\n got %s\nwant %s", got, want)
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(got), &back); err != nil || back["text"] != state {
		t.Errorf("ui_state message does not decode back: %v %q", err, back["text"])
	}
	for _, tc := range []struct {
		m    UIEventMessage
		want string
	}{
		{UIEventMessage{Event: "clicked", Payload: wire.RawJSON(`{"x":1,"s":"héllo"}`)}, `{"type":"ui_event","event":"clicked","payload":{"x":1,"s":"héllo"}}`},
		{UIEventMessage{Event: "bare"}, `{"type":"ui_event","event":"bare","payload":null}`},
	} {
		if got := string(tc.m.AppendJSON(nil)); got != tc.want {
			t.Errorf("got %s, want %s", got, tc.want)
		}
	}
}
