package httpstatus

import (
	"context"
	"net/http"
)

// Recorder is an http.ResponseWriter that remembers the first status code
// written through it: the one given to WriteHeader, or 200 for a Write
// without one. Status is 0 while nothing was written.
type Recorder struct {
	http.ResponseWriter
	Status int
}

// WriteHeader implements http.ResponseWriter.
func (r *Recorder) WriteHeader(code int) {
	if r.Status == 0 {
		r.Status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (r *Recorder) Write(b []byte) (int, error) {
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (r *Recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Report serves r with serve through a Recorder, then gives report the
// status serve answered with; it reports nothing when serve wrote
// nothing (a handler that panicked or hijacked the connection).
func Report(w http.ResponseWriter, r *http.Request, serve http.HandlerFunc, report func(ctx context.Context, status int)) {
	rec := &Recorder{ResponseWriter: w}
	defer func() {
		if rec.Status != 0 {
			report(r.Context(), rec.Status)
		}
	}()
	serve(rec, r)
}
