//go:build race

package main

// raceEnabled: the race detector slows the server about tenfold, enough
// on a shared machine for an output's clock to miss a frame now and then.
const raceEnabled = true
