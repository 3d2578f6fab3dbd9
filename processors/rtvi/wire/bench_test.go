package wire

import (
	"fmt"
	"strings"
	"testing"
)

// bigSnapshot returns the JSON of a snapshot of n nodes shaped like what
// the JS walker sends for a long form page: sections of headings,
// paragraphs, text and textareas holding long values; about 300 bytes
// per node (200 nodes is about 60 KB).
func bigSnapshot(n int) []byte {
	var sb strings.Builder
	ref := 1
	next := func() string { ref++; return fmt.Sprintf("e%d", ref) }
	words := "Lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua"
	name := func(i int) string { return strings.ToUpper(words[:1]) + words[1:90] + fmt.Sprintf(" %d", i) }
	sb.WriteString(`{"root":{"ref":"e1","role":"generic","children":[`)
	count := 1
	for s := 0; count < n; s++ {
		if s > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"ref":%q,"role":"region","name":%q,"children":[`, next(), name(s))
		count++
		for i := 0; i < 9 && count < n; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			switch i % 4 {
			case 0:
				fmt.Fprintf(&sb, `{"ref":%q,"role":"heading","name":%q,"level":2}`, next(), name(i))
			case 1:
				fmt.Fprintf(&sb, `{"ref":%q,"role":"paragraph","name":%q}`, next(), name(i)+" "+words[:60])
			case 2:
				fmt.Fprintf(&sb, `{"ref":%q,"role":"textbox","name":%q,"value":%q,"state":["focused","offscreen"]}`, next(), name(i), words+" "+words+" "+words+" "+words+" "+words[:60])
			case 3:
				fmt.Fprintf(&sb, `{"ref":"","role":"text","name":%q}`, name(i)+" "+words[:80])
			}
			count++
		}
		sb.WriteString(`]}`)
	}
	sb.WriteString(`]},"captured_at":1752494400123,"selection":{"ref":"e4","text":"Lorem ipsum"},"viewport":{"width":1280,"height":800}}`)
	return []byte(sb.String())
}

// BenchmarkDecodeSnapshot decodes a 200-node, ~60 KB snapshot (target:
// under 1 ms).
func BenchmarkDecodeSnapshot(b *testing.B) {
	data := bigSnapshot(200)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeSnapshot(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeUISnapshotMessage decodes the whole ui-snapshot message
// (envelope check, JSON validation, snapshot).
func BenchmarkDecodeUISnapshotMessage(b *testing.B) {
	data := []byte(`{"label":"rtvi-ai","type":"ui-snapshot","id":"big","data":{"tree":` + string(bigSnapshot(200)) + `}}`)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeSnapshot(b *testing.B) {
	s, err := DecodeSnapshot(bigSnapshot(200))
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 70_000)
	b.ReportAllocs()
	for b.Loop() {
		buf = s.AppendJSON(buf[:0])
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkEncodeBotLLMText encodes one bot-llm-text message into a new
// buffer (target: under 2 µs, at most 2 allocations).
func BenchmarkEncodeBotLLMText(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = EncodeTextMessage(TypeBotLLMText, " sunny")
	}
}

func BenchmarkDecodeSendText(b *testing.B) {
	data := []byte(`{"label":"rtvi-ai","type":"send-text","id":"5e6f7a8b","data":{"content":"What's the weather?","options":{}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
