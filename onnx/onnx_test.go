package onnx

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A tiny protocol buffers writer for building ONNX messages in tests.
type pb []byte

func (p pb) key(num, wire int) pb { return binary.AppendUvarint(p, uint64(num<<3|wire)) }
func (p pb) varint(num int, v int64) pb {
	return binary.AppendUvarint(p.key(num, wireVarint), uint64(v))
}
func (p pb) bytes(num int, b []byte) pb {
	p = binary.AppendUvarint(p.key(num, wireBytes), uint64(len(b)))
	return append(p, b...)
}
func (p pb) str(num int, s string) pb { return p.bytes(num, []byte(s)) }
func (p pb) float(num int, f float32) pb {
	return binary.LittleEndian.AppendUint32(p.key(num, wireFixed32), math.Float32bits(f))
}

func rawFloats(fs ...float32) []byte {
	var b []byte
	for _, f := range fs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

func packedInts(vs ...int64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.AppendUvarint(b, uint64(v))
	}
	return b
}

// sample builds a model with a float initializer (raw data), a Constant
// node with an int64 tensor (int64_data), a Conv node with ints and a
// string attribute, and an If node with a subgraph.
func sample() []byte {
	weight := pb{}.bytes(1, packedInts(2, 2)).varint(2, Float).str(8, "w").bytes(9, rawFloats(1, 2, 3, 4))
	konst := pb{}.varint(1, 2).varint(2, Int64).bytes(7, packedInts(0, 64)).str(8, "")
	constNode := pb{}.str(2, "c").str(3, "k").str(4, "Constant").
		bytes(5, pb{}.str(1, "value").varint(20, AttrTensor).bytes(5, konst))
	conv := pb{}.str(1, "x").str(1, "w").str(2, "y").str(3, "conv").str(4, "Conv").
		bytes(5, pb{}.str(1, "strides").varint(20, AttrInts).bytes(8, packedInts(2))).
		bytes(5, pb{}.str(1, "mode").varint(20, AttrString).str(4, "reflect")).
		bytes(5, pb{}.str(1, "alpha").varint(20, AttrFloat).float(2, 0.5)).
		bytes(5, pb{}.str(1, "group").varint(20, AttrInt).varint(3, 1))
	sub := pb{}.str(2, "then").bytes(1, pb{}.str(1, "y").str(2, "z").str(4, "Identity")).
		bytes(12, pb{}.str(1, "z"))
	ifNode := pb{}.str(1, "cond").str(2, "z").str(4, "If").
		bytes(5, pb{}.str(1, "then_branch").varint(20, AttrGraph).bytes(6, sub))
	graph := pb{}.str(2, "g").bytes(1, constNode).bytes(1, conv).bytes(1, ifNode).
		bytes(5, weight).bytes(11, pb{}.str(1, "x")).bytes(12, pb{}.str(1, "z")).
		str(10, "doc strings are skipped")
	return pb{}.varint(1, 8).str(2, "test").bytes(8, pb{}.str(1, "").varint(2, 16)).bytes(7, graph)
}

func TestDecode(t *testing.T) {
	m, err := Decode(sample())
	if err != nil {
		t.Fatal(err)
	}
	want := &Model{
		IRVersion: 8, Producer: "test", Opsets: map[string]int64{"": 16},
		Graph: &Graph{
			Name: "g",
			Nodes: []*Node{
				{Name: "k", OpType: "Constant", Outputs: []string{"c"}, Attrs: []*Attribute{
					{Name: "value", Type: AttrTensor, T: &Tensor{DataType: Int64, Dims: []int64{2}, Ints: []int64{0, 64}}},
				}},
				{Name: "conv", OpType: "Conv", Inputs: []string{"x", "w"}, Outputs: []string{"y"}, Attrs: []*Attribute{
					{Name: "strides", Type: AttrInts, Ints: []int64{2}},
					{Name: "mode", Type: AttrString, S: []byte("reflect")},
					{Name: "alpha", Type: AttrFloat, F: 0.5},
					{Name: "group", Type: AttrInt, I: 1},
				}},
				{OpType: "If", Inputs: []string{"cond"}, Outputs: []string{"z"}, Attrs: []*Attribute{
					{Name: "then_branch", Type: AttrGraph, G: &Graph{
						Name:    "then",
						Nodes:   []*Node{{OpType: "Identity", Inputs: []string{"y"}, Outputs: []string{"z"}}},
						Outputs: []string{"z"},
					}},
				}},
			},
			Initializers: []*Tensor{{Name: "w", DataType: Float, Dims: []int64{2, 2}, Floats: []float32{1, 2, 3, 4}}},
			Inputs:       []string{"x"},
			Outputs:      []string{"z"},
		},
	}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("Decode (-want +got):\n%s", diff)
	}
	if m.Graph.Initializer("w") == nil || m.Graph.Initializer("v") != nil {
		t.Error("Initializer lookup is wrong")
	}
	if m.Graph.Nodes[1].Attr("strides") == nil || m.Graph.Nodes[1].Attr("pads") != nil {
		t.Error("Attr lookup is wrong")
	}
	if n := m.Graph.Initializers[0].Len(); n != 4 {
		t.Errorf("Len() = %d, want 4", n)
	}
}

func TestDecodeErrors(t *testing.T) {
	tensor := func(dims []int64, typ int64, raw []byte) []byte {
		tp := pb{}.bytes(1, packedInts(dims...)).varint(2, typ).str(8, "t")
		if raw != nil {
			tp = tp.bytes(9, raw)
		}
		return pb{}.bytes(7, pb{}.bytes(5, tp))
	}
	nest := func(depth int) []byte {
		g := pb{}.str(2, "leaf")
		for range depth {
			n := pb{}.str(4, "If").bytes(5, pb{}.str(1, "then_branch").varint(20, AttrGraph).bytes(6, g))
			g = pb{}.bytes(1, n)
		}
		return pb{}.bytes(7, g)
	}
	full := sample()
	for _, tc := range []struct {
		name, data, want string
	}{
		{"empty", "", "no graph"},
		{"truncated", string(full[:len(full)-3]), "truncated"},
		{"bad varint", "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", "bad varint"},
		{"field zero", "\x00\x01", "field number 0"},
		{"group wire type", "\x0b", "wire type"},
		{"graph as varint", "\x38\x01", "wire type"},
		{"two graphs", string(pb{}.bytes(7, nil).bytes(7, nil)), "two graphs"},
		{"raw data too short", string(tensor([]int64{2, 2}, Float, rawFloats(1, 2, 3))), "need 16 bytes"},
		{"too many elements", string(tensor([]int64{1 << 20, 1 << 20}, Float, nil)), "size limit"},
		{"negative dim", string(tensor([]int64{-1}, Float, nil)), "out of range"},
		{"values without data", string(tensor([]int64{3}, Int64, nil)), "but 0 values"},
		{"nested too deep", string(nest(MaxDepth + 1)), "nested too deep"},
		{"external data", string(pb{}.bytes(7, pb{}.bytes(5, pb{}.bytes(13, nil)))), "external data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.data))
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode = %v, want an *Error containing %q", err, tc.want)
			}
		})
	}
	if _, err := Decode(nest(MaxDepth - 1)); err != nil {
		t.Errorf("graphs nested %d deep: %v", MaxDepth-1, err)
	}
	if _, err := Decode(make([]byte, MaxModelBytes+1)); err == nil {
		t.Error("a file over MaxModelBytes decoded")
	}
}

// Error names the path of messages down to the failure.
func TestErrorPath(t *testing.T) {
	bad := pb{}.bytes(7, pb{}.bytes(1, pb{}.bytes(5, pb{}.str(1, "value").bytes(5, pb{}.bytes(1, []byte{0xff})))))
	_, err := Decode(bad)
	want := "onnx: ModelProto/GraphProto/node/NodeProto/attribute/AttributeProto/t/TensorProto: bad varint"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

func FuzzDecode(f *testing.F) {
	s := sample()
	f.Add(s)
	f.Add(s[:len(s)/2])
	f.Add([]byte{})
	f.Add([]byte("\x3a\x05\x0a\x03\x22\x01\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err != nil {
			return
		}
		var check func(*Graph, int)
		check = func(g *Graph, depth int) {
			if depth >= MaxDepth {
				t.Fatalf("graph depth %d", depth)
			}
			for _, tn := range g.Initializers {
				if tn.DataType == Float && len(tn.Floats) != tn.Len() {
					t.Fatalf("tensor %q: %d floats for dims %v", tn.Name, len(tn.Floats), tn.Dims)
				}
			}
			for _, n := range g.Nodes {
				for _, a := range n.Attrs {
					if a.G != nil {
						check(a.G, depth+1)
					}
				}
			}
		}
		check(m.Graph, 0)
	})
}

func BenchmarkDecode(b *testing.B) {
	data := sample()
	b.ReportAllocs()
	for range b.N {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
