package silero

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/framewire/framewire/onnx"
)

// ModelSHA256 is the SHA-256 of the silero_vad_v5.onnx this package was
// written and checked against: the file shipped in dist/ of the npm package
// @ricky0123/vad-web 0.0.31 (and 0.0.30). [LoadModel] refuses any other file.
const ModelSHA256 = "2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f"

// ModelEnv is the environment variable that overrides [DefaultModelPath].
const ModelEnv = "FRAMEWIRE_SILERO_MODEL"

// ModelFile is the model's file name in the cache folder.
const ModelFile = "silero_vad_v5.onnx"

// maxModelFile bounds what LoadModel reads; the real file is 2.3 MB.
const maxModelFile = 16 << 20

// DefaultModelPath returns where the model is looked for when no path is
// given: $FRAMEWIRE_SILERO_MODEL if set, else framewire/silero_vad_v5.onnx in
// the user's cache folder ($XDG_CACHE_HOME or ~/.cache on Linux,
// ~/Library/Caches on macOS), where fetch-model.sh puts it.
func DefaultModelPath() (string, error) {
	if p := os.Getenv(ModelEnv); p != "" {
		return p, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("silero: no model path: set %s or a cache folder: %w", ModelEnv, err)
	}
	return filepath.Join(dir, "framewire", ModelFile), nil
}

// Model holds the weights of Silero VAD v5 for 16 kHz and 8 kHz. It is
// read-only once loaded: one Model serves any number of [Scorer]s and
// goroutines.
type Model struct {
	k16, k8 *branch
}

// branch is the network for one sample rate: the If branch of the ONNX graph
// that runs when sr equals (16 kHz) or differs from (8 kHz) 16000.
type branch struct {
	rate    int
	window  int // new samples per call
	context int // samples carried over from the previous call
	pad     int // reflected samples appended on the right
	kernel  int // STFT length (n_fft)
	hop     int
	bins    int // kernel/2 + 1
	frames  int // STFT frames per call

	fft   *fft // replaces the basis convolution
	enc   [4]conv
	lstmW []float32 // [4*hidden][2*hidden]: weight_ih and weight_hh side by side, gates i f g o
	lstmB []float32 // [4*hidden]: bias_ih + bias_hh
	outW  []float32 // [hidden]
	outB  float32
}

// conv is a Conv1d with kernel 3 and padding 1; w is [out][in*3].
type conv struct {
	in, out, stride int
	w, b            []float32
}

const (
	hidden     = 128
	convKernel = 3
)

// encoder channel counts and strides, the same for both rates.
var encoderShape = [4]struct{ out, stride int }{{128, 1}, {64, 2}, {64, 2}, {128, 1}}

var (
	cacheMu sync.Mutex
	cache   = map[string]*Model{}
)

// LoadModel reads, checks (SHA-256 against [ModelSHA256]) and decodes the
// model file at path; an empty path means [DefaultModelPath]. Models are
// cached by path for the life of the process, so every session shares one
// copy of the weights (about 1.5 MB).
func LoadModel(path string) (*Model, error) {
	if path == "" {
		p, err := DefaultModelPath()
		if err != nil {
			return nil, err
		}
		path = p
	}
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if m := cache[path]; m != nil {
		return m, nil
	}
	data, err := readModel(path)
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != ModelSHA256 {
		return nil, fmt.Errorf("silero: %s has SHA-256 %x, want %s (silero_vad_v5.onnx from @ricky0123/vad-web 0.0.31; run processors/audio/silero/fetch-model.sh)", path, sum, ModelSHA256)
	}
	m, err := DecodeModel(data)
	if err != nil {
		return nil, fmt.Errorf("silero: %s: %w", path, err)
	}
	cache[path] = m
	return m, nil
}

func readModel(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("silero: no model at %s (run processors/audio/silero/fetch-model.sh, or set %s): %w", path, ModelEnv, err)
		}
		return nil, fmt.Errorf("silero: open model: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxModelFile+1))
	if err != nil {
		return nil, fmt.Errorf("silero: read %s: %w", path, err)
	}
	if len(data) > maxModelFile {
		return nil, fmt.Errorf("silero: %s is over %d bytes; not a Silero VAD model", path, maxModelFile)
	}
	return data, nil
}

// DecodeModel decodes a Silero VAD v5 ONNX file and checks that its graph is
// the one the Go forward pass implements: sr selects a 16 kHz or an 8 kHz
// branch, each a reflect pad, an STFT convolution, four Conv1d+ReLU
// encoder layers, an LSTM cell of 128 and a Conv1d+Sigmoid head. It does
// not check the SHA-256; [LoadModel] does.
func DecodeModel(data []byte) (*Model, error) {
	om, err := onnx.Decode(data)
	if err != nil {
		return nil, err
	}
	g := om.Graph
	if !slices.Equal(g.Inputs, []string{"input", "state", "sr"}) || !slices.Equal(g.Outputs, []string{"output", "stateN"}) {
		return nil, unexpected("graph inputs %v and outputs %v, want [input state sr] and [output stateN]", g.Inputs, g.Outputs)
	}
	// The top level is: Constant 16000, Equal(sr, it), If(then: 16 kHz, else: 8 kHz).
	var ifNode *onnx.Node
	var rateConst string
	for _, n := range g.Nodes {
		switch n.OpType {
		case "Constant":
			if t := constValue(n); t != nil && len(t.Ints) == 1 && t.Ints[0] == 16000 {
				rateConst = n.Outputs[0]
			}
		case "Equal":
			if len(n.Inputs) != 2 || n.Inputs[0] != "sr" || n.Inputs[1] != rateConst || rateConst == "" {
				return nil, unexpected("top-level Equal %v, want sr == 16000", n.Inputs)
			}
		case "If":
			if ifNode != nil {
				return nil, unexpected("two top-level If nodes")
			}
			ifNode = n
		}
	}
	if ifNode == nil {
		return nil, unexpected("no top-level If on the sample rate")
	}
	then, els := ifNode.Attr("then_branch"), ifNode.Attr("else_branch")
	if then == nil || then.G == nil || els == nil || els.G == nil {
		return nil, unexpected("the sample-rate If has no then and else graphs")
	}
	m := &Model{}
	if m.k16, err = decodeBranch(then.G, 16000); err != nil {
		return nil, err
	}
	if m.k8, err = decodeBranch(els.G, 8000); err != nil {
		return nil, err
	}
	return m, nil
}

func decodeBranch(g *onnx.Graph, rate int) (*branch, error) {
	b := &branch{rate: rate, frames: 4}
	switch rate {
	case 16000:
		b.window, b.context, b.pad, b.kernel, b.hop = 512, 64, 64, 256, 128
	default:
		b.window, b.context, b.pad, b.kernel, b.hop = 256, 32, 32, 128, 64
	}
	b.bins = b.kernel/2 + 1
	where := fmt.Sprintf("%d Hz branch", rate)

	consts := map[string]*onnx.Tensor{}
	nodes := map[string]*onnx.Node{}
	var walk func(*onnx.Graph)
	walk = func(g *onnx.Graph) {
		for _, n := range g.Nodes {
			if i := strings.LastIndex(n.Name, "__"); i >= 0 {
				nodes[n.Name[i+2:]] = n
			}
			if t := constValue(n); t != nil && t.Name != "" {
				consts[t.Name] = t
			}
			for _, a := range n.Attrs {
				if a.G != nil {
					walk(a.G)
				}
			}
		}
	}
	walk(g)
	weight := func(name string, dims ...int64) ([]float32, error) {
		t := consts[name]
		if t == nil {
			return nil, unexpected("%s: no constant %s", where, name)
		}
		if t.DataType != onnx.Float || !slices.Equal(t.Dims, dims) {
			return nil, unexpected("%s: %s has type %d dims %v, want float %v", where, name, t.DataType, t.Dims, dims)
		}
		return t.Floats, nil
	}
	node := func(name, op string) (*onnx.Node, error) {
		n := nodes[name]
		if n == nil || n.OpType != op {
			return nil, unexpected("%s: no %s node %s", where, op, name)
		}
		return n, nil
	}
	checkConv := func(name string, kernel, stride, pad int64) error {
		n, err := node(name, "Conv")
		if err != nil {
			return err
		}
		for _, want := range []struct {
			attr string
			v    []int64
		}{{"kernel_shape", []int64{kernel}}, {"strides", []int64{stride}}, {"pads", []int64{pad, pad}}, {"dilations", []int64{1}}} {
			if a := n.Attr(want.attr); a == nil || !slices.Equal(a.Ints, want.v) {
				return unexpected("%s: %s %s is not %v", where, name, want.attr, want.v)
			}
		}
		if a := n.Attr("group"); a != nil && a.I != 1 {
			return unexpected("%s: %s group %d", where, name, a.I)
		}
		return nil
	}

	// Reflect padding of the input on the right.
	pad, err := node("/stft/padding/Pad", "Pad")
	if err != nil {
		return nil, err
	}
	if a := pad.Attr("mode"); a == nil || string(a.S) != "reflect" {
		return nil, unexpected("%s: the STFT pad is not reflect", where)
	}
	amount, err := node("/stft/padding/Constant_1", "Constant")
	if err != nil {
		return nil, err
	}
	if t := constValue(amount); t == nil || !slices.Equal(t.Ints, []int64{0, int64(b.pad)}) {
		return nil, unexpected("%s: STFT padding is not [0 %d]", where, b.pad)
	}
	// STFT as a convolution with a fixed basis, then magnitude.
	if err := checkConv("/stft/Conv", int64(b.kernel), int64(b.hop), 0); err != nil {
		return nil, err
	}
	if _, err := node("/stft/Sqrt", "Sqrt"); err != nil {
		return nil, err
	}
	basis, err := weight("stft.forward_basis_buffer", int64(2*b.bins), 1, int64(b.kernel))
	if err != nil {
		return nil, err
	}
	if b.fft, err = newFFT(basis, b.kernel); err != nil {
		return nil, unexpected("%s: %v", where, err)
	}
	in := b.bins
	for i, s := range encoderShape {
		name := fmt.Sprintf("encoder.%d.reparam_conv.", i)
		if err := checkConv(fmt.Sprintf("/encoder/%d/reparam_conv/Conv", i), convKernel, int64(s.stride), 1); err != nil {
			return nil, err
		}
		if _, err := node(fmt.Sprintf("/encoder/%d/activation/Relu", i), "Relu"); err != nil {
			return nil, err
		}
		c := conv{in: in, out: s.out, stride: s.stride}
		if c.w, err = weight(name+"weight", int64(s.out), int64(in), convKernel); err != nil {
			return nil, err
		}
		if c.b, err = weight(name+"bias", int64(s.out)); err != nil {
			return nil, err
		}
		b.enc[i] = c
		in = s.out
	}
	// LSTM cell: PyTorch's gate order i, f, g, o in the weights.
	lstm, err := node("/decoder/rnn/LSTM", "LSTM")
	if err != nil {
		return nil, err
	}
	if a := lstm.Attr("hidden_size"); a == nil || a.I != hidden {
		return nil, unexpected("%s: LSTM hidden_size is not %d", where, hidden)
	}
	wih, err := weight("decoder.rnn.weight_ih", 4*hidden, hidden)
	if err != nil {
		return nil, err
	}
	whh, err := weight("decoder.rnn.weight_hh", 4*hidden, hidden)
	if err != nil {
		return nil, err
	}
	bih, err := weight("decoder.rnn.bias_ih", 4*hidden)
	if err != nil {
		return nil, err
	}
	bhh, err := weight("decoder.rnn.bias_hh", 4*hidden)
	if err != nil {
		return nil, err
	}
	b.lstmW = make([]float32, 4*hidden*2*hidden)
	b.lstmB = make([]float32, 4*hidden)
	for r := range 4 * hidden {
		copy(b.lstmW[r*2*hidden:], wih[r*hidden:(r+1)*hidden])
		copy(b.lstmW[r*2*hidden+hidden:], whh[r*hidden:(r+1)*hidden])
		b.lstmB[r] = bih[r] + bhh[r]
	}
	// Head: ReLU, Conv1d 128 -> 1, Sigmoid, mean over time.
	if _, err := node("/decoder/decoder/1/Relu", "Relu"); err != nil {
		return nil, err
	}
	if err := checkConv("/decoder/decoder/2/Conv", 1, 1, 0); err != nil {
		return nil, err
	}
	if _, err := node("/decoder/decoder/3/Sigmoid", "Sigmoid"); err != nil {
		return nil, err
	}
	if b.outW, err = weight("decoder.decoder.2.weight", 1, hidden, 1); err != nil {
		return nil, err
	}
	ob, err := weight("decoder.decoder.2.bias", 1)
	if err != nil {
		return nil, err
	}
	b.outB = ob[0]
	return b, nil
}

// constValue returns the value tensor of a Constant node, or nil.
func constValue(n *onnx.Node) *onnx.Tensor {
	if n.OpType != "Constant" || len(n.Outputs) != 1 {
		return nil
	}
	if a := n.Attr("value"); a != nil {
		return a.T
	}
	return nil
}

// ErrUnexpectedGraph is wrapped by the errors of [DecodeModel] for a valid
// ONNX file whose graph is not Silero VAD v5's.
var ErrUnexpectedGraph = errors.New("not the Silero VAD v5 graph")

func unexpected(format string, args ...any) error {
	return fmt.Errorf("silero: %w: %s", ErrUnexpectedGraph, fmt.Sprintf(format, args...))
}
