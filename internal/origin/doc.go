// Package origin matches a request's Origin header against the CORS
// patterns an operator configures ("*", an exact origin, or
// "scheme://host:*" for a host on any port), and sets the headers that
// let a matching page read the response. The WebRTC transport's
// signalling and the cluster's front door both answer pages of other
// origins, and must agree on which ones. It imports only the standard
// library.
package origin
