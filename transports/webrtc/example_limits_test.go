package webrtc_test

import (
	"context"
	"net/netip"
	"os"
	"time"

	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/webrtc"
)

// A server for the open internet behind a reverse proxy: a shared bearer
// token, per-address limits counted on the address the proxy forwards,
// and TURN credentials of its own for each client.
func ExampleBearerTokens() {
	srv, err := webrtc.NewServer(webrtc.Options{
		NewPipeline: func(_ context.Context, s *webrtc.Session) (*pipeline.Task, error) {
			return pipeline.NewTask(pipeline.New(s.Input(), s.Output()), pipeline.TaskOptions{}), nil
		},
		Authorize:      webrtc.BearerTokens(os.Getenv("BOT_TOKEN")),
		PerIP:          webrtc.IPLimits{MaxSessions: 4, Rate: 2},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		TURN: &webrtc.TURNCredentials{
			URLs:   []string{"turn:turn.example.com:3478"},
			Secret: []byte(os.Getenv("TURN_SECRET")),
			TTL:    2 * time.Hour,
		},
	})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	// webrtc.ListenAndServe(ctx, ":8080", srv, webrtc.ServeOptions{})
}
