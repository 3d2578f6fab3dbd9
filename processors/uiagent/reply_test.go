package uiagent

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The guards at the LLM-input boundary, one row per rule.
func TestParseReplyGuards(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    string
		want    Reply
		ignored []string
		refused bool
	}{
		{name: "answer only", args: `{"answer":"Sure."}`, want: Reply{Answer: "Sure."}},
		{name: "empty answer is a silent turn", args: `{"answer":""}`, want: Reply{}},
		{name: "no answer is refused", args: `{"scroll_to":"e1"}`, refused: true},
		{name: "null answer is refused", args: `{"answer":null}`, refused: true},
		{name: "number answer is refused", args: `{"answer":42}`, refused: true},
		{name: "list answer is refused", args: `{"answer":["a"]}`, refused: true},
		{name: "not an object is refused", args: `["answer"]`, refused: true},
		{name: "not JSON is refused", args: `{"answer":"x"`, refused: true},
		{name: "null arguments are refused", args: `null`, refused: true},
		{name: "empty arguments are refused", args: ``, refused: true},
		{name: "everything", args: `{"answer":"Done.","scroll_to":"e1","highlight":["e2","e3"],"select_text":"e4",
			"fills":[{"ref":"e5","value":"Mark"},{"ref":"e6","value":""}],"click":["e7","e8"]}`,
			want: Reply{Answer: "Done.", ScrollTo: "e1", Highlight: []string{"e2", "e3"}, SelectText: "e4",
				Fills: []Fill{{"e5", "Mark"}, {"e6", ""}}, Click: []string{"e7", "e8"}}},
		{name: "nulls mean none", args: `{"answer":"a","scroll_to":null,"highlight":null,"select_text":null,"fills":null,"click":null}`,
			want: Reply{Answer: "a"}},
		{name: "bare string highlight is a list of one", args: `{"answer":"a","highlight":"e5"}`, want: Reply{Answer: "a", Highlight: []string{"e5"}}},
		{name: "bare string click is a list of one", args: `{"answer":"a","click":"e5"}`, want: Reply{Answer: "a", Click: []string{"e5"}}},
		{name: "non-string highlight entries dropped", args: `{"answer":"a","highlight":["e1",2,null,{"ref":"e3"},"e4"]}`,
			want: Reply{Answer: "a", Highlight: []string{"e1", "e4"}}, ignored: []string{"highlight[1]: not a ref", "highlight[2]: not a ref", "highlight[3]: not a ref"}},
		{name: "non-string click entries dropped", args: `{"answer":"a","click":[true,"e9"]}`,
			want: Reply{Answer: "a", Click: []string{"e9"}}, ignored: []string{"click[0]: not a ref"}},
		{name: "highlight of wrong type dropped", args: `{"answer":"a","highlight":{"e1":true}}`,
			want: Reply{Answer: "a"}, ignored: []string{"highlight: an object is not a list of refs"}},
		{name: "scroll_to list takes the first ref", args: `{"answer":"a","scroll_to":["e1","e2"]}`,
			want: Reply{Answer: "a", ScrollTo: "e1"}, ignored: []string{"scroll_to: takes one ref; used the first of 2"}},
		{name: "scroll_to list of one", args: `{"answer":"a","scroll_to":["e1"]}`, want: Reply{Answer: "a", ScrollTo: "e1"}},
		{name: "scroll_to number dropped", args: `{"answer":"a","scroll_to":7}`,
			want: Reply{Answer: "a"}, ignored: []string{"scroll_to: a number is not a ref"}},
		{name: "select_text object dropped", args: `{"answer":"a","select_text":{"ref":"e1"}}`,
			want: Reply{Answer: "a"}, ignored: []string{"select_text: an object is not a ref"}},
		{name: "select_text empty list dropped", args: `{"answer":"a","select_text":[]}`,
			want: Reply{Answer: "a"}, ignored: []string{"select_text: a list is not a ref"}},
		{name: "refs are trimmed, empty ones dropped", args: `{"answer":"a","scroll_to":"  e1 ","highlight":[" e2",""," "],"select_text":"  "}`,
			want: Reply{Answer: "a", ScrollTo: "e1", Highlight: []string{"e2"}}},
		{name: "fills: a bare object is a list of one", args: `{"answer":"a","fills":{"ref":"e5","value":"x"}}`,
			want: Reply{Answer: "a", Fills: []Fill{{"e5", "x"}}}},
		{name: "fills: numbers and booleans become text", args: `{"answer":"a","fills":[{"ref":"e1","value":5551234},{"ref":"e2","value":2.5},{"ref":"e3","value":true}]}`,
			want: Reply{Answer: "a", Fills: []Fill{{"e1", "5551234"}, {"e2", "2.5"}, {"e3", "true"}}}},
		{name: "fills: bad entries dropped", args: `{"answer":"a","fills":["e1",{"value":"x"},{"ref":7,"value":"x"},{"ref":"e2"},{"ref":"e3","value":null},{"ref":"e4","value":{"a":1}},{"ref":"e5","value":"ok"}]}`,
			want: Reply{Answer: "a", Fills: []Fill{{"e5", "ok"}}},
			ignored: []string{"fills[0]: not a {ref, value} object", "fills[1]: no ref", "fills[2]: no ref", "fills[3]: no value for e2",
				"fills[4]: no value for e3", "fills[5]: the value for e4 is not text"}},
		{name: "fills of wrong type dropped", args: `{"answer":"a","fills":"e5=x"}`,
			want: Reply{Answer: "a"}, ignored: []string{"fills: a string is not a list of {ref, value}"}},
		{name: "unknown fields are ignored", args: `{"answer":"a","research_query":"x"}`, want: Reply{Answer: "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ignored, err := ParseReply([]byte(tc.args))
			if tc.refused {
				if !errors.Is(err, ErrNoAnswerArg) {
					t.Fatalf("err = %v, want ErrNoAnswerArg", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("reply (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.ignored, ignored); d != "" {
				t.Errorf("ignored (-want +got):\n%s", d)
			}
		})
	}
}

// The fixed dispatch order, ref checks and payloads.
func TestPlanOrderAndRefs(t *testing.T) {
	a := New(Options{})
	a.SetSnapshot(snapshotOf(t, formTree))
	r := Reply{Answer: "x", Click: []string{"e5", "e6"}, Fills: []Fill{{"e3", "Mark"}, {"e9", "y"}, {"e4", ""}},
		SelectText: "e2", Highlight: []string{"e3", "nope", "e4"}, ScrollTo: "e6"}
	cmds, skipped := a.plan(r)
	var got []string
	for _, c := range cmds {
		got = append(got, c.CommandName()+" "+string(c.AppendJSON(nil)))
	}
	want := []string{
		`scroll_to {"ref":"e6","target_id":null,"behavior":null}`,
		`highlight {"ref":"e3","target_id":null,"duration_ms":null}`,
		`highlight {"ref":"e4","target_id":null,"duration_ms":null}`,
		`select_text {"ref":"e2","target_id":null,"start_offset":null,"end_offset":null}`,
		`set_input_value {"value":"Mark","ref":"e3","target_id":null,"replace":true}`,
		`set_input_value {"value":"","ref":"e4","target_id":null,"replace":true}`,
		`click {"ref":"e5","target_id":null}`,
		`click {"ref":"e6","target_id":null}`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("commands (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"nope", "e9"}, skipped); d != "" {
		t.Errorf("skipped (-want +got):\n%s", d)
	}
}

func TestPlanRefRules(t *testing.T) {
	a := New(Options{})
	if cmds, skipped := a.plan(Reply{Click: []string{"e1"}}); len(cmds) != 0 || len(skipped) != 1 {
		t.Errorf("without a snapshot every ref is unknown: %v %v", cmds, skipped)
	}
	a.SetSnapshot(snapshotOf(t, formTree))
	cmds, skipped := a.plan(Reply{Highlight: []string{"e6.more", "e7", "e7", "e1"}})
	if len(cmds) != 1 || cmp.Diff([]string{"e6.more", "e7"}, skipped) != "" {
		t.Errorf("placeholders and unknown refs are skipped once each: %v %v", cmds, skipped)
	}
	if !a.KnownRef("e5") || a.KnownRef("e6.more") || a.KnownRef("") {
		t.Error("KnownRef disagrees with the snapshot")
	}
	loose := New(Options{NoRefCheck: true})
	if cmds, skipped := loose.plan(Reply{Click: []string{"anything"}}); len(cmds) != 1 || len(skipped) != 0 {
		t.Errorf("NoRefCheck still checks: %v %v", cmds, skipped)
	}
}

// The schema the model sees: answer required, fills items with a real
// schema, nullable optional fields.
func TestReplySchema(t *testing.T) {
	fn := New(Options{}).ReplyTool()
	if fn.Name != "reply" || fn.Description == "" || fn.Handler == nil {
		t.Fatalf("tool: %+v", fn)
	}
	var s struct {
		Type       string                     `json:"type"`
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(fn.Parameters, &s); err != nil {
		t.Fatal(err)
	}
	if s.Type != "object" || cmp.Diff([]string{"answer"}, s.Required) != "" {
		t.Errorf("schema head: %+v", s)
	}
	var names []string
	for k := range s.Properties {
		names = append(names, k)
	}
	if d := cmp.Diff([]string{"answer", "click", "fills", "highlight", "scroll_to", "select_text"}, names, cmpSorted); d != "" {
		t.Errorf("properties (-want +got):\n%s", d)
	}
	fills := jsonOf(t, string(s.Properties["fills"])).(map[string]any)
	item := fills["anyOf"].([]any)[0].(map[string]any)["items"].(map[string]any)
	if d := cmp.Diff([]any{"ref", "value"}, item["required"]); d != "" {
		t.Errorf("fills items must require ref and value: %v", item)
	}
}
