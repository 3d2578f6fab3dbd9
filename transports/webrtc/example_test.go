package webrtc_test

import (
	"context"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/transports/webrtc"
)

// A bot server: every browser client that connects gets its own pipeline,
// built by the factory around the session's input and output transports.
func ExampleNewServer() {
	srv, err := webrtc.NewServer(webrtc.Options{
		NewPipeline: func(ctx context.Context, s *webrtc.Session) (*pipeline.Task, error) {
			rt := rtvi.NewProcessor(rtvi.Options{})
			p := pipeline.New(s.Input(), rt /* your processors */, s.Output())
			return pipeline.NewTask(p, pipeline.TaskOptions{}), nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	// The server handles POST/PATCH /api/offer, POST /start and the
	// /sessions/{id}/... routes of the small-webrtc-transport client; mount
	// it next to your page, or serve it on its own.
	mux := http.NewServeMux()
	mux.Handle("/", srv)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	serve := func() {
		// main owns the signals: the first SIGINT or SIGTERM ends ctx, a
		// second one kills the process.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		context.AfterFunc(ctx, stop)
		// Until ctx ends, with production HTTP timeouts; then the sessions
		// end gracefully and ListenAndServe returns.
		if err := webrtc.ListenAndServe(ctx, "127.0.0.1:7860", srv, webrtc.ServeOptions{Handler: mux}); err != nil {
			log.Fatal(err)
		}
	}
	_ = serve // serve()
}
