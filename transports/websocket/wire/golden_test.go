package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update rewrites testdata/server-*.bin from the encoders; golden.mjs then
// reads them back with the browser client's code (testdata/README.md).
var update = flag.Bool("update", false, "rewrite testdata/server-*.bin")

// The server's golden frames: what the transport sends the browser, and
// frames it must not send, which the client refuses (refused is the
// error its deserialize throws).
var serverFrames = []struct {
	file    string
	frame   Frame
	refused string
}{
	{file: "server-audio-24k-mono.bin", frame: Frame{Kind: KindAudio, Audio: ramp(480, 5), SampleRate: 24000, Channels: 1}},
	{file: "server-audio-16k-mono.bin", frame: Frame{Kind: KindAudio, Audio: ramp(320, 6), SampleRate: 16000, Channels: 1}},
	{file: "server-audio-empty.bin", frame: Frame{Kind: KindAudio, SampleRate: 24000, Channels: 1}},
	{file: "server-message-bot-ready.bin", frame: Frame{Kind: KindMessage,
		Data: []byte(`{"label":"rtvi-ai","type":"bot-ready","id":"c0ffee00-0000-4000-8000-000000000001","data":{"version":"1.2.0","about":{"library":"framewire"}}}`)}},
	{file: "server-message-bot-output.bin", frame: Frame{Kind: KindMessage,
		Data: []byte(`{"label":"rtvi-ai","type":"bot-output","data":{"text":"Grüß dich, 世界 👋","spoken":true,"aggregated_by":"sentence"}}`)}},
	// PCM of an odd length is not 16-bit samples: the client cannot
	// make an Int16Array of it.
	{file: "server-refused-audio-odd.bin", frame: Frame{Kind: KindAudio, Audio: []byte{1, 2, 3}, SampleRate: 24000, Channels: 1},
		refused: "byte length of Int16Array should be a multiple of 2"},
	// The client reads audio and messages only.
	{file: "server-refused-text.bin", frame: Frame{Kind: KindText, Text: []byte("hello")}, refused: "Unknown frame kind"},
	{file: "server-refused-transcription.bin", frame: Frame{Kind: KindTranscription, Text: []byte("hello"), UserID: []byte("u")},
		refused: "Unknown frame kind"},
	// Pipecat's server sends this on an interruption; 1.7.1 does not know it.
	{file: "server-refused-interruption.bin", frame: Frame{Kind: KindInterruption, ID: 1, Name: []byte("InterruptionFrame#1")},
		refused: "Unknown frame kind"},
}

// encodeServerFrame encodes f as the transport would: its hot-path
// encoder for audio and messages, AppendFrame for the rest.
func encodeServerFrame(f *Frame) []byte {
	switch f.Kind {
	case KindAudio:
		return AppendAudio(nil, f.Audio, f.SampleRate, f.Channels)
	case KindMessage:
		return AppendMessage(nil, f.Data)
	}
	return AppendFrame(nil, f)
}

// ramp is n samples of the pattern golden.mjs uses, as little-endian
// bytes: both ends of the 16-bit range, so byte order and sign show.
func ramp(n, seed int) []byte {
	b := make([]byte, 2*n)
	for i := range n {
		s := int16((i*2731+seed*7919)%65536 - 32768)
		switch i {
		case n - 1:
			s = 32767
		case 0:
			s = -32768
		}
		binary.LittleEndian.PutUint16(b[2*i:], uint16(s))
	}
	return b
}

func TestTheServersFramesAreTheGoldenOnes(t *testing.T) {
	for _, sf := range serverFrames {
		got := encodeServerFrame(&sf.frame)
		path := filepath.Join("testdata", sf.file)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: encoded %x\ngolden     %x", sf.file, head(got), head(want))
		}
	}
}

// goldenFile is client.json or server.json as golden.mjs writes them.
type goldenFile struct {
	Package string `json:"package"`
	Vectors []struct {
		File        string          `json:"file"`
		Kind        string          `json:"kind"`
		PCM         string          `json:"pcm"`
		SampleRate  int             `json:"sample_rate"`
		NumChannels int             `json:"num_channels"`
		Data        string          `json:"data"`
		Message     json.RawMessage `json:"message"`
		Error       string          `json:"error"`
	} `json:"vectors"`
}

func readGolden(t *testing.T, name string) goldenFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if g.Package != "@pipecat-ai/websocket-transport@1.7.1" {
		t.Fatalf("%s was made by %s; rerun golden.mjs with the client e2e pins", name, g.Package)
	}
	if len(g.Vectors) == 0 {
		t.Fatalf("%s has no vectors", name)
	}
	return g
}

func TestTheBrowserClientReadsTheServersFrames(t *testing.T) {
	// server.json is what the client's own deserialize made of each
	// server-*.bin: the samples it plays, the message it dispatches, or
	// the error it throws at a frame the transport must not send.
	g := readGolden(t, "server.json")
	seen := map[string]bool{}
	for _, v := range g.Vectors {
		seen[v.File] = true
	}
	for _, sf := range serverFrames {
		if !seen[sf.file] {
			t.Errorf("server.json does not have %s; rerun golden.mjs", sf.file)
		}
	}
	byFile := map[string]int{}
	for i, sf := range serverFrames {
		byFile[sf.file] = i
	}
	for _, v := range g.Vectors {
		i, ok := byFile[v.File]
		if !ok {
			t.Errorf("server.json has %s, which the tests do not write", v.File)
			continue
		}
		sf := serverFrames[i]
		if sf.refused != "" {
			if v.Kind != "error" || v.Error != sf.refused {
				t.Errorf("%s: the client read a %q (error %q), want it refused with %q", v.File, v.Kind, v.Error, sf.refused)
			}
			continue
		}
		switch v.Kind {
		case "audio":
			got, err := hex.DecodeString(v.PCM)
			if err != nil {
				t.Fatal(err)
			}
			if sf.frame.Kind != KindAudio || !bytes.Equal(got, sf.frame.Audio) {
				t.Errorf("%s: the client played %x, want %x", v.File, head(got), head(sf.frame.Audio))
			}
		case "message":
			var got, want any
			if err := json.Unmarshal(v.Message, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(sf.frame.Data, &want); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s: the client read (-sent +read):\n%s", v.File, d)
			}
		default:
			t.Errorf("%s: the client read a %q (%s)", v.File, v.Kind, v.Error)
		}
	}
}

func TestDecodeReadsWhatTheBrowserClientSends(t *testing.T) {
	// client-*.bin are the client's own serializeAudio and
	// serializeMessage output; client.json says what went in.
	g := readGolden(t, "client.json")
	for _, v := range g.Vectors {
		t.Run(v.File, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", v.File))
			if err != nil {
				t.Fatal(err)
			}
			var want Frame
			switch v.Kind {
			case "audio":
				p, err := hex.DecodeString(v.PCM)
				if err != nil {
					t.Fatal(err)
				}
				// The client names its audio frames "audio" and leaves
				// the id at 0 (protobuf then leaves it out).
				want = Frame{Kind: KindAudio, Name: []byte("audio"), Audio: p, SampleRate: v.SampleRate, Channels: v.NumChannels}
			case "message":
				want = Frame{Kind: KindMessage, Data: []byte(v.Data)}
			default:
				t.Fatalf("kind %q", v.Kind)
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if d := diffFrames(want, got); d != "" {
				t.Errorf("Decode (-want +got):\n%s", d)
			}
			checkAgreesWithProto(t, b, got)
			// The client writes protobuf's canonical form, so encoding
			// what was decoded gives back its bytes exactly.
			if re := AppendFrame(nil, &got); !bytes.Equal(re, b) {
				t.Errorf("AppendFrame of the decoded frame = %x\nthe client wrote %x", head(re), head(b))
			}
			if v.Kind == "message" && !bytes.Equal(AppendMessage(nil, got.Data), b) {
				t.Errorf("AppendMessage of the client's data = %x, the client wrote %x", AppendMessage(nil, got.Data), b)
			}
		})
	}
}
