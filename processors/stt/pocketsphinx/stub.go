//go:build !pocketsphinx || !cgo

package pocketsphinx

import (
	"context"

	"github.com/framewire/framewire/processors/stt"
)

// Engine is the PocketSphinx engine; this build has none (see
// [ErrUnavailable]), so [New] fails and no Engine exists.
type Engine struct{}

// New returns [ErrUnavailable]: the package was built without the
// pocketsphinx build tag or without cgo.
func New(o Options) (*Engine, error) {
	if err := checkPronunciations(o.Pronunciations); err != nil {
		return nil, err
	}
	return nil, ErrUnavailable
}

// Model implements frames.Modeler.
func (e *Engine) Model() string { return "pocketsphinx-en-us" }

// SetGrammar does nothing in this build.
func (e *Engine) SetGrammar(*Grammar) {}

// Grammar returns nil in this build.
func (e *Engine) Grammar() *Grammar { return nil }

// GrammarStatus returns [ErrUnavailable] in this build.
func (e *Engine) GrammarStatus() ([]string, error) { return nil, ErrUnavailable }

// Connect returns [ErrUnavailable] in this build.
func (e *Engine) Connect(context.Context, stt.Format) (stt.Stream, error) {
	return nil, ErrUnavailable
}

// Open returns [ErrUnavailable] in this build.
func (e *Engine) Open(context.Context, stt.Format) (*Session, error) { return nil, ErrUnavailable }

// Session is a PocketSphinx decoding session; this build has none.
type Session struct{}

// Next returns [ErrUnavailable] in this build.
func (s *Session) Next(context.Context) (Result, error) { return Result{}, ErrUnavailable }
