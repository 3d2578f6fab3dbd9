package wire

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// vector is one entry of testdata/rtvi_vectors.json (real messages
// of the Pipecat clients and servers).
type vector struct {
	Name      string          `json:"name"`
	Direction string          `json:"direction"`
	Protocol  string          `json:"protocol"`
	FromTest  bool            `json:"from_test"`
	Source    string          `json:"source"`
	JSON      json.RawMessage `json:"json"`
	Notes     string          `json:"notes"`
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	b, err := os.ReadFile("testdata/rtvi_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	return vs
}

func vectorByName(t testing.TB, name string) vector {
	t.Helper()
	for _, v := range loadVectors(t) {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no vector named %q", name)
	return vector{}
}

// decodeAny decodes JSON into generic values, for comparison with go-cmp.
func decodeAny(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return v
}

// diffJSON compares decoded JSON values.
func diffJSON(want, got any) string { return cmp.Diff(want, got) }

// obj is shorthand for a decoded JSON object.
type obj = map[string]any
