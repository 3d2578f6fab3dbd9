// Package httpstatus records the status code an http.Handler wrote
// ([Recorder]) and reports it once served ([Report]), for
// the servers that count their responses by status (the WebRTC
// transport's signalling and the cluster's front door report them to
// framewire.signalling.responses). It imports only the standard library.
package httpstatus
