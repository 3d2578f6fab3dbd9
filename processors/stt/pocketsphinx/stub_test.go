//go:build !pocketsphinx || !cgo

package pocketsphinx

import (
	"errors"
	"testing"
)

func TestWithoutTheTagNewSaysWhy(t *testing.T) {
	e, err := New(Options{})
	if e != nil || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("New = %v, %v; want nil, ErrUnavailable", e, err)
	}
	if want := "pocketsphinx: built without pocketsphinx: rebuild with cgo and -tags pocketsphinx (Debian: libpocketsphinx-dev, pocketsphinx-en-us)"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}
