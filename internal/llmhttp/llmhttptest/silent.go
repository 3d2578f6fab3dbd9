package llmhttptest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Silent is a TCP server on the loopback interface that accepts every
// connection and never sends a byte: for a client it is a server that
// accepted and never answered. Over https:// the TLS handshake never
// completes (the client's connect phase); over http:// or ws:// the request
// or the websocket handshake is never answered. It reports when the client
// closes a connection.
type Silent struct {
	// Addr is the server's host:port; dial "https://"+Addr, "ws://"+Addr
	// and so on.
	Addr string
	// Closed receives one value each time the client closes a connection.
	Closed chan struct{}

	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

// NewSilent starts a Silent server for the test t and stops it, closing
// the connections it holds, when t ends.
func NewSilent(t testing.TB) *Silent {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Silent{Addr: ln.Addr().String(), Closed: make(chan struct{}, 16), ln: ln}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.stop)
	return s
}

func (s *Silent) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			// Read and drop what the client sends until it hangs up.
			if _, err := io.Copy(io.Discard, c); err == nil {
				select {
				case s.Closed <- struct{}{}:
				default:
				}
			}
		}()
	}
}

func (s *Silent) stop() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}
