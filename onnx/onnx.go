// Package onnx decodes the parts of an ONNX model file (a protocol buffers
// ModelProto) that a hand-written forward pass needs: the graph, its nodes
// with their attributes and subgraphs, and its float and integer tensors.
//
// It is not a general ONNX reader: it keeps only the fields it knows, skips
// the rest, and bounds every size so that a hostile file gives an error, not
// a crash or a huge allocation.
package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Limits on what Decode accepts. The Silero VAD v5 file is 2.3 MB with a few
// hundred nodes; these leave room without letting a small file ask for a big
// allocation.
const (
	MaxModelBytes   = 64 << 20 // whole file
	MaxDepth        = 8        // graphs nested in attributes
	MaxNodes        = 1 << 16  // nodes in all graphs together
	MaxTensorDims   = 8
	MaxTensorElems  = 1 << 24 // elements in one tensor
	maxStringBytes  = 1 << 12 // names, op types
	maxListElems    = 1 << 16 // ints or floats of one attribute
	maxValueInfo    = 1 << 12 // inputs and outputs of one graph
	maxNodeEdges    = 1 << 10 // inputs or outputs of one node
	maxAttributes   = 1 << 10 // attributes of one node
	maxTensorsTotal = 1 << 14 // tensors in all graphs together
)

// Data types of [Tensor.DataType] (TensorProto.DataType) that Decode
// converts; tensors of other types keep only their name, type and dims.
const (
	Float = 1
	Int32 = 6
	Int64 = 7
	Bool  = 9
)

// Attribute types of [Attribute.Type] (AttributeProto.AttributeType).
const (
	AttrFloat   = 1
	AttrInt     = 2
	AttrString  = 3
	AttrTensor  = 4
	AttrGraph   = 5
	AttrFloats  = 6
	AttrInts    = 7
	AttrStrings = 8
)

// Model is a decoded ModelProto.
type Model struct {
	IRVersion int64
	Producer  string
	// Opsets maps an operator set domain ("" for the default one) to its
	// version.
	Opsets map[string]int64
	Graph  *Graph
}

// Graph is a decoded GraphProto.
type Graph struct {
	Name         string
	Nodes        []*Node
	Initializers []*Tensor
	Inputs       []string
	Outputs      []string
}

// Node is a decoded NodeProto.
type Node struct {
	Name    string
	OpType  string
	Domain  string
	Inputs  []string
	Outputs []string
	Attrs   []*Attribute
}

// Attribute is a decoded AttributeProto.
type Attribute struct {
	Name   string
	Type   int
	F      float32
	I      int64
	S      []byte
	T      *Tensor
	G      *Graph
	Floats []float32
	Ints   []int64
}

// Tensor is a decoded TensorProto. Float tensors fill Floats, integer and
// bool tensors fill Ints; Dims is the shape, outermost first.
type Tensor struct {
	Name     string
	DataType int
	Dims     []int64
	Floats   []float32
	Ints     []int64
}

// Attr returns the node's attribute called name, or nil.
func (n *Node) Attr(name string) *Attribute {
	for _, a := range n.Attrs {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// Initializer returns the graph's initializer called name, or nil.
func (g *Graph) Initializer(name string) *Tensor {
	for _, t := range g.Initializers {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Len returns the number of elements the tensor's dims describe.
func (t *Tensor) Len() int {
	n := 1
	for _, d := range t.Dims {
		n *= int(d)
	}
	return n
}

// Error is what Decode returns for a file it cannot read: Field names the
// message and field where decoding stopped ("ModelProto.graph/GraphProto.node").
type Error struct {
	Field string
	Err   error
}

func (e *Error) Error() string { return "onnx: " + e.Field + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

var (
	errTruncated = errors.New("truncated")
	errVarint    = errors.New("bad varint")
	errWireType  = errors.New("unexpected wire type")
	errTooLarge  = errors.New("over the size limit")
	errTooDeep   = errors.New("graphs nested too deep")
)

// decoder carries the counters that bound a whole decode.
type decoder struct {
	nodes   int
	tensors int
}

// Decode parses an ONNX model file.
func Decode(data []byte) (*Model, error) {
	if len(data) > MaxModelBytes {
		return nil, &Error{"ModelProto", fmt.Errorf("%d bytes, %w (%d)", len(data), errTooLarge, MaxModelBytes)}
	}
	var d decoder
	m := &Model{Opsets: map[string]int64{}}
	err := each(data, func(f field) error {
		switch f.num {
		case 1:
			return f.varint(&m.IRVersion)
		case 2:
			return f.str(&m.Producer)
		case 7:
			if f.wire != wireBytes {
				return errWireType
			}
			if m.Graph != nil {
				return errors.New("two graphs")
			}
			g, err := d.graph(f.b, 0)
			if err != nil {
				return err
			}
			m.Graph = g
		case 8:
			if f.wire != wireBytes {
				return errWireType
			}
			var domain string
			var version int64
			if err := each(f.b, func(o field) error {
				switch o.num {
				case 1:
					return o.str(&domain)
				case 2:
					return o.varint(&version)
				}
				return nil
			}); err != nil {
				return err
			}
			if len(m.Opsets) >= 64 {
				return errTooLarge
			}
			m.Opsets[domain] = version
		}
		return nil
	})
	if err != nil {
		return nil, wrap("ModelProto", err)
	}
	if m.Graph == nil {
		return nil, &Error{"ModelProto", errors.New("no graph")}
	}
	return m, nil
}

func (d *decoder) graph(b []byte, depth int) (*Graph, error) {
	if depth >= MaxDepth {
		return nil, errTooDeep
	}
	g := &Graph{}
	err := each(b, func(f field) error {
		switch f.num {
		case 1:
			if f.wire != wireBytes {
				return errWireType
			}
			d.nodes++
			if d.nodes > MaxNodes {
				return fmt.Errorf("more than %d nodes", MaxNodes)
			}
			n, err := d.node(f.b, depth)
			if err != nil {
				return wrap("node", err)
			}
			g.Nodes = append(g.Nodes, n)
		case 2:
			return f.str(&g.Name)
		case 5:
			if f.wire != wireBytes {
				return errWireType
			}
			t, err := d.tensor(f.b)
			if err != nil {
				return wrap("initializer", err)
			}
			g.Initializers = append(g.Initializers, t)
		case 11, 12:
			if f.wire != wireBytes {
				return errWireType
			}
			var name string
			if err := each(f.b, func(v field) error {
				if v.num == 1 {
					return v.str(&name)
				}
				return nil
			}); err != nil {
				return err
			}
			list := &g.Inputs
			if f.num == 12 {
				list = &g.Outputs
			}
			if len(*list) >= maxValueInfo {
				return errTooLarge
			}
			*list = append(*list, name)
		}
		return nil
	})
	if err != nil {
		return nil, wrap("GraphProto", err)
	}
	return g, nil
}

func (d *decoder) node(b []byte, depth int) (*Node, error) {
	n := &Node{}
	err := each(b, func(f field) error {
		switch f.num {
		case 1, 2:
			var s string
			if err := f.str(&s); err != nil {
				return err
			}
			list := &n.Inputs
			if f.num == 2 {
				list = &n.Outputs
			}
			if len(*list) >= maxNodeEdges {
				return errTooLarge
			}
			*list = append(*list, s)
		case 3:
			return f.str(&n.Name)
		case 4:
			return f.str(&n.OpType)
		case 7:
			return f.str(&n.Domain)
		case 5:
			if f.wire != wireBytes {
				return errWireType
			}
			if len(n.Attrs) >= maxAttributes {
				return errTooLarge
			}
			a, err := d.attribute(f.b, depth)
			if err != nil {
				return wrap("attribute", err)
			}
			n.Attrs = append(n.Attrs, a)
		}
		return nil
	})
	if err != nil {
		return nil, wrap("NodeProto", err)
	}
	return n, nil
}

func (d *decoder) attribute(b []byte, depth int) (*Attribute, error) {
	a := &Attribute{}
	err := each(b, func(f field) error {
		switch f.num {
		case 1:
			return f.str(&a.Name)
		case 20:
			var t int64
			if err := f.varint(&t); err != nil {
				return err
			}
			a.Type = int(t)
		case 2:
			if f.wire != wireFixed32 {
				return errWireType
			}
			a.F = math.Float32frombits(uint32(f.v))
		case 3:
			return f.varint(&a.I)
		case 4:
			if f.wire != wireBytes {
				return errWireType
			}
			if len(f.b) > maxStringBytes {
				return errTooLarge
			}
			a.S = append([]byte(nil), f.b...)
		case 5:
			if f.wire != wireBytes {
				return errWireType
			}
			t, err := d.tensor(f.b)
			if err != nil {
				return wrap("t", err)
			}
			a.T = t
		case 6:
			if f.wire != wireBytes {
				return errWireType
			}
			g, err := d.graph(f.b, depth+1)
			if err != nil {
				return wrap("g", err)
			}
			a.G = g
		case 7:
			return appendFloats(&a.Floats, f, maxListElems)
		case 8:
			return appendInts(&a.Ints, f, maxListElems)
		}
		return nil
	})
	if err != nil {
		return nil, wrap("AttributeProto", err)
	}
	return a, nil
}

func (d *decoder) tensor(b []byte) (*Tensor, error) {
	d.tensors++
	if d.tensors > maxTensorsTotal {
		return nil, fmt.Errorf("more than %d tensors", maxTensorsTotal)
	}
	t := &Tensor{}
	var raw []byte
	hasRaw := false
	err := each(b, func(f field) error {
		switch f.num {
		case 1:
			return appendInts(&t.Dims, f, MaxTensorDims)
		case 2:
			var v int64
			if err := f.varint(&v); err != nil {
				return err
			}
			t.DataType = int(v)
		case 8:
			return f.str(&t.Name)
		case 9:
			if f.wire != wireBytes {
				return errWireType
			}
			raw, hasRaw = f.b, true
		case 4:
			return appendFloats(&t.Floats, f, MaxTensorElems)
		case 5, 7:
			return appendInts(&t.Ints, f, MaxTensorElems)
		case 13:
			return errors.New("external data is not supported")
		}
		return nil
	})
	if err != nil {
		return nil, wrap("TensorProto", err)
	}
	n := int64(1)
	for _, dim := range t.Dims {
		if dim < 0 || dim > MaxTensorElems {
			return nil, &Error{"TensorProto " + t.Name, fmt.Errorf("dims %v out of range", t.Dims)}
		}
		n *= dim
		if n > MaxTensorElems {
			return nil, &Error{"TensorProto " + t.Name, fmt.Errorf("dims %v: %w", t.Dims, errTooLarge)}
		}
	}
	if hasRaw {
		if err := t.fromRaw(raw, int(n)); err != nil {
			return nil, &Error{"TensorProto " + t.Name, err}
		}
	}
	switch {
	case t.DataType == Float && int64(len(t.Floats)) != n,
		(t.DataType == Int32 || t.DataType == Int64 || t.DataType == Bool) && int64(len(t.Ints)) != n:
		return nil, &Error{"TensorProto " + t.Name, fmt.Errorf("dims %v but %d values", t.Dims, max(len(t.Floats), len(t.Ints)))}
	}
	return t, nil
}

// fromRaw converts raw_data (little-endian, as ONNX stores it) of n elements.
func (t *Tensor) fromRaw(raw []byte, n int) error {
	size := map[int]int{Float: 4, Int32: 4, Int64: 8, Bool: 1}[t.DataType]
	if size == 0 {
		return nil // a type the forward pass does not use: keep only the shape
	}
	if len(raw) != n*size {
		return fmt.Errorf("dims %v of type %d need %d bytes of raw data, have %d", t.Dims, t.DataType, n*size, len(raw))
	}
	switch t.DataType {
	case Float:
		t.Floats = make([]float32, n)
		for i := range t.Floats {
			t.Floats[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case Int32:
		t.Ints = make([]int64, n)
		for i := range t.Ints {
			t.Ints[i] = int64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
		}
	case Int64:
		t.Ints = make([]int64, n)
		for i := range t.Ints {
			t.Ints[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	case Bool:
		t.Ints = make([]int64, n)
		for i := range t.Ints {
			t.Ints[i] = int64(raw[i])
		}
	}
	return nil
}

func wrap(name string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return &Error{name + "/" + e.Field, e.Err}
	}
	return &Error{name, err}
}

// Wire types of the protocol buffers encoding.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// field is one decoded protocol buffers field: v for varint and fixed
// types, b for length-delimited ones (a sub-slice of the input, not a copy).
type field struct {
	num  uint64
	wire int
	v    uint64
	b    []byte
}

func (f field) varint(dst *int64) error {
	if f.wire != wireVarint {
		return errWireType
	}
	*dst = int64(f.v)
	return nil
}

func (f field) str(dst *string) error {
	if f.wire != wireBytes {
		return errWireType
	}
	if len(f.b) > maxStringBytes {
		return fmt.Errorf("string of %d bytes: %w", len(f.b), errTooLarge)
	}
	*dst = string(f.b)
	return nil
}

// appendInts appends a repeated int field, packed or not.
func appendInts(dst *[]int64, f field, limit int) error {
	switch f.wire {
	case wireVarint:
		if len(*dst) >= limit {
			return errTooLarge
		}
		*dst = append(*dst, int64(f.v))
	case wireBytes:
		b := f.b
		for len(b) > 0 {
			v, n := binary.Uvarint(b)
			if n <= 0 {
				return errVarint
			}
			if len(*dst) >= limit {
				return errTooLarge
			}
			*dst = append(*dst, int64(v))
			b = b[n:]
		}
	default:
		return errWireType
	}
	return nil
}

// appendFloats appends a repeated float field, packed or not.
func appendFloats(dst *[]float32, f field, limit int) error {
	switch f.wire {
	case wireFixed32:
		if len(*dst) >= limit {
			return errTooLarge
		}
		*dst = append(*dst, math.Float32frombits(uint32(f.v)))
	case wireBytes:
		if len(f.b)%4 != 0 {
			return errTruncated
		}
		if len(*dst)+len(f.b)/4 > limit {
			return errTooLarge
		}
		for b := f.b; len(b) > 0; b = b[4:] {
			*dst = append(*dst, math.Float32frombits(binary.LittleEndian.Uint32(b)))
		}
	default:
		return errWireType
	}
	return nil
}

// each calls fn for every field of the message in b, stopping at the first
// error.
func each(b []byte, fn func(field) error) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return errVarint
		}
		b = b[n:]
		f := field{num: key >> 3, wire: int(key & 7)}
		if f.num == 0 {
			return errors.New("field number 0")
		}
		switch f.wire {
		case wireVarint:
			f.v, n = binary.Uvarint(b)
			if n <= 0 {
				return errVarint
			}
			b = b[n:]
		case wireFixed64:
			if len(b) < 8 {
				return errTruncated
			}
			f.v = binary.LittleEndian.Uint64(b)
			b = b[8:]
		case wireFixed32:
			if len(b) < 4 {
				return errTruncated
			}
			f.v = uint64(binary.LittleEndian.Uint32(b))
			b = b[4:]
		case wireBytes:
			l, n := binary.Uvarint(b)
			if n <= 0 {
				return errVarint
			}
			b = b[n:]
			if l > uint64(len(b)) {
				return errTruncated
			}
			f.b = b[:l]
			b = b[l:]
		default:
			return fmt.Errorf("field %d: %w %d", f.num, errWireType, f.wire)
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}
