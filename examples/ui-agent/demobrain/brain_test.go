package demobrain

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
)

// want describes a call by the names of the elements it acts on, so the
// table reads like the scenarios of ui-agent.md §7.
type want struct {
	tool      string // "" for plain text
	answer    []string
	scrollTo  string
	highlight []string
	selectTxt string
	fills     map[string]string // field name -> value
	click     []string
	query     string // research
}

func TestDecide(t *testing.T) {
	all := map[string]bool{ReplyTool: true, ResearchTool: true}
	tests := []struct {
		name      string
		page      string // testdata snapshot; "" for no snapshot yet
		utterance string
		offered   map[string]bool
		want      want
	}{
		// Pointing.
		{"offscreen phone: scroll and highlight", "top", "Where is the iPhone 17?", all, want{
			tool: ReplyTool, answer: []string{"iPhone 17", "row 5, column 2", "$799"},
			scrollTo: "iPhone 17", highlight: []string{"iPhone 17"}}},
		{"visible phone: highlight only", "top", "where's the pixel 10", all, want{
			tool: ReplyTool, answer: []string{"Pixel 10 is right there", "row 1, column 2"}, highlight: []string{"Pixel 10"}}},
		{"the longer name wins when fully named", "top", "show me the iPhone 17 Pro", all, want{
			tool: ReplyTool, answer: []string{"iPhone 17 Pro"}, highlight: []string{"iPhone 17 Pro"}}},
		{"partial name", "top", "where is the OPPO one?", all, want{
			tool: ReplyTool, answer: []string{"Find X8 Pro"}, scrollTo: "Find X8 Pro", highlight: []string{"Find X8 Pro"}}},
		{"brand: every phone of it", "top", "Which phones are from Google?", all, want{
			tool: ReplyTool, answer: []string{"Google makes 3", "Pixel 10", "Pixel 9a", "Pixel 10 Pro"},
			scrollTo: "Pixel 9a", highlight: []string{"Pixel 10", "Pixel 9a", "Pixel 10 Pro"}}},
		{"back to the top", "article-selection", "scroll back to the top", all, want{
			tool: ReplyTool, answer: []string{"top"}, scrollTo: "Phones"}},

		{"top right", "top", "what's the phone at the top right?", all, want{
			tool: ReplyTool, answer: []string{"The top right one on screen is the iPhone 17 Pro, $1,099."}, highlight: []string{"iPhone 17 Pro"}}},
		{"bottom left counts only what is on screen", "top", "and the one at the bottom left?", all, want{
			tool: ReplyTool, answer: []string{"bottom left one on screen is the OnePlus 13"}, highlight: []string{"OnePlus 13"}}},
		{"ordinal", "top", "tell me about the second phone", all, want{
			tool: ReplyTool, answer: []string{"second one on screen is the Pixel 10"}, highlight: []string{"Pixel 10"}}},
		{"last on screen", "top", "which is the last one?", all, want{
			tool: ReplyTool, answer: []string{"last one on screen is the Galaxy Z Flip 7"}, highlight: []string{"Galaxy Z Flip 7"}}},
		{"cheapest", "top", "What's the cheapest phone?", all, want{
			tool: ReplyTool, answer: []string{"Galaxy A56 is the cheapest, at $449"}, scrollTo: "Galaxy A56", highlight: []string{"Galaxy A56"}}},
		{"most expensive", "top", "which one is the most expensive", all, want{
			tool: ReplyTool, answer: []string{"Xperia 1 VII is the most expensive, at $1,399", "row 2, column 2"}, highlight: []string{"Xperia 1 VII"}}},
		{"what is on screen", "top", "Which phones can I see?", all, want{
			tool: ReplyTool, answer: []string{"On screen: the Galaxy S25", "the Galaxy Z Flip 7."}}},
		{"add to cart", "top", "add the Pixel 9a to my cart", all, want{
			tool: ReplyTool, answer: []string{"Added the Pixel 9a"}, scrollTo: "Pixel 9a", click: []string{"Add Pixel 9a to cart"}}},
		{"take out of a cart it is not in", "top", "remove the Pixel 9a from the cart", all, want{
			tool: ReplyTool, answer: []string{"isn't in your cart"}}},

		// Deixis.
		{"explain the selected paragraph", "article-selection", "explain this", all, want{
			tool: ReplyTool, answer: []string{"about solving problems", "unscrew jar lids"}}},
		{"explain without a selection", "top", "Can you explain this?", all, want{
			tool: ReplyTool, answer: []string{"Select a paragraph first"}}},
		{"where does it talk about X", "top", "Where does it talk about problem solving?", all, want{
			tool: ReplyTool, answer: []string{`"Solving problems"`}, scrollTo: "In the lab, octopuses", selectTxt: "In the lab, octopuses"}},
		{"a question the essay answers", "top", "How many neurons does an octopus have?", all, want{
			tool: ReplyTool, answer: []string{"500 million neurons"}, scrollTo: "An octopus has about", selectTxt: "An octopus has about"}},
		{"what the essay is about", "top", "what is this article about?", all, want{
			tool: ReplyTool, answer: []string{"The octopus: a mind spread through eight arms", "solving problems", "masters of disguise"}}},

		// The form.
		{"dictated name and email", "top", "My name is Ada Lovelace and my email is ada@example.com", all, want{
			tool: ReplyTool, answer: []string{"first name Ada", "last name Lovelace", "email ada@example.com"},
			scrollTo: "First name", fills: map[string]string{"First name": "Ada", "Last name": "Lovelace", "Email": "ada@example.com"}}},
		{"fill in my name, as the offline voice hears it", "top", "fill in my name ada lovelace", all, want{
			tool: ReplyTool, answer: []string{"first name Ada", "last name Lovelace"},
			scrollTo: "First name", fills: map[string]string{"First name": "Ada", "Last name": "Lovelace"}}},
		{"spoken email and phone", "form-filled", "my email is grace dot hopper at navy dot mil and my phone number is five five five one two three four", all, want{
			tool: ReplyTool, answer: []string{"grace.hopper@navy.mil", "5551234"},
			fills: map[string]string{"Email": "grace.hopper@navy.mil", "Phone": "5551234"}}},
		{"years and motivation", "form-filled", "I have seven years of experience and I'm interested because I love teaching developers", all, want{
			tool: ReplyTool, answer: []string{"years of experience 7"},
			fills: map[string]string{"Years of experience": "7", "Why are you interested in this role?": "I love teaching developers."}}},
		{"read back", "form-filled", "What have I entered?", all, want{
			tool: ReplyTool, answer: []string{"first name Ada", "last name Lovelace", "email ada@example.com", "Still empty: phone"}}},
		{"read back an empty form", "top", "read the form back to me", all, want{
			tool: ReplyTool, answer: []string{"still empty"}}},
		{"submit a complete form", "form-filled", "Submit it please", all, want{
			tool: ReplyTool, answer: []string{"submitted", "Thanks, Ada"}, click: []string{"Submit application"}}},
		{"submit refuses a form without the required fields", "top", "submit", all, want{
			tool: ReplyTool, answer: []string{"first name, last name and email"}, scrollTo: "First name",
			highlight: []string{"First name", "Last name", "Email"}}},
		{"clear", "form-filled", "clear the form", all, want{
			tool: ReplyTool, answer: []string{"Cleared"}, fills: map[string]string{"First name": "", "Last name": "", "Email": ""}}},

		// Task groups.
		{"compare prices of a named phone", "top", "Compare prices for the iPhone 17", all, want{
			tool: ResearchTool, answer: []string{"prices for the iPhone 17"}, query: "prices for the iPhone 17"}},
		{"research a topic", "top", "research the Mariana Trench", all, want{
			tool: ResearchTool, answer: []string{"the Mariana Trench"}, query: "the Mariana Trench"}},
		{"research without the tool", "top", "compare prices", map[string]bool{ReplyTool: true}, want{
			tool: ReplyTool, answer: []string{"no research workers"}}},

		// Everything else.
		{"greeting", "top", "Hello there!", all, want{tool: ReplyTool, answer: []string{"Hi!"}}},
		{"thanks", "top", "thanks", all, want{tool: ReplyTool, answer: []string{"welcome"}}},
		{"not understood", "top", "sing me a song about the sea", all, want{tool: ReplyTool, answer: []string{"offline demo brain"}}},
		{"no snapshot yet", "", "where is the iPhone 17?", all, want{tool: ReplyTool, answer: []string{"can't see the page"}}},
		{"no reply tool: plain text", "top", "where is the iPhone 17?", map[string]bool{}, want{answer: []string{"iPhone 17"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st *UIState
			if tc.page != "" {
				st = parsed(t, tc.page)
			}
			call := Decide(tc.utterance, st, tc.offered)
			if call.Tool != tc.want.tool {
				t.Fatalf("tool = %q, want %q (answer %q)", call.Tool, tc.want.tool, call.Answer())
			}
			for _, s := range tc.want.answer {
				if !strings.Contains(call.Answer(), s) {
					t.Errorf("answer %q does not contain %q", call.Answer(), s)
				}
			}
			switch a := call.Args.(type) {
			case Research:
				if a.Query != tc.want.query {
					t.Errorf("query = %q, want %q", a.Query, tc.want.query)
				}
			case Reply:
				if tc.want.tool == "" {
					if a.ScrollTo != "" || len(a.Highlight)+len(a.Fills)+len(a.Click) > 0 || a.SelectText != "" {
						t.Errorf("plain text answer carries actions: %+v", a)
					}
					return
				}
				got := want{tool: call.Tool, answer: tc.want.answer, query: tc.want.query,
					scrollTo: name(st, a.ScrollTo), selectTxt: name(st, a.SelectText)}
				for _, r := range a.Highlight {
					got.highlight = append(got.highlight, name(st, r))
				}
				for _, r := range a.Click {
					got.click = append(got.click, name(st, r))
				}
				if len(a.Fills) > 0 {
					got.fills = map[string]string{}
					for _, f := range a.Fills {
						got.fills[name(st, f.Ref)] = f.Value
					}
				}
				if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), prefixes()); diff != "" {
					t.Errorf("actions (-want +got):\n%s", diff)
				}
			default:
				t.Fatalf("args of type %T", call.Args)
			}
		})
	}
}

// name returns the name of the element ref, or "?ref" when the snapshot
// has no such element.
func name(st *UIState, ref string) string {
	if ref == "" {
		return ""
	}
	if n := st.Find(ref); n != nil {
		return n.Name
	}
	return "?" + ref
}

// prefixes lets the table name a paragraph by the start of its text.
func prefixes() cmp.Option {
	return cmp.FilterPath(func(p cmp.Path) bool {
		s := p.String()
		return s == "scrollTo" || s == "selectTxt"
	}, cmp.Comparer(func(a, b string) bool {
		return a == b || (a != "" && b != "" && (strings.HasPrefix(a, b) || strings.HasPrefix(b, a)))
	}))
}

func TestDecideIsDeterministic(t *testing.T) {
	st := parsed(t, "top")
	first := Decide("Which phones are from Samsung?", st, map[string]bool{ReplyTool: true})
	for range 20 {
		if got := Decide("Which phones are from Samsung?", st, map[string]bool{ReplyTool: true}); !cmp.Equal(got, first) {
			t.Fatalf("second decision differs: %+v vs %+v", got, first)
		}
	}
}

func TestExtractValues(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]string
	}{
		{"my name is ada lovelace", map[string]string{"first": "Ada", "last": "Lovelace"}},
		{"fill in my name Ada Lovelace", map[string]string{"first": "Ada", "last": "Lovelace"}},
		{"fill in my name with grace hopper", map[string]string{"first": "Grace", "last": "Hopper"}},
		{"fill in my name and email", map[string]string{}},
		{"My name is Ada and my email is ADA@Example.com.", map[string]string{"first": "Ada", "email": "ada@example.com"}},
		{"first name Grace, last name Hopper", map[string]string{"first": "Grace", "last": "Hopper"}},
		{"email: mark at daily dot co", map[string]string{"email": "mark@daily.co"}},
		{"my email is not an address", map[string]string{}},
		{"phone number is +1 (555) 010-2030", map[string]string{"phone": "+1 (555) 010-2030"}},
		{"my phone is double five five oh one", map[string]string{"phone": "55501"}},
		{"12 years in the industry", map[string]string{"years": "12"}},
		{"I'm interested because of the team.", map[string]string{"why": "Of the team."}},
		{"where is the iPhone 17?", map[string]string{}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, extractValues(tc.in)); diff != "" {
			t.Errorf("extractValues(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// The brain is an llm.Provider: a user turn with a <ui_state> gets one
// reply call whose arguments a model could have written, whether the page
// comes after the user's words (Pipecat) or before them.
func TestStreamAnswersAUserTurnWithOneToolCall(t *testing.T) {
	user, state := llm.UserMessage("where is the iPhone 17?"), llm.DeveloperMessage(page(t, "top"))
	for _, order := range [][]frames.LLMMessage{{user, state}, {state, user}} {
		req := &frames.LLMContext{
			Messages: append([]frames.LLMMessage{llm.SystemMessage("You drive the page.")}, order...),
			Tools:    []frames.LLMTool{{Name: ReplyTool}, {Name: ResearchTool}},
		}
		streamOneReply(t, req)
	}
}

func streamOneReply(t *testing.T, req *frames.LLMContext) {
	t.Helper()
	var events []llm.Event
	for ev, err := range New().Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	if len(events) != 1 || events[0].Kind != llm.EventToolCall {
		t.Fatalf("events = %+v, want one tool call", events)
	}
	tc := events[0].ToolCall
	var args map[string]any
	if err := json.Unmarshal([]byte(tc.Arguments), &args); err != nil {
		t.Fatalf("arguments %q: %v", tc.Arguments, err)
	}
	if tc.Name != ReplyTool || tc.ID == "" || args["scroll_to"] != "e62" || args["answer"] == "" {
		t.Errorf("call = %+v, want reply with scroll_to e62 and an answer", tc)
	}
	if _, ok := args["fills"]; ok {
		t.Errorf("unused fields are sent: %s", tc.Arguments)
	}
}

func TestStreamStaysQuietAfterAToolResult(t *testing.T) {
	req := &frames.LLMContext{Messages: []frames.LLMMessage{
		llm.UserMessage("where is the iPhone 17?"),
		{Role: llm.RoleAssistant, ToolCalls: []frames.LLMToolCall{{ID: "c1", Name: ReplyTool, Arguments: "{}"}}},
		{Role: llm.RoleTool, ToolCallID: "c1", Content: "COMPLETED"},
	}}
	for ev, err := range New().Stream(context.Background(), req) {
		t.Fatalf("got %+v %v, want nothing", ev, err)
	}
}

func TestStreamWritesTextWithoutAReplyTool(t *testing.T) {
	req := &frames.LLMContext{Messages: []frames.LLMMessage{llm.UserMessage("hi")}}
	var text strings.Builder
	for ev, err := range New().Stream(context.Background(), req) {
		if err != nil || ev.Kind != llm.EventText {
			t.Fatalf("got %+v %v, want text", ev, err)
		}
		text.WriteString(ev.Text)
	}
	if !strings.HasPrefix(text.String(), "Hi!") {
		t.Errorf("text = %q", text.String())
	}
}

func TestStreamStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := &frames.LLMContext{Messages: []frames.LLMMessage{llm.UserMessage("hi")}}
	for ev, err := range New().Stream(ctx, req) {
		t.Fatalf("got %+v %v after cancel", ev, err)
	}
}

// A triple click selects past the paragraph's end, so the snapshot gives
// the article's ref; the brain still finds the paragraph by its text.
func TestExplainASelectionHeldByTheArticle(t *testing.T) {
	st := parsed(t, "article-selection")
	para := st.Find(st.SelectionRef)
	st.SelectionRef = para.Parent.Ref // the article region
	call := Decide("explain this", st, map[string]bool{ReplyTool: true})
	if !strings.HasPrefix(call.Answer(), "This part is about solving problems. In short: In the lab") {
		t.Errorf("answer = %q", call.Answer())
	}
}

// Whatever the user says, the brain answers with a call it can encode and
// never names a ref the page does not have.
func FuzzDecide(f *testing.F) {
	for _, s := range []string{
		"where is the iPhone 17?", "explain this", "my email is ada at example dot com and my phone is double five one",
		"Which phones are from Google?", "research the Mariana Trench", "submit", "what have I entered?",
		"where does it talk about camouflage?", "first name: Grace, surname Hopper, 7 years", "",
	} {
		f.Add(s)
	}
	pages := []*UIState{parsed(f, "top"), parsed(f, "form-filled"), parsed(f, "article-selection"), nil}
	offered := map[string]bool{ReplyTool: true, ResearchTool: true}
	f.Fuzz(func(t *testing.T, utterance string) {
		for _, st := range pages {
			call := Decide(utterance, st, offered)
			if _, err := json.Marshal(call.Args); err != nil {
				t.Fatalf("arguments do not encode: %v", err)
			}
			if call.Answer() == "" {
				t.Fatalf("no answer for %q", utterance)
			}
			r, ok := call.Args.(Reply)
			if !ok || st == nil {
				continue
			}
			refs := append(append(append([]string{r.ScrollTo, r.SelectText}, r.Highlight...), r.Click...), func() []string {
				var out []string
				for _, fl := range r.Fills {
					out = append(out, fl.Ref)
				}
				return out
			}()...)
			for _, ref := range refs {
				if ref != "" && st.Find(ref) == nil {
					t.Fatalf("%q: ref %q is not on the page", utterance, ref)
				}
			}
		}
	})
}
