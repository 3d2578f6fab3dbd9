package httpstatus

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

func TestRecorderKeepsTheFirstStatus(t *testing.T) {
	for _, tc := range []struct {
		name  string
		serve func(w http.ResponseWriter)
		want  int
	}{
		{"nothing written", func(http.ResponseWriter) {}, 0},
		{"a write alone is a 200", func(w http.ResponseWriter) { _, _ = w.Write([]byte("ok")) }, 200},
		{"the header's code", func(w http.ResponseWriter) { w.WriteHeader(404); _, _ = w.Write([]byte("no")) }, 404},
		{"a second code is ignored", func(w http.ResponseWriter) { w.WriteHeader(503); w.WriteHeader(200) }, 503},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &Recorder{ResponseWriter: httptest.NewRecorder()}
			tc.serve(rec)
			if rec.Status != tc.want {
				t.Errorf("status %d, want %d", rec.Status, tc.want)
			}
		})
	}
}

// deadlineWriter is a writer that can set a write deadline, as a
// connection's writer can.
type deadlineWriter struct {
	http.ResponseWriter
	set bool
}

func (d *deadlineWriter) SetWriteDeadline(time.Time) error { d.set = true; return nil }

// http.ResponseController reaches the writer underneath through Unwrap.
func TestRecorderUnwraps(t *testing.T) {
	under := &deadlineWriter{ResponseWriter: httptest.NewRecorder()}
	rec := &Recorder{ResponseWriter: under}
	if err := http.NewResponseController(rec).SetWriteDeadline(time.Now()); err != nil || !under.set {
		t.Errorf("SetWriteDeadline through the recorder: %v, reached the writer: %v", err, under.set)
	}
}

// Report gives the status a handler answered with, and nothing for a
// handler that wrote nothing.
func TestReportGivesTheStatusServed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		serve http.HandlerFunc
		want  []int
	}{
		{"an answer", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }, []int{418}},
		{"nothing written", func(http.ResponseWriter, *http.Request) {}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			Report(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil), tc.serve,
				func(_ context.Context, status int) { got = append(got, status) })
			if !slices.Equal(got, tc.want) {
				t.Errorf("reported %v, want %v", got, tc.want)
			}
		})
	}
}
