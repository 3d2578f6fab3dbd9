package webrtctest

// BufferedAmount returns the bytes the current data channel has queued
// and not yet sent, so that a test flooding the server can pace itself as
// a browser must (its send throws past 16 MiB) instead of buffering
// without bound in its own process.
func (c *Client) BufferedAmount() uint64 {
	l := c.current()
	if l == nil {
		return 0
	}
	return l.dc.BufferedAmount()
}
