//go:build opus

package main

// haveOpus tells the tests that the transport speaks Opus (the opus build
// tag), so its sessions report an Opus complexity.
const haveOpus = true
