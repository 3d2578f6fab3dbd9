package inspector

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/hostcheck"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/telemetry"
)

//go:embed assets
var assets embed.FS

// Options configure an [Inspector]. The zero value works.
type Options struct {
	// Authorize decides whether a request may see the inspector; a non-nil
	// error answers 403. Default: loopback clients only, and only requests
	// that came through no proxy: a request with a forwarding header
	// (Forwarded, X-Forwarded-For, X-Real-IP, Via, ...) is refused, since
	// behind a proxy on the same host every client's connection comes from
	// loopback. Set it to serve the inspector through a proxy.
	Authorize func(*http.Request) error
	// AllowHosts are the Host header values the inspector answers besides
	// localhost names and IP literals, which it always answers (a page
	// whose domain rebinds to 127.0.0.1 sends its own name, and gets a
	// 403): exact names, "*.example.com" or "*". Default: none.
	AllowHosts []string
	// MaxSessions bounds the sessions tracked (live and recently ended).
	// Default: 64.
	MaxSessions int
	// Messages is how many RTVI messages are kept per direction. Default: 50.
	Messages int
	// Spans is how many spans are kept per session. Default: 256.
	Spans int
}

// Inspector is the live session inspector.
type Inspector struct {
	opts Options
	tel  *telemetry.Telemetry
	tp   *sdktrace.TracerProvider
	mux  *http.ServeMux
	// hosts is the Host allowlist of Options.AllowHosts.
	hosts hostcheck.Allowlist

	mu       sync.Mutex
	sessions map[string]*Session
	order    []string
	byTrace  map[trace.TraceID]*Session
}

// New returns an inspector. Close it when done.
func New(ctx context.Context, opts Options) (*Inspector, error) {
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = 64
	}
	if opts.Messages <= 0 {
		opts.Messages = 50
	}
	if opts.Spans <= 0 {
		opts.Spans = 256
	}
	in := &Inspector{opts: opts, hosts: hostcheck.Allowlist{Hosts: opts.AllowHosts}, sessions: map[string]*Session{}, byTrace: map[trace.TraceID]*Session{}}
	in.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spanSink{in}))
	tel, err := telemetry.New(telemetry.Options{TracerProvider: in.tp})
	if err != nil {
		return nil, err
	}
	in.tel = tel
	sub, _ := fs.Sub(assets, "assets")
	in.mux = http.NewServeMux()
	in.mux.Handle("GET /", http.FileServerFS(sub))
	in.mux.HandleFunc("GET /api/sessions", in.list)
	in.mux.HandleFunc("GET /api/sessions/{id}", in.detail)
	return in, nil
}

// Close ends the inspector's sessions and its tracer.
func (in *Inspector) Close(ctx context.Context) error {
	_ = in.tel.Shutdown(ctx)
	return in.tp.Shutdown(ctx)
}

// ServeHTTP implements http.Handler, behind the Host allowlist
// (Options.AllowHosts) and Options.Authorize.
func (in *Inspector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !in.hosts.Check(w, r) {
		return
	}
	auth := in.opts.Authorize
	if auth == nil {
		auth = loopbackOnly
	}
	if err := auth(r); err != nil {
		msg := "forbidden"
		if errors.Is(err, errProxied) {
			msg = "forbidden: the inspector's default admits direct loopback clients only, and this request came through a proxy; set inspector.Options.Authorize to serve it through one"
		}
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	in.mux.ServeHTTP(w, r)
}

// errProxied refuses, by default, a request that names a client other
// than its connection's.
var errProxied = errors.New("inspector: the request came through a proxy; set Options.Authorize")

// forwardingHeaders are the headers a proxy adds to say who its client
// is (RFC 7239, the de facto X-Forwarded-* and X-Real-IP, RFC 9110's Via,
// and the CDNs' own).
var forwardingHeaders = []string{
	"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Forwarded-Server",
	"X-Real-Ip", "Via", "True-Client-Ip", "Cf-Connecting-Ip", "Fastly-Client-Ip", "X-Client-Ip", "X-Cluster-Client-Ip",
}

// loopbackOnly admits a loopback connection that came through no proxy.
func loopbackOnly(r *http.Request) error {
	for _, h := range forwardingHeaders {
		if _, ok := r.Header[h]; ok {
			return errProxied
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err == nil {
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
			return nil
		}
	}
	return errors.New("inspector: loopback clients only")
}

// Session is what the inspector keeps of one session.
type Session struct {
	in      *Inspector
	id      string
	started time.Time
	tel     *telemetry.Session

	mu     sync.Mutex
	ended  bool
	nodes  map[observers.Node]*nodeStats
	order  []observers.Node
	edges  map[edge]uint64
	in_    ring[message]
	out    ring[message]
	spans  ring[sdktrace.ReadOnlySpan]
	frames uint64
}

type nodeStats struct {
	Name      string `json:"name"`
	Received  uint64 `json:"received"`
	Processed uint64 `json:"processed"`
	Queue     int64  `json:"queue"`
}

type edge struct {
	from, to observers.Node
	up       bool
}

type message struct {
	At      float64 `json:"at_ms"`
	Type    string  `json:"type"`
	Preview string  `json:"preview"`
}

// StartSession tracks a session; Attach it to its task. It returns nil
// (whose methods do nothing) when MaxSessions are tracked and none has
// ended, and on a nil Inspector (one a program did not turn on).
func (in *Inspector) StartSession(ctx context.Context, id string) *Session {
	if in == nil {
		return nil
	}
	in.mu.Lock()
	full := len(in.order) >= in.opts.MaxSessions && !in.evictLocked()
	in.mu.Unlock()
	if full {
		return nil
	}
	s := &Session{in: in, id: id, started: time.Now(), nodes: map[observers.Node]*nodeStats{}, edges: map[edge]uint64{}}
	s.in_.init(in.opts.Messages)
	s.out.init(in.opts.Messages)
	s.spans.init(in.opts.Spans)
	// The session span starts before the session is registered (the span
	// sink takes in.mu), so it is put in the ring here.
	s.tel = in.tel.StartSession(ctx, telemetry.SessionOptions{ID: id})
	root := trace.SpanFromContext(s.tel.ContextWith(ctx))
	if ro, ok := root.(sdktrace.ReadOnlySpan); ok {
		s.spans.put(ro)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if old := in.sessions[id]; old != nil {
		in.removeLocked(id)
	}
	in.byTrace[root.SpanContext().TraceID()] = s
	in.sessions[id] = s
	in.order = append(in.order, id)
	return s
}

func (in *Inspector) evictLocked() bool {
	for _, id := range in.order {
		s := in.sessions[id]
		s.mu.Lock()
		ended := s.ended
		s.mu.Unlock()
		if ended {
			in.removeLocked(id)
			return true
		}
	}
	return false
}

func (in *Inspector) removeLocked(id string) {
	delete(in.sessions, id)
	for i, v := range in.order {
		if v == id {
			in.order = append(in.order[:i], in.order[i+1:]...)
			break
		}
	}
	for k, s := range in.byTrace {
		if s.id == id {
			delete(in.byTrace, k)
		}
	}
}

// Attach adds the session's observers to task and marks the session ended
// when the task finishes.
func (s *Session) Attach(task *pipeline.Task) {
	if s == nil {
		return
	}
	task.AddObserver(s)
	s.tel.Attach(task)
	task.OnFinished(func(string) { s.End() })
}

// End marks the session ended; it stays listed until evicted.
func (s *Session) End() {
	if s == nil {
		return
	}
	s.tel.End("ended")
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
}

// Observe implements observers.Observer: frame counts per node and edge,
// the queue estimate (received minus processed; an interruption the node
// processes resets it, as it flushes the queue), and RTVI messages.
func (s *Session) Observe(e observers.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e.Kind {
	case observers.Pushed:
		if e.FirstSeen {
			s.frames++
		}
		if e.Source != nil {
			s.node(e.Source)
		}
		if e.Destination != nil {
			n := s.node(e.Destination)
			n.Received++
			n.Queue++
		}
		if e.Source != nil && e.Destination != nil && len(s.edges) < 1024 {
			s.edges[edge{e.Source, e.Destination, e.Direction == frames.Upstream}]++
		}
		if e.FirstSeen {
			switch f := e.Frame.(type) {
			case *frames.InputTransportMessage:
				s.in_.put(msg(e.At, messageType(f.Message), f.Message))
			case *frames.OutputTransportMessageUrgent:
				s.out.put(msg(e.At, f.Type, f.Message))
			case *frames.OutputTransportMessage:
				s.out.put(msg(e.At, f.Type, f.Message))
			}
		}
	case observers.Processed:
		n := s.node(e.Destination)
		n.Processed++
		n.Queue = max(n.Queue-1, 0)
		if _, ok := e.Frame.(*frames.Interruption); ok {
			n.Queue = 0
		}
	}
}

func (s *Session) node(n observers.Node) *nodeStats {
	st := s.nodes[n]
	if st == nil {
		st = &nodeStats{Name: n.Name()}
		s.nodes[n] = st
		s.order = append(s.order, n)
	}
	return st
}

func msg(at time.Duration, typ string, b []byte) message {
	p := b
	if len(p) > 300 {
		p = p[:300]
	}
	return message{At: float64(at) / 1e6, Type: typ, Preview: string(p)}
}

// ring is a fixed-size ring of the latest values.
type ring[T any] struct {
	buf  []T
	next int
	full bool
}

func (r *ring[T]) init(n int) { r.buf = make([]T, n) }

func (r *ring[T]) put(v T) {
	r.buf[r.next] = v
	r.next = (r.next + 1) % len(r.buf)
	if r.next == 0 {
		r.full = true
	}
}

func (r *ring[T]) all() []T {
	if !r.full {
		return append([]T(nil), r.buf[:r.next]...)
	}
	return append(append([]T(nil), r.buf[r.next:]...), r.buf[:r.next]...)
}

// spanSink routes the inspector's spans to their session, as they start.
type spanSink struct{ in *Inspector }

func (k spanSink) OnStart(_ context.Context, sp sdktrace.ReadWriteSpan) {
	k.in.mu.Lock()
	s := k.in.byTrace[sp.SpanContext().TraceID()]
	k.in.mu.Unlock()
	if s != nil {
		s.mu.Lock()
		s.spans.put(sp)
		s.mu.Unlock()
	}
}
func (spanSink) OnEnd(sdktrace.ReadOnlySpan)      {}
func (spanSink) Shutdown(context.Context) error   { return nil }
func (spanSink) ForceFlush(context.Context) error { return nil }

type sessionJSON struct {
	ID      string    `json:"id"`
	Started time.Time `json:"started"`
	Ended   bool      `json:"ended"`
	Frames  uint64    `json:"frames"`
}

func (in *Inspector) list(w http.ResponseWriter, _ *http.Request) {
	in.mu.Lock()
	out := make([]sessionJSON, 0, len(in.order))
	for _, id := range in.order {
		s := in.sessions[id]
		s.mu.Lock()
		out = append(out, sessionJSON{s.id, s.started, s.ended, s.frames})
		s.mu.Unlock()
	}
	in.mu.Unlock()
	writeJSON(w, out)
}

type spanJSON struct {
	ID      string         `json:"id"`
	Parent  string         `json:"parent"`
	Name    string         `json:"name"`
	StartMS float64        `json:"start_ms"`
	EndMS   float64        `json:"end_ms"` // -1 while open
	Attrs   map[string]any `json:"attrs"`
}

type detailJSON struct {
	sessionJSON
	Nodes []nodeStats `json:"nodes"`
	Edges []edgeJSON  `json:"edges"`
	Spans []spanJSON  `json:"spans"`
	In    []message   `json:"rtvi_in"`
	Out   []message   `json:"rtvi_out"`
}

type edgeJSON struct {
	From   int    `json:"from"`
	To     int    `json:"to"`
	Up     bool   `json:"up"`
	Frames uint64 `json:"frames"`
}

func (in *Inspector) detail(w http.ResponseWriter, r *http.Request) {
	in.mu.Lock()
	s := in.sessions[r.PathValue("id")]
	in.mu.Unlock()
	if s == nil {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	d := detailJSON{sessionJSON: sessionJSON{s.id, s.started, s.ended, s.frames}, In: s.in_.all(), Out: s.out.all()}
	index := map[observers.Node]int{}
	for i, n := range s.order {
		index[n] = i
		d.Nodes = append(d.Nodes, *s.nodes[n])
	}
	for e, c := range s.edges {
		d.Edges = append(d.Edges, edgeJSON{index[e.from], index[e.to], e.up, c})
	}
	spans := s.spans.all()
	s.mu.Unlock()
	sort.Slice(d.Edges, func(i, j int) bool { return d.Edges[i].From < d.Edges[j].From })
	for _, sp := range spans {
		j := spanJSON{ID: sp.SpanContext().SpanID().String(), Name: sp.Name(), Attrs: map[string]any{},
			StartMS: float64(sp.StartTime().Sub(s.started)) / 1e6, EndMS: -1}
		if sp.Parent().IsValid() {
			j.Parent = sp.Parent().SpanID().String()
		}
		if !sp.EndTime().IsZero() {
			j.EndMS = float64(sp.EndTime().Sub(s.started)) / 1e6
		}
		for _, kv := range sp.Attributes() {
			j.Attrs[string(kv.Key)] = kv.Value.AsInterface()
		}
		d.Spans = append(d.Spans, j)
	}
	writeJSON(w, d)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}
