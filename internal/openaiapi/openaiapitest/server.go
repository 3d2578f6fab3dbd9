package openaiapitest

import (
	"cmp"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Answer is one canned reply.
type Answer struct {
	// Status is the HTTP status; 0 means 200 OK.
	Status int
	// ContentType is the Content-Type header, when not empty.
	ContentType string
	// Header holds further headers, such as Retry-After.
	Header http.Header
	// Body is the answer's body.
	Body []byte
	// Drop hangs up without any answer, as a connection lost before the
	// server replied; the other fields are ignored.
	Drop bool
}

// Server answers each request with the next of its answers; the last one
// answers every request after it. It reads each request body to its end
// first, as a real server does before answering.
type Server struct {
	// URL is the server's base address, such as http://127.0.0.1:PORT,
	// with no path: append "/v1" for a client's BaseURL as needed.
	URL string

	srv     *httptest.Server
	answers []Answer

	mu       sync.Mutex
	requests int
}

// New starts a Server for the test t and closes it when t ends. It needs at
// least one answer.
func New(t testing.TB, answers ...Answer) *Server {
	t.Helper()
	if len(answers) == 0 {
		t.Fatal("openaiapitest: a server needs at least one answer")
	}
	s := &Server{answers: answers}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

// Requests counts the requests so far, dropped ones included.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Close stops the server and waits for the requests in flight; calling it
// again does nothing.
func (s *Server) Close() { s.srv.Close() }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	a := s.answers[min(s.requests, len(s.answers)-1)]
	s.requests++
	s.mu.Unlock()
	if a.Drop {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	for k, v := range a.Header {
		w.Header()[k] = v
	}
	if a.ContentType != "" {
		w.Header().Set("Content-Type", a.ContentType)
	}
	w.WriteHeader(cmp.Or(a.Status, http.StatusOK))
	_, _ = w.Write(a.Body)
}

// Fixture reads testdata/name of the package under test, failing t if it
// cannot.
func Fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
