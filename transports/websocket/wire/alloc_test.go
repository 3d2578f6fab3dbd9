package wire

import "testing"

func TestTheHotPathDoesNotAllocate(t *testing.T) {
	p := pcm(960) // 20 ms at 24 kHz mono, what the transport sends
	buf := make([]byte, 0, AudioSize(len(p), 24000, 1))
	audio := AppendAudio(nil, pcm(512), 16000, 1) // what the browser sends
	data := []byte(`{"label":"rtvi-ai","type":"client-ready","id":"1","data":{}}`)
	msg := AppendMessage(nil, data)
	var sink Frame
	var dec Decoder
	for name, run := range map[string]func(){
		"AppendAudio":    func() { buf = AppendAudio(buf[:0], p, 24000, 1) },
		"AppendMessage":  func() { buf = AppendMessage(buf[:0], data) },
		"AppendFrame":    func() { buf = AppendFrame(buf[:0], &everyKind[1]) },
		"Decode audio":   func() { sink, _ = dec.Decode(audio) },
		"Decode message": func() { sink, _ = Decode(msg) },
	} {
		if n := testing.AllocsPerRun(100, run); n != 0 {
			t.Errorf("%s: %v allocations, want 0", name, n)
		}
	}
	if sink.Kind == 0 {
		t.Fatal("nothing decoded")
	}
}

func BenchmarkAppendAudio(b *testing.B) {
	p := pcm(960)
	buf := make([]byte, 0, AudioSize(len(p), 24000, 1))
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendAudio(buf[:0], p, 24000, 1)
	}
}

func BenchmarkDecodeAudio(b *testing.B) {
	in := AppendFrame(nil, &Frame{Kind: KindAudio, Name: []byte("audio"), Audio: pcm(512), SampleRate: 16000, Channels: 1})
	var dec Decoder
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := dec.Decode(in); err != nil {
			b.Fatal(err)
		}
	}
}
