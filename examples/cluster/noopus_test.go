//go:build !opus

package main

// haveOpus tells the tests that the transport speaks PCMU (no opus build
// tag), so its sessions report no Opus complexity.
const haveOpus = false
