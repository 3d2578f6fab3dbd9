package jsonwiretest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Keys are a provider's names in its media message, to write the
// [FastPathSeeds] in them.
type Keys struct {
	// Stream is the top-level key of the stream's id: "streamSid".
	Stream string
	// Sequence is the top-level key of the sequence number:
	// "sequenceNumber".
	Sequence string
	// Other is a top-level key of another event's, which the fast path
	// leaves to encoding/json: "start".
	Other string
	// Member is a member of the media object other than payload, key and
	// value: `"track" : "outbound"`.
	Member string
}

// FastPathSeeds returns media messages at the edges of a fast path: the
// first four it must read (a minimal message, space everywhere and the
// keys out of order, an unknown member of every JSON type, a repeated
// payload), then ones it may read or leave to encoding/json: repeated
// objects, keys that match only case-insensitively or through an escape,
// escaped or non-ASCII strings, a null or bad payload, another event's
// field, trailing text, bad JSON, a repeated event and a fractional
// sequence number.
func FastPathSeeds(k Keys) []string {
	seeds := []string{
		`{"event":"media","$S":"MZ1","media":{"payload":"/w=="}}`,
		` { "media" : { "payload" : "/w==" , $M } , "event" : "media" } `,
		`{"event":"media","media":{"payload":"/w=="},"extra":{"a":[1,2.5e3,true,null,"\u00e9"]}}`,
		`{"event":"media","media":{"payload":"/w==","payload":"AAA="}}`,
		`{"event":"media","media":{"chunk":"1"},"media":{"payload":"/w=="}}`,
		`{"EVENT":"media","media":{"payload":"/w=="}}`,
		`{"event":"media","Media":{"payload":"/w=="}}`,
		`{"event":"media","media":{"Payload":"/w=="}}`,
		`{"ev\u0065nt":"media","media":{"payload":"/w=="}}`,
		`{"event":"media","$S":"MZ\u0031","media":{"payload":"/w=="}}`,
		`{"event":"media","$S":"MZé","media":{"payload":"/w=="}}`,
		`{"event":"media","media":{"payload":"\/w=="}}`,
		`{"event":"media","media":{"payload":null}}`,
		`{"event":"media","media":{"payload":"!!"}}`,
		`{"event":"media","$O":{},"media":{"payload":"/w=="}}`,
		`{"event":"media","media":{"payload":"/w=="}} x`,
		`{"event":"media","media":{"payload":"/w=="},"x":tru}`,
		`{"event":"media","media":{"payload":"/w=="},"x":01}`,
		`{"event":"start","event":"media","media":{"payload":"/w=="}}`,
		`{"event":"media","$Q":1.5,"media":{"payload":"/w=="}}`,
	}
	r := strings.NewReplacer("$S", k.Stream, "$Q", k.Sequence, "$O", k.Other, "$M", k.Member)
	for i, s := range seeds {
		seeds[i] = r.Replace(s)
	}
	return seeds
}

// MustRead is the number of [FastPathSeeds] a fast path must read.
const MustRead = 4

// Files returns the contents of the files pattern matches, in the order
// of their names: a provider's golden messages as seeds.
func Files(tb testing.TB, pattern string) [][]byte {
	tb.Helper()
	names, err := filepath.Glob(pattern)
	if err != nil {
		tb.Fatal(err)
	}
	if len(names) == 0 {
		tb.Fatalf("no file matches %s", pattern)
	}
	files := make([][]byte, 0, len(names))
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		files = append(files, b)
	}
	return files
}

// Paths are a provider's two ways to read a message, each with a decoder
// of its own: Fast, its fast path, which may give up (false), and JSON,
// its encoding/json path.
type Paths[E any] struct {
	Fast func(msg []byte) (E, bool)
	JSON func(msg []byte) (E, error)
}

// agree reports how the two paths read msg: taken is false when the fast
// path gave up; otherwise a non-empty problem says how the paths differ.
func (p Paths[E]) agree(msg []byte) (taken bool, problem string) {
	got, ok := p.Fast(msg)
	if !ok {
		return false, ""
	}
	want, err := p.JSON(msg)
	if err != nil {
		return true, "encoding/json refused it: " + err.Error()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		return true, "they differ (-json +fast):\n" + diff
	}
	return true, ""
}

// Agree checks that what the fast path reads of seeds, encoding/json reads
// to the same event, and that the fast path reads at least the first
// [MustRead] of them.
func (p Paths[E]) Agree(t *testing.T, seeds []string) {
	t.Helper()
	for i, msg := range seeds {
		taken, problem := p.agree([]byte(msg))
		if problem != "" {
			t.Errorf("the fast path read %s and %s", msg, problem)
		}
		if !taken && i < MustRead {
			t.Errorf("the fast path gave up on %s, one it must read", msg)
		}
	}
}

// Fuzz adds seeds to f and fuzzes the two paths: what the fast path reads,
// encoding/json reads to the same event.
func (p Paths[E]) Fuzz(f *testing.F, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		if _, problem := p.agree(msg); problem != "" {
			t.Fatalf("the fast path read %q and %s", msg, problem)
		}
	})
}

// Golden checks an encoded message against its golden file at path (the
// message and a newline) and against its documented shape, the
// provider's example as encoding/json reads it. With update, it first
// rewrites the file from got.
func Golden(t *testing.T, path string, got []byte, shape map[string]any, update bool) {
	t.Helper()
	want := append(bytes.Clone(got), '\n')
	if update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, file) {
		t.Errorf("encoded\n%s\nwant (%s)\n%s", want, path, file)
	}
	var read map[string]any
	if err := json.Unmarshal(got, &read); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if diff := cmp.Diff(shape, read); diff != "" {
		t.Errorf("shape (-documented +encoded):\n%s", diff)
	}
}
