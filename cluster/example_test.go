package cluster_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/framewire/framewire/cluster"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/webrtc"
	"github.com/framewire/framewire/transports/websocket"
)

// A worker process: the application's webrtc.Server, put at the
// cluster's disposal until SIGTERM, then drained (a second SIGTERM kills
// it at once).
func ExampleWorker() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	nc, err := nats.Connect("nats://127.0.0.1:4222", nats.MaxReconnects(-1))
	if err != nil {
		panic(err)
	}
	defer nc.Close()
	// The Server's MaxSessions is the worker's capacity.
	w, err := cluster.NewWorker(nc, webrtc.Options{
		MaxSessions: 100,
		NewPipeline: func(_ context.Context, s *webrtc.Session) (*pipeline.Task, error) {
			return pipeline.NewTask(pipeline.New(s.Input(), s.Output()), pipeline.TaskOptions{}), nil
		},
	}, cluster.WorkerOptions{})
	if err != nil {
		panic(err)
	}
	if err := w.Run(ctx); err != nil {
		panic(err)
	}
}

// A worker that serves Pipecat's WebSocket transport beside WebRTC: the
// front doors relay a /connect to it, and the browser opens its socket to
// the worker's own listener, under the worker's public name.
func ExampleWebSocketOptions() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	nc, err := nats.Connect("nats://127.0.0.1:4222", nats.MaxReconnects(-1))
	if err != nil {
		panic(err)
	}
	defer nc.Close()
	// The sockets' listener, behind a TLS proxy that sends
	// wss://w1.voice.example.com/ws to it.
	ln, err := net.Listen("tcp", ":7881")
	if err != nil {
		panic(err)
	}
	bot := func(in, out pipeline.Processor) *pipeline.Task {
		return pipeline.NewTask(pipeline.New(in, out), pipeline.TaskOptions{})
	}
	w, err := cluster.NewWorker(nc, webrtc.Options{
		MaxSessions: 100,
		NewPipeline: func(_ context.Context, s *webrtc.Session) (*pipeline.Task, error) {
			return bot(s.Input(), s.Output()), nil
		},
	}, cluster.WorkerOptions{ID: "w1", WebSocket: &cluster.WebSocketOptions{
		Listener: ln,
		Server: websocket.Options{
			PublicURL:    "wss://w1.voice.example.com/ws",
			AllowOrigins: []string{"https://voice.example.com"},
			MaxSessions:  100,
			NewPipeline: func(_ context.Context, s *websocket.Session) (*pipeline.Task, error) {
				return bot(s.Input(), s.Output()), nil
			},
		},
	}})
	if err != nil {
		panic(err)
	}
	if err := w.Run(ctx); err != nil { // serves ln, and closes it once drained
		panic(err)
	}
}

// A front door process: the signalling routes for the whole cluster, for
// the browsers that reach it as voice.example.com and hold a token, with
// its health next to them and the cluster's state on the operators' own
// listener. NATS is reached with a user and password (or
// nats.UserCredentials, nats.Nkey) over TLS.
func ExampleFrontDoor() {
	nc, err := nats.Connect("tls://nats.internal:4222", nats.MaxReconnects(-1),
		nats.UserInfo("frontdoor", os.Getenv("NATS_PASSWORD")), nats.RootCAs("/etc/framewire/nats-ca.pem"))
	if err != nil {
		panic(err)
	}
	defer nc.Close()
	fd, err := cluster.NewFrontDoor(nc, cluster.FrontDoorOptions{
		AllowHosts: []string{"voice.example.com"},
		Authorize:  webrtc.BearerTokens(os.Getenv("SIGNALLING_TOKEN")),
	})
	if err != nil {
		panic(err)
	}
	defer fd.Close()
	// The operators' listener, bounded like the public one; the example
	// waits for it before it returns.
	status := &http.Server{Addr: "127.0.0.1:7862", Handler: fd.StatusHandler(), ReadHeaderTimeout: 5 * time.Second}
	var wg sync.WaitGroup
	wg.Go(func() { _ = status.ListenAndServe() })
	defer wg.Wait()
	defer status.Close()
	mux := http.NewServeMux()
	mux.Handle("/", fd)
	mux.Handle("GET /healthz", fd.StatusHandler())
	hs := &http.Server{Addr: ":7861", Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	_ = hs.ListenAndServe()
}
