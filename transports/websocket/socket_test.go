package websocket

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

// echoSocket serves one Socket per connection that sends every message
// back with its type, and reports each socket's end.
func echoSocket(t *testing.T, opts SocketOptions) (string, <-chan string) {
	t.Helper()
	ended := make(chan string, 4)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		var sock *Socket
		sock = NewSocket(context.Background(), c, opts, func(typ websocket.MessageType, msg []byte) {
			sock.Send(typ, msg, 0)
		})
		sock.Start()
		<-sock.Context().Done()
		sock.Close()
		ended <- sock.Reason()
	}))
	t.Cleanup(hs.Close)
	return "ws" + strings.TrimPrefix(hs.URL, "http"), ended
}

func TestASocketKeepsTheOrderOfTextAndBinaryMessages(t *testing.T) {
	url, ended := echoSocket(t, SocketOptions{})
	c := dial(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	type msg struct {
		Typ  websocket.MessageType
		Data string
	}
	sent := []msg{{websocket.MessageText, `{"event":"start"}`}, {websocket.MessageBinary, "\x00\x01"}, {websocket.MessageText, `{"event":"mark"}`}}
	for _, m := range sent {
		if err := c.Write(ctx, m.Typ, []byte(m.Data)); err != nil {
			t.Fatal(err)
		}
	}
	var got []msg
	for range sent {
		typ, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, msg{typ, string(b)})
	}
	if diff := cmp.Diff(sent, got); diff != "" {
		t.Errorf("echoes (-sent +got):\n%s", diff)
	}
	c.Close(websocket.StatusNormalClosure, "")
	if reason := <-ended; reason != "the client closed the connection" {
		t.Errorf("ended for %q", reason)
	}
}

func TestASocketDropsFramesPastItsQueueAndCountsThem(t *testing.T) {
	var done chan struct{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		sock := NewSocket(context.Background(), c, SocketOptions{MaxOutboundBytes: 10 << 10, WriteTimeout: 200 * time.Millisecond, PingInterval: -1}, func(websocket.MessageType, []byte) {})
		queued := 0
		for range 1000 { // 1 MB at once to a client that does not read
			b := append(sock.Frame(websocket.MessageBinary, 1000), make([]byte, 1000)...)
			if sock.SendFrame(b) {
				queued++
			}
		}
		st := sock.Stats()
		sock.End("done", CloseNormal, true)
		sock.Close()
		if st.Dropped == 0 || queued+int(st.Dropped) != 1000 || st.QueueHighWater > 11 {
			t.Errorf("queued %d, stats %+v: want at most 10 KiB queued and the rest dropped and counted", queued, st)
		}
		close(done)
	}))
	defer hs.Close()
	done = make(chan struct{})
	dial(t, "ws"+strings.TrimPrefix(hs.URL, "http"))
	<-done
}
