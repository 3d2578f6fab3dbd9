package webrtc_test

import (
	"context"
	"log"
	"net/http"

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
		// Until SIGINT or SIGTERM, with production HTTP timeouts; then the
		// sessions end gracefully and ListenAndServe returns.
		if err := webrtc.ListenAndServe(context.Background(), "127.0.0.1:7860", srv, webrtc.ServeOptions{Handler: mux}); err != nil {
			log.Fatal(err)
		}
	}
	_ = serve // serve()
}
