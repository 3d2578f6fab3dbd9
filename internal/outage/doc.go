// Package outage holds the one rule the speech services share for telling
// the user about a failing upstream: the first failure of an outage reaches
// the client (as an upstream frames.Error), the ones after it only the log,
// and the next success ends the outage. processors/tts's Service and
// processors/stt's Segmented use it, so a dead speech service costs the
// user one message, not one per sentence or utterance.
//
// It imports only the standard library.
package outage
