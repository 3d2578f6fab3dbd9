// Command onnxdump prints the graph of an ONNX model file: every node with
// its inputs, outputs and attributes, subgraphs indented, and the shape of
// every initializer and constant. It is how the Silero forward pass was
// checked against the model.
//
//	go run ./cmd/onnxdump ~/.cache/framewire/silero_vad_v5.onnx
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/framewire/framewire/onnx"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: onnxdump model.onnx")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	m, err := onnx.Decode(data)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("ir %d producer %q opsets %v\n", m.IRVersion, m.Producer, m.Opsets)
	dump(m.Graph, "")
}

func dump(g *onnx.Graph, indent string) {
	fmt.Printf("%sgraph %q inputs %v outputs %v\n", indent, g.Name, g.Inputs, g.Outputs)
	for _, t := range g.Initializers {
		fmt.Printf("%s  init %s\n", indent, tensor(t))
	}
	for _, n := range g.Nodes {
		fmt.Printf("%s  %s %q %v -> %v\n", indent, n.OpType, n.Name, n.Inputs, n.Outputs)
		for _, a := range n.Attrs {
			switch {
			case a.G != nil:
				fmt.Printf("%s    %s:\n", indent, a.Name)
				dump(a.G, indent+"      ")
			case a.T != nil:
				fmt.Printf("%s    %s = %s\n", indent, a.Name, tensor(a.T))
			case len(a.Ints) > 0:
				fmt.Printf("%s    %s = %v\n", indent, a.Name, a.Ints)
			case len(a.Floats) > 0:
				fmt.Printf("%s    %s = %v\n", indent, a.Name, a.Floats)
			case a.Type == onnx.AttrString:
				fmt.Printf("%s    %s = %q\n", indent, a.Name, a.S)
			case a.Type == onnx.AttrFloat:
				fmt.Printf("%s    %s = %v\n", indent, a.Name, a.F)
			default:
				fmt.Printf("%s    %s = %d\n", indent, a.Name, a.I)
			}
		}
	}
}

func tensor(t *onnx.Tensor) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s type %d dims %v", t.Name, t.DataType, t.Dims)
	switch {
	case len(t.Floats) > 0 && len(t.Floats) <= 8:
		fmt.Fprintf(&b, " %v", t.Floats)
	case len(t.Floats) > 8:
		fmt.Fprintf(&b, " [%v %v ... %v]", t.Floats[0], t.Floats[1], t.Floats[len(t.Floats)-1])
	case len(t.Ints) > 0 && len(t.Ints) <= 8:
		fmt.Fprintf(&b, " %v", t.Ints)
	}
	return b.String()
}
