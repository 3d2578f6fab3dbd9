package websockettest

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/framewire/framewire/transports/websocket/wire"
)

// What the browser client sends: 16 kHz mono (its recorderSampleRate's
// default) in 512-byte frames, 256 samples or 16 ms (the chunk size its
// media manager is given); docs/decisions/websocket-wire.md, "Chunks".
const (
	// DefaultSampleRate is the rate of the audio the client sends.
	DefaultSampleRate = 16000
	// DefaultFrameBytes is the PCM of one frame the client sends.
	DefaultFrameBytes = 512
)

// maxReadBytes bounds one message from the server.
const maxReadBytes = 4 << 20

// messageBuffer is how many of the server's messages [Client.Messages]
// holds; past it they are dropped and counted.
const messageBuffer = 256

// Options configure a [Client].
type Options struct {
	// URL is the server's /connect (http or https: the client POSTs
	// RequestData there and dials the wsUrl it answers), or a socket URL
	// (ws or wss: dialled as it is). Required.
	URL string
	// HTTP is the client for /connect and the handshake. Default:
	// http.DefaultClient.
	HTTP *http.Client
	// RequestData is the JSON body of the /connect. Default: {}.
	RequestData any
	// Audio is 16-bit little-endian mono PCM at SampleRate that the
	// client streams up in frames of FrameBytes, one per frame's duration,
	// in a loop; nil sends no audio. The client only reads it: many
	// clients may share one (see [Tone]).
	Audio []byte
	// SampleRate is Audio's rate. Default: [DefaultSampleRate].
	SampleRate int
	// FrameBytes is the PCM in each frame sent (even). Default:
	// [DefaultFrameBytes].
	FrameBytes int
}

func (o Options) withDefaults() Options {
	if o.HTTP == nil {
		o.HTTP = http.DefaultClient
	}
	if o.SampleRate <= 0 {
		o.SampleRate = DefaultSampleRate
	}
	if o.FrameBytes <= 0 {
		o.FrameBytes = DefaultFrameBytes
	}
	o.FrameBytes &^= 1
	return o
}

// Client is one simulated browser client on one socket. Its counters may
// be read at any time.
type Client struct {
	opts Options
	c    *websocket.Conn
	// stop ends the streamer. The socket's reads and writes take no
	// context that Close cancels: coder/websocket closes a socket at once
	// when one ends, and Close wants a close handshake first.
	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
	msgs     chan []byte
	done     chan struct{} // closed when the reader stops
	err      error         // why the reader stopped; read after done

	// AudioFramesIn counts the server's audio frames received;
	// AudioSamplesIn their samples (per channel).
	AudioFramesIn  atomic.Uint64
	AudioSamplesIn atomic.Uint64
	// MessagesIn counts the server's other frames (RTVI messages first);
	// MessagesDropped those that found Messages full.
	MessagesIn      atomic.Uint64
	MessagesDropped atomic.Uint64
	// FramesOut counts the audio frames sent.
	FramesOut atomic.Uint64
	// LastAudioRate is the sample rate the last audio frame said.
	LastAudioRate atomic.Int64
}

// Dial connects a client and starts its streaming. ctx bounds the
// connect only.
func Dial(ctx context.Context, opts Options) (*Client, error) {
	opts = opts.withDefaults()
	wsURL, err := socketURL(ctx, opts)
	if err != nil {
		return nil, err
	}
	c, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPClient: opts.HTTP})
	if err != nil {
		if resp != nil {
			return nil, &StatusError{Code: resp.StatusCode, URL: wsURL}
		}
		return nil, fmt.Errorf("websockettest: dial %s: %w", wsURL, err)
	}
	c.SetReadLimit(maxReadBytes)
	cl := &Client{opts: opts, c: c, msgs: make(chan []byte, messageBuffer), done: make(chan struct{}), stop: make(chan struct{})}
	cl.wg.Add(1)
	go func() { defer cl.wg.Done(); cl.read() }()
	if len(opts.Audio) >= opts.FrameBytes {
		cl.wg.Add(1)
		go func() { defer cl.wg.Done(); cl.stream() }()
	}
	return cl, nil
}

// StatusError is a /connect or handshake the server refused.
type StatusError struct {
	Code int
	URL  string
	Body string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("websockettest: %s: HTTP %d %s", e.URL, e.Code, e.Body)
}

// socketURL is opts.URL when it is a socket's, else what its /connect
// answers.
func socketURL(ctx context.Context, opts Options) (string, error) {
	u, err := url.Parse(opts.URL)
	if err != nil {
		return "", fmt.Errorf("websockettest: URL %q: %w", opts.URL, err)
	}
	switch u.Scheme {
	case "ws", "wss":
		return opts.URL, nil
	case "http", "https":
	default:
		return "", fmt.Errorf("websockettest: URL %q: want http(s) for /connect or ws(s) for the socket", opts.URL)
	}
	data := opts.RequestData
	if data == nil {
		data = struct{}{}
	}
	body, err := json.Marshal(data)
	if err != nil {
		return "", fmt.Errorf("websockettest: RequestData: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, opts.URL, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("websockettest: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := opts.HTTP.Do(req)
	if err != nil {
		return "", fmt.Errorf("websockettest: POST %s: %w", opts.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", fmt.Errorf("websockettest: POST %s: %w", opts.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", &StatusError{Code: resp.StatusCode, URL: opts.URL, Body: strings.TrimSpace(string(b))}
	}
	var answer struct {
		WSURL string `json:"wsUrl"`
	}
	if err := json.Unmarshal(b, &answer); err != nil || answer.WSURL == "" {
		return "", fmt.Errorf("websockettest: POST %s answered %q, not {\"wsUrl\": ...}", opts.URL, b)
	}
	return answer.WSURL, nil
}

// stream sends Audio in frames at real time. Like independent browsers,
// each client starts its clock at a random point of the frame period, so
// that many clients dialled together do not send in lockstep.
func (cl *Client) stream() {
	n := cl.opts.FrameBytes
	period := time.Duration(n/2) * time.Second / time.Duration(cl.opts.SampleRate)
	start := time.NewTimer(rand.N(period))
	defer start.Stop()
	select {
	case <-cl.stop:
		return
	case <-start.C:
	}
	t := time.NewTicker(period)
	defer t.Stop()
	audio := cl.opts.Audio
	buf := make([]byte, 0, wire.AudioSize(n, cl.opts.SampleRate, 1))
	for off := 0; ; off += n {
		select {
		case <-cl.stop:
			return
		case <-t.C:
		}
		if off+n > len(audio) {
			off = 0
		}
		buf = wire.AppendAudio(buf[:0], audio[off:off+n], cl.opts.SampleRate, 1)
		if err := cl.c.Write(context.Background(), websocket.MessageBinary, buf); err != nil {
			return
		}
		cl.FramesOut.Add(1)
	}
}

// read reads the server's frames until the socket closes.
func (cl *Client) read() {
	defer close(cl.done)
	buf := make([]byte, 0, 4<<10)
	dec := wire.Decoder{MaxMessageBytes: maxReadBytes}
	for {
		_, r, err := cl.c.Reader(context.Background())
		if err == nil {
			buf, err = readAll(buf[:0], r)
		}
		if err != nil {
			cl.err = err
			return
		}
		f, err := dec.Decode(buf)
		if err != nil {
			cl.err = fmt.Errorf("websockettest: the server sent an invalid frame: %w", err)
			_ = cl.c.Close(websocket.StatusInvalidFramePayloadData, "invalid frame")
			return
		}
		if f.Kind == wire.KindAudio {
			cl.AudioFramesIn.Add(1)
			cl.AudioSamplesIn.Add(uint64(len(f.Audio) / (2 * max(f.Channels, 1))))
			cl.LastAudioRate.Store(int64(f.SampleRate))
			continue
		}
		cl.MessagesIn.Add(1)
		if f.Kind != wire.KindMessage {
			continue
		}
		select {
		case cl.msgs <- bytes.Clone(f.Data):
		default:
			cl.MessagesDropped.Add(1)
		}
	}
}

// readAll reads r to its end into buf, growing it as needed.
func readAll(buf []byte, r io.Reader) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// Messages returns the server's RTVI messages (their JSON), in order.
func (cl *Client) Messages() <-chan []byte { return cl.msgs }

// Send sends msg (a JSON envelope, for RTVI) as a message frame.
func (cl *Client) Send(ctx context.Context, msg []byte) error {
	return cl.c.Write(ctx, websocket.MessageBinary, wire.AppendMessage(nil, msg))
}

// Done is closed when the socket has closed (the server ended the
// session, or Close).
func (cl *Client) Done() <-chan struct{} { return cl.done }

// Err returns why the socket closed, once Done is closed: a
// websocket.CloseError with the server's code when it closed it.
func (cl *Client) Err() error {
	select {
	case <-cl.done:
		return cl.err
	default:
		return nil
	}
}

// CloseStatus returns the close code the server closed the socket with,
// or -1 (none, or the socket is open).
func (cl *Client) CloseStatus() websocket.StatusCode { return websocket.CloseStatus(cl.Err()) }

// Close closes the socket with a normal closure, as a page that
// disconnects, waiting up to a second for the server's answer, and stops
// the client's goroutines.
func (cl *Client) Close() {
	cl.stopOnce.Do(func() { close(cl.stop) }) // the reader reads on, for the close handshake
	closed := make(chan struct{})
	go func() { defer close(closed); _ = cl.c.Close(websocket.StatusNormalClosure, "") }()
	select {
	case <-closed:
	case <-time.After(time.Second):
	}
	_ = cl.c.CloseNow()
	<-closed
	cl.wg.Wait()
}

// Tone returns d of a sine at hz with the given peak as 16-bit
// little-endian mono PCM at rate, for Options.Audio. Choose d so that it
// holds whole periods, and it loops without a click.
func Tone(hz, peak float64, rate int, d time.Duration) []byte {
	n := int(int64(rate) * int64(d) / int64(time.Second))
	pcm := make([]byte, 2*n)
	for i := range n {
		v := peak * math.Sin(2*math.Pi*hz*float64(i)/float64(rate))
		binary.LittleEndian.PutUint16(pcm[2*i:], uint16(int16(v)))
	}
	return pcm
}
