// Package hostcheck refuses HTTP requests whose Host header names a host
// the server was not told it serves. A page on an attacker's domain can
// rebind that domain's DNS to 127.0.0.1 and then reach a loopback server
// as a same-origin page; its requests still carry the attacker's name in
// Host, which is what this package checks. The WebRTC transport's
// signalling, the live inspector, the demo's /api/config and the cluster's
// front door share one policy through it. It imports only the standard
// library.
package hostcheck
