package silero

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// DecodeModel refuses a valid ONNX file whose graph differs from the one
// the forward pass implements, saying what differs.
func TestDecodeModelUnexpectedGraph(t *testing.T) {
	testModel(t) // skips without the file
	path, _ := DefaultModelPath()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ from, to, want string }{
		{`"reflect"`, `"reflecT"`, "the STFT pad is not reflect"},
		{"stft.forward_basis_buffer", "stft.forward_basis_buffeR", "no constant stft.forward_basis_buffer"},
		{"decoder.rnn.weight_hh", "decoder.rnn.weight_hH", "no constant decoder.rnn.weight_hh"},
		{"/encoder/2/reparam_conv/Conv", "/encoder/2/reparam_conv/Cnv_", "no Conv node /encoder/2/reparam_conv/Conv"},
		{"stateN", "stateX", "graph inputs"},
	} {
		from := strings.Trim(tc.from, `"`)
		to := strings.Trim(tc.to, `"`)
		if !bytes.Contains(data, []byte(from)) {
			t.Fatalf("the model has no %q", from)
		}
		_, err := DecodeModel(bytes.ReplaceAll(data, []byte(from), []byte(to)))
		if !errors.Is(err, ErrUnexpectedGraph) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s -> %s: %v, want ErrUnexpectedGraph with %q", from, to, err, tc.want)
		}
	}
	if _, err := DecodeModel(data[:len(data)/2]); err == nil {
		t.Error("half a model decoded")
	}
}

func TestDecodeModelNotONNX(t *testing.T) {
	// A ModelProto whose graph has one input called x.
	minimal := []byte("\x3a\x05\x5a\x03\x0a\x01x")
	if _, err := DecodeModel(minimal); !errors.Is(err, ErrUnexpectedGraph) {
		t.Errorf("minimal graph: %v, want ErrUnexpectedGraph", err)
	}
	if _, err := DecodeModel([]byte("PK\x03\x04 a zip file")); err == nil {
		t.Error("a zip file decoded")
	}
}

func FuzzDecodeModel(f *testing.F) {
	f.Add([]byte("\x3a\x05\x5a\x03\x0a\x01x"))
	f.Add([]byte("\x3a\x13\x5a\x07\x0a\x05input\x5a\x07\x0a\x05state\x5a\x04\x0a\x02sr"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeModel(data)
		if err == nil && (m.k16 == nil || m.k8 == nil) {
			t.Fatal("decoded a model without both branches")
		}
	})
}

func BenchmarkLoadModel(b *testing.B) {
	testModel(b)
	path, _ := DefaultModelPath()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for range b.N {
		if _, err := DecodeModel(data); err != nil {
			b.Fatal(err)
		}
	}
}
