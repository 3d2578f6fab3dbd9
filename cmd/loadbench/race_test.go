//go:build race

package main

// raceEnabled: the race detector slows the server about tenfold.
const raceEnabled = true
