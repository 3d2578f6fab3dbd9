package main

import (
	"strconv"
	"testing"
)

// The benchmarks measure one session's pipeline per request, from the
// client's message entering the RTVI processor to the reply leaving for
// the transport.

func BenchmarkEchoRoundTrip(b *testing.B) {
	bot := startBot(b)
	bot.ready("2.1.0")
	msg := `{"label":"rtvi-ai","type":"client-message","id":"echo0001","data":{"t":"echo","d":{"x":1,"s":"héllo"}}}`
	b.ReportAllocs()
	for b.Loop() {
		bot.sendRaw(msg)
		bot.next(withID("echo0001"))
		bot.forget()
	}
}

func BenchmarkSnapshot60KB(b *testing.B) {
	bot := startBot(b)
	bot.ready("2.1.0")
	raw := `{"label":"rtvi-ai","type":"ui-snapshot","id":"bigsnap1","data":{"tree":` + bigPage("Heavy", 60_000) + `}}`
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		bot.sendRaw(raw)
		bot.next(ofType("server-message"))
		bot.forget()
	}
}

func BenchmarkSendText(b *testing.B) {
	bot := startBot(b)
	bot.ready("2.1.0")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		bot.send("send-text", "text"+strconv.Itoa(i), map[string]any{"content": "hello there, how are you", "options": map[string]any{}})
		bot.next(ofType("bot-llm-stopped"))
		bot.forget()
	}
}

func BenchmarkJobGroup(b *testing.B) {
	bot := startBot(b)
	bot.ready("2.1.0")
	b.ReportAllocs()
	for b.Loop() {
		bot.send("client-message", "group001", map[string]any{"t": "start-job-group", "d": map[string]any{"workers": []string{"a", "b", "c"}}})
		bot.next(func(m msg) bool { return m.Type == "ui-job-group" && m.data(b)["kind"] == "group_completed" })
		bot.forget()
	}
}
