package wire_test

import (
	"errors"
	"fmt"

	"github.com/framewire/framewire/transports/websocket/wire"
)

func ExampleAppendAudio() {
	pcm := make([]byte, 960) // 20 ms of 24 kHz mono, the client's player rate
	buf := make([]byte, 0, wire.AudioSize(len(pcm), 24000, 1))
	buf = wire.AppendAudio(buf[:0], pcm, 24000, 1) // reused for every frame: no allocation
	// 18 is the tag of Frame's audio field (2, bytes); 201 7 the varint
	// 969, the payload's length; 26 the tag of its PCM (3, bytes).
	fmt.Println(len(buf), "bytes, first", buf[:4])
	// Output: 972 bytes, first [18 201 7 26]
}

func ExampleDecoder_Decode() {
	var dec wire.Decoder // the default bounds
	msg := wire.AppendMessage(nil, []byte(`{"label":"rtvi-ai","type":"client-ready","id":"1","data":{}}`))
	f, err := dec.Decode(msg)
	fmt.Println(f.Kind, string(f.Data), err)

	_, err = dec.Decode(wire.AppendAudio(nil, []byte{0, 0}, 96000, 1))
	fmt.Println(errors.Is(err, wire.ErrAudioFormat), err)
	// Output:
	// message {"label":"rtvi-ai","type":"client-ready","id":"1","data":{}} <nil>
	// true wire: unsupported audio format: audio.sample_rate 96000 Hz, want 8000 to 48000
}
