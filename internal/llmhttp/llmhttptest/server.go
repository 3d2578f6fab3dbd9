// Package llmhttptest is a fake streaming HTTP server for the tests of the
// clients built on package llmhttp (processors/llm/openai, anthropic and
// gemini, processors/tts/openai, processors/stt/openai). It replays canned
// answers read from the test's testdata/ (event streams, audio and error
// bodies), records every request, and misbehaves on demand the ways that
// matter to a streaming client: it can accept a request and never answer,
// or stall after the headers or in the middle of a stream, and it reports
// when the client closed such a request. [Silent] is a TCP server that
// accepts and never says a word (for connect bounds, websockets included).
// The LLM helpers (Collect, RunService, the Check functions, Conversation
// and Golden for the request encoders, AddFixtures, Repeat and
// BenchStreamPerToken for fuzzing and benchmarks) are the tests the LLM
// clients share; each client keeps the ones that state its own wire facts.
//
// It follows the net/http/httptest pattern: a normal package imported only
// from _test.go files.
package llmhttptest

import (
	"bytes"
	"cmp"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Answer is one canned reply.
type Answer struct {
	// Status is the HTTP status; 0 means 200 OK.
	Status int
	// ContentType is the Content-Type header; empty means
	// text/event-stream for a 200 and application/json otherwise.
	ContentType string
	// Header holds further headers, such as Retry-After.
	Header http.Header
	// Body is written event by event (split after each blank line), each
	// flushed, so the client reads a stream as a real server sends it.
	Body []byte
	// Hang accepts the request and never answers, until the client closes
	// it; the other fields are ignored.
	Hang bool
	// Stall writes the headers and Body and then holds the stream open
	// without another byte, until the client closes it.
	Stall bool
	// Gap, when positive, is the pause before each event after the first,
	// so the client reads them from the network one by one.
	Gap time.Duration
}

// Request is what the server received.
type Request struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
}

// Server answers each request with the next of its answers; the last one
// answers every request after it.
type Server struct {
	// URL is the server's base address, http://127.0.0.1:PORT.
	URL string
	// Closed receives one value each time a hanging or stalled request is
	// closed by the client.
	Closed chan struct{}

	srv     *httptest.Server
	answers []Answer

	mu       sync.Mutex
	requests []Request
}

// New starts a Server for the test t and closes it when t ends. It needs at
// least one answer.
func New(t testing.TB, answers ...Answer) *Server {
	t.Helper()
	if len(answers) == 0 {
		t.Fatal("llmhttptest: a server needs at least one answer")
	}
	s := &Server{answers: answers, Closed: make(chan struct{}, 16)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Client returns an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Requests returns the requests so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	a := s.answers[min(len(s.requests), len(s.answers)-1)]
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	s.mu.Unlock()
	if a.Hang {
		<-r.Context().Done()
		s.Closed <- struct{}{}
		return
	}
	for k, v := range a.Header {
		w.Header()[k] = v
	}
	status := cmp.Or(a.Status, http.StatusOK)
	ct := a.ContentType
	if ct == "" {
		ct = "application/json"
		if status == http.StatusOK {
			ct = "text/event-stream"
		}
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush() // the headers go out even when no body follows
	}
	for first, rest := true, a.Body; len(rest) > 0; first = false {
		if a.Gap > 0 && !first {
			select {
			case <-time.After(a.Gap):
			case <-r.Context().Done():
				return
			}
		}
		n := bytes.Index(rest, []byte("\n\n"))
		if n < 0 {
			n = len(rest)
		} else {
			n += 2
		}
		if _, err := w.Write(rest[:n]); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		rest = rest[n:]
	}
	if a.Stall {
		<-r.Context().Done()
		s.Closed <- struct{}{}
	}
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
