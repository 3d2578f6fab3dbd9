// Package codec holds the audio codecs of the WebRTC transport: G.711 µ-law
// (PCMU), always available in pure Go, and Opus through libopus when the
// binary is built with the "opus" tag. The transport negotiates whichever
// codec [Default] returns, so a build without cgo still talks to browsers.
package codec
