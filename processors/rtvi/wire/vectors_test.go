package wire

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The golden tests: every vector of rtvi_vectors.json is checked. Client
// vectors are decoded to their typed model and re-encoded; server vectors
// are produced from the equivalent frame (through the observer) or call
// (through the processor) and compared as decoded JSON.

// clientModel is the typed data each client message type decodes to.
var clientModel = map[string]reflect.Type{
	TypeClientReady:           reflect.TypeFor[*ClientReady](),
	TypeClientMessage:         reflect.TypeFor[*ClientMessage](),
	TypeSendText:              reflect.TypeFor[*SendText](),
	TypeAppendToContext:       reflect.TypeFor[*AppendToContext](),
	TypeDisconnectBot:         reflect.TypeFor[*Empty](),
	TypeLLMFunctionCallResult: reflect.TypeFor[*FunctionCallResult](),
	TypeDTMF:                  reflect.TypeFor[*DTMF](),
	TypeRawAudio:              reflect.TypeFor[*RawAudio](),
	TypeRawAudioBatch:         reflect.TypeFor[*RawAudioBatch](),
	TypeUIEvent:               reflect.TypeFor[*UIEvent](),
	TypeUISnapshot:            reflect.TypeFor[*UISnapshot](),
	TypeUICancelJobGroup:      reflect.TypeFor[*UICancel](),
	TypeUICancelTask:          reflect.TypeFor[*UICancel](),
}

func TestClientVectorsDecodeAndReencode(t *testing.T) {
	n := 0
	for _, v := range loadVectors(t) {
		if v.Direction != "client->server" {
			continue
		}
		n++
		t.Run(v.Name, func(t *testing.T) {
			m, err := Decode(v.JSON)
			if v.Name == "envelope invalid (missing id) -> error" {
				var ee *EnvelopeError
				if !errors.As(err, &ee) {
					t.Fatalf("Decode error = %v, want an *EnvelopeError", err)
				}
				if !strings.HasPrefix(ee.Error(), "Invalid RTVI transport message: ") {
					t.Errorf("error text %q lacks the required prefix", ee.Error())
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			want, known := clientModel[m.Type]
			if !known {
				want = reflect.TypeFor[RawJSON]()
			}
			if got := reflect.TypeOf(m.Data); got != want {
				t.Errorf("data decoded to %v, want %v", got, want)
			}
			if d := diffJSON(decodeAny(t, v.JSON), decodeAny(t, m.Encode())); d != "" {
				t.Errorf("re-encoded message differs (-vector +encoded):\n%s", d)
			}
		})
	}
	if n != 27 {
		t.Errorf("checked %d client vectors, want 27", n)
	}
}

// TestClientVectorsTypedFields pins the typed values of the vectors whose
// shape is tricky: explicit nulls, text leaves, extras, both DTMF forms.
func TestClientVectorsTypedFields(t *testing.T) {
	decode := func(name string) Message {
		t.Helper()
		m, err := Decode(vectorByName(t, name).JSON)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return m
	}
	t.Run("client-ready with null about fields", func(t *testing.T) {
		d := decode("client-ready (eval harness; null about fields)").Data.(*ClientReady)
		if d.Version != "2.1.0" || d.About == nil || d.About.Library != "pipecat-evals" || d.About.LibraryVersion != "" {
			t.Errorf("got %+v (about %+v)", d, d.About)
		}
	})
	t.Run("client-ready with empty data has no version", func(t *testing.T) {
		d := decode("client-ready with empty data").Data.(*ClientReady)
		if d.Version != "" || d.About != nil {
			t.Errorf("got %+v", d)
		}
	})
	t.Run("send-text options", func(t *testing.T) {
		d := decode("send-text (text-only reply)").Data.(*SendText)
		if d.Options == nil || !d.Options.RunImmediately.Or(false) || d.Options.AudioResponse.Or(true) {
			t.Errorf("got %+v", d.Options)
		}
		if d := decode("send-text (minimal, from test)").Data.(*SendText); d.Options != nil {
			t.Errorf("minimal send-text has options %+v", d.Options)
		}
	})
	t.Run("dtmf both forms", func(t *testing.T) {
		if got := decode("dtmf (2.1.0 buttons)").Data.(*DTMF).Keys(); !reflect.DeepEqual(got, []string{"1", "2", "3", "#"}) {
			t.Errorf("buttons: %q", got)
		}
		if got := decode("dtmf (2.0.x legacy single button)").Data.(*DTMF).Keys(); !reflect.DeepEqual(got, []string{"#"}) {
			t.Errorf("button: %q", got)
		}
	})
	t.Run("snapshot from client-js", func(t *testing.T) {
		s := decode("ui-snapshot (as client-js sends it)").Data.(*UISnapshot).Tree
		if s.CapturedAt != 1752494400123 || s.Selection == nil || s.Selection.Text != "First" || s.Selection.StartOffset != nil {
			t.Errorf("snapshot fields: %+v %+v", s, s.Selection)
		}
		main := &s.Root.Children[0]
		leaf := main.Children[2]
		if leaf.Ref != "" || leaf.Role != "text" || leaf.Name != "Interstitial copy" {
			t.Errorf("text leaf = %+v", leaf)
		}
		heading := s.Find("e3")
		if heading == nil || !heading.Has(FieldLevel) || heading.Level != 1 || heading.Has(FieldChildren) {
			t.Errorf("heading = %+v", heading)
		}
		grid := s.Find("e14")
		if grid == nil || grid.ColCount != 8 || grid.RowCount != 2 {
			t.Errorf("grid = %+v", grid)
		}
	})
	t.Run("snapshot with explicit nulls", func(t *testing.T) {
		s := decode("ui-snapshot (PY test, with explicit nulls)").Data.(*UISnapshot).Tree
		if s.Root.Has(FieldName) || s.Root.Has(FieldLevel) || len(s.Root.Children) != 1 {
			t.Errorf("root = %+v", s.Root)
		}
		if s.Selection.StartOffset == nil || *s.Selection.StartOffset != 0 || *s.Selection.EndOffset != 4 {
			t.Errorf("selection = %+v", s.Selection)
		}
	})
	t.Run("snapshot extras are kept in order", func(t *testing.T) {
		s := decode("ui-snapshot with unknown/future fields").Data.(*UISnapshot).Tree
		if len(s.Extra) != 1 || s.Extra[0].Key != "viewport" {
			t.Errorf("snapshot extras = %v", s.Extra)
		}
		if len(s.Root.Extra) != 1 || s.Root.Extra[0].Key != "bounds" ||
			diffJSON(decodeAny(t, s.Root.Extra[0].Value), obj{"x": 1.0, "y": 2.0}) != "" {
			t.Errorf("root extras = %v", s.Root.Extra)
		}
		if len(s.Selection.Extra) != 1 || s.Selection.Extra[0].Key != "direction" {
			t.Errorf("selection extras = %v", s.Selection.Extra)
		}
	})
	t.Run("cancel vocabularies", func(t *testing.T) {
		jg := decode("ui-cancel-job-group").Data.(*UICancel)
		task := decode("ui-cancel-task (RTVI 1.3.0 only)").Data.(*UICancel)
		if *jg != (UICancel{TaskID: "t-99", Reason: "user", Vocabulary: VocabularyJobGroup}) ||
			*task != (UICancel{TaskID: "t-99", Reason: "user", Vocabulary: VocabularyTask}) {
			t.Errorf("job group %+v, task %+v", jg, task)
		}
	})
}

// jsQuirks are the server vectors copied from JS tests whose shape the
// server never sends (an id on a push, args instead of arguments, a
// stub's bot-ready): they decode, but need not re-encode verbatim.
var jsQuirks = map[string]bool{
	"llm-function-call-in-progress as in the JS test": true,
}

func TestServerVectorsDecodeAndReencode(t *testing.T) {
	for _, v := range loadVectors(t) {
		if v.Direction != "server->client" {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			m, err := DecodeServerMessage(v.JSON)
			if err != nil {
				t.Fatalf("DecodeServerMessage: %v", err)
			}
			if jsQuirks[v.Name] {
				return
			}
			if d := diffJSON(decodeAny(t, v.JSON), decodeAny(t, m.Encode())); d != "" {
				t.Errorf("re-encoded message differs (-vector +encoded):\n%s", d)
			}
		})
	}
}

func TestDecodeServerMessageTypes(t *testing.T) {
	m, err := DecodeServerMessage(vectorByName(t, "ui-task task_completed (RTVI 1.3.0)").JSON)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := m.Data.(*UITask)
	if !ok || d.Vocabulary != VocabularyTask {
		t.Fatalf("data %#v", m.Data)
	}
	if e, ok := d.Event.(TaskCompleted); !ok || e.TaskID != "t-1" || e.AgentName != "a" || e.Status != StatusCompleted || e.At != 44 {
		t.Errorf("event %#v", d.Event)
	}
	m, err = DecodeServerMessage(vectorByName(t, "bot-output v2: progress in-progress").JSON)
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := m.Data.(*BotOutput); !ok || b.Spoken != OptUnset || b.SegmentID != 1 || b.SpokenProgress.AccumulatedText != "Hello" {
		t.Errorf("bot-output %#v", m.Data)
	}
	// A ui-job-group envelope with task names is rejected.
	_, err = DecodeServerMessage([]byte(`{"label":"rtvi-ai","type":"ui-job-group","data":{"kind":"task_update","task_id":"t","agent_name":"a","at":1}}`))
	var de *DataError
	if !errors.As(err, &de) {
		t.Errorf("mixed vocabulary: err = %v", err)
	}
}
