package pollwake

import "os"

// Ticker ticks through the network poller. Wait and Close may be called
// from different goroutines; Close ends a blocked Wait.
type Ticker struct {
	f *os.File
}

// Close stops the ticker and releases its file descriptor.
func (t *Ticker) Close() error { return t.f.Close() }
