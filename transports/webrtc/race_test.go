//go:build race

package webrtc

// raceEnabled is true in -race builds, where pion's SCTP delivers a few
// thousand data-channel messages a second instead of tens of thousands:
// the flood tests then send less, still far above the limits.
const raceEnabled = true
