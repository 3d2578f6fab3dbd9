package wire

import (
	"strings"
	"testing"
)

func TestPeekIDFindsTheIDOfRTVIMessagesOnly(t *testing.T) {
	big := strings.Repeat("x", 100<<10)
	for _, tc := range []struct {
		msg, id string
		ok      bool
	}{
		{`{"label":"rtvi-ai","type":"client-message","id":"abc12345","data":{"t":"echo"}}`, "abc12345", true},
		// pipecat client-js writes label, type, data, then id.
		{`{"label":"rtvi-ai","type":"send-text","data":{"content":"` + big + `"},"id":"last"}`, "last", true},
		{`{"id":"first","label":"rtvi-ai","data":{"a":[1,2,{"b":null}]}}`, "first", true},
		{` {"id":"a\u0062","label":"rtvi-ai"}`, "ab", true},
		{`{"label":"rtvi-ai","data":{"s":"a\"b\\","t":"\\\"}\"x"},"id":"esc"}`, "esc", true}, // escaped quotes and backslashes
		{`{"label":"rtvi-ai","data":"\\","id":"z"}`, "z", true},
		{`{"label":"rtvi-ai","data":"unterminated \"}`, "", false},
		{`{"label":"other","id":"x"}`, "", false},
		{`{"label":"rtvi-ai","type":"x"}`, "", false},
		{`{"label":"rtvi-ai","id":7}`, "", false},
		{`{"label":7,"id":"x"}`, "", false},
		{`{"label":"rtvi-ai","data":{"unterminated":`, "", false},
		{`[1,2]`, "", false},
		{`ping: 1`, "", false},
		{``, "", false},
	} {
		id, ok := PeekID([]byte(tc.msg))
		if id != tc.id || ok != tc.ok {
			t.Errorf("PeekID(%.60s) = %q, %v; want %q, %v", tc.msg, id, ok, tc.id, tc.ok)
		}
	}
}

// Whatever the input, PeekID agrees with Decode on the id of a message
// Decode accepts, and never panics.
func FuzzPeekID(f *testing.F) {
	f.Add([]byte(`{"label":"rtvi-ai","type":"client-message","id":"abc","data":{"t":"echo"}}`))
	f.Add([]byte(`{"id":"x","label":"rtvi-ai"}`))
	f.Add([]byte(`{"label":"rtvi-ai","id":"\ud83d\ude00"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, ok := PeekID(b)
		m, err := Decode(b)
		if err == nil && (!ok || id != m.ID) {
			t.Fatalf("Decode found id %q, PeekID %q, %v", m.ID, id, ok)
		}
	})
}

func BenchmarkPeekIDAfterLargeData(b *testing.B) {
	msg := []byte(`{"label":"rtvi-ai","type":"send-text","data":{"content":"` + strings.Repeat("x", 64<<10) + `"},"id":"last"}`)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		PeekID(msg)
	}
}
