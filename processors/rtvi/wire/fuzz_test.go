package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// seedMessages adds every client vector, the tree of every snapshot
// vector, and a few hostile inputs.
func seedMessages(f *testing.F) {
	for _, v := range loadVectors(f) {
		if v.Direction == "client->server" {
			f.Add([]byte(v.JSON))
		}
	}
	for _, s := range []string{
		`{this is not json`, `ping: 123`, `[]`, `null`, `"rtvi-ai"`, `{}`,
		`{"label":"rtvi-ai"}`, `{"label":"rtvi-ai","type":1,"id":"1"}`,
		`{"label":"rtvi-ai","type":"ui-snapshot","id":"1","data":{"tree":{"root":{"ref":"","role":"text","children":[{"ref":"\ud83d\ude00","role":"x"}]},"captured_at":1e3}}}`,
		`{"label":"rtvi-ai","type":"dtmf","id":"1","data":{"buttons":["\u0031"]}}`,
		`{"label":"rtvi-ai","type":"send-text","id":"1","data":{"content":"\ud800","options":null}}`,
		strings.Repeat("[", 600) + strings.Repeat("]", 600),
	} {
		f.Add([]byte(s))
	}
}

// FuzzDecode checks the inbound parser: it never panics, every input is
// classified (message, envelope error, data error, not RTVI, not JSON),
// what it accepts is JSON, and a decoded message re-encodes to something
// that decodes to the same encoding.
func FuzzDecode(f *testing.F) {
	seedMessages(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		var (
			envErr  *EnvelopeError
			dataErr *DataError
		)
		switch {
		case err == nil:
			if !json.Valid(b) {
				t.Fatalf("accepted invalid JSON %q", b)
			}
			enc := m.Encode()
			if !json.Valid(enc) {
				t.Fatalf("encoded invalid JSON %s from %q", enc, b)
			}
			m2, err := Decode(enc)
			if err != nil {
				t.Fatalf("re-decoding %s: %v", enc, err)
			}
			if enc2 := m2.Encode(); !bytes.Equal(enc, enc2) {
				t.Fatalf("not stable:\n%s\n%s", enc, enc2)
			}
		case errors.Is(err, ErrInvalidJSON):
			if json.Valid(b) && utf8.Valid(b) && bytes.Count(b, []byte("["))+bytes.Count(b, []byte("{")) < maxDepth {
				t.Fatalf("rejected valid JSON %q: %v", b, err)
			}
		case errors.Is(err, ErrNotRTVI):
		case errors.As(err, &envErr):
			if !strings.HasPrefix(err.Error(), "Invalid RTVI transport message: ") {
				t.Fatalf("envelope error text %q", err)
			}
		case errors.As(err, &dataErr):
			if dataErr.Type != m.Type || dataErr.ID != m.ID || !strings.HasPrefix(err.Error(), "Invalid message: ") {
				t.Fatalf("data error %+v for %+v", dataErr, m)
			}
		default:
			t.Fatalf("unclassified error %T: %v", err, err)
		}
	})
}

// FuzzDecodeSnapshot checks the snapshot decoder: no panic, and an
// accepted snapshot encodes to JSON that decodes to the same encoding.
func FuzzDecodeSnapshot(f *testing.F) {
	for _, v := range loadVectors(f) {
		var m struct {
			Type string `json:"type"`
			Data struct {
				Tree json.RawMessage `json:"tree"`
			} `json:"data"`
		}
		if json.Unmarshal(v.JSON, &m) == nil && m.Type == TypeUISnapshot {
			f.Add([]byte(m.Data.Tree))
		}
	}
	f.Add(bigSnapshot(6))
	f.Add([]byte(`{"root":{"ref":"e1","role":"generic","children":[{"ref":"","role":"text","name":"x","level":1.0,"state":null}]},"captured_at":-0}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeSnapshot(b)
		if err != nil {
			return
		}
		enc := s.AppendJSON(nil)
		if !json.Valid(enc) {
			t.Fatalf("encoded invalid JSON %s", enc)
		}
		s2, err := DecodeSnapshot(enc)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", enc, err)
		}
		if enc2 := s2.AppendJSON(nil); !bytes.Equal(enc, enc2) {
			t.Fatalf("not stable:\n%s\n%s", enc, enc2)
		}
		// The tree is walkable whatever its shape.
		n := 0
		s.Root.Walk(func(*Node, int) bool { n++; return true })
		if n == 0 {
			t.Fatal("walk visited nothing")
		}
	})
}

// FuzzDecodeServerMessage checks the server-message decoder (used by Go
// clients): no panic, and accepted messages encode stably.
func FuzzDecodeServerMessage(f *testing.F) {
	for _, v := range loadVectors(f) {
		if v.Direction == "server->client" {
			f.Add([]byte(v.JSON))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeServerMessage(b)
		if err != nil {
			return
		}
		enc := m.Encode()
		m2, err := DecodeServerMessage(enc)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", enc, err)
		}
		if enc2 := m2.Encode(); !bytes.Equal(enc, enc2) {
			t.Fatalf("not stable:\n%s\n%s", enc, enc2)
		}
	})
}
