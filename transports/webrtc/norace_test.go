//go:build !race

package webrtc

// raceEnabled is true in -race builds; see race_test.go.
const raceEnabled = false
