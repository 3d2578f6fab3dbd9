package bus

import (
	"context"
	"testing"

	"github.com/framewire/framewire/internal/natstest"
)

// BenchmarkRequest measures one call with two progress payloads and a
// result, end to end.
func BenchmarkRequest(b *testing.B) {
	payload := make([]byte, 256)
	for _, im := range impls {
		b.Run(im.name, func(b *testing.B) {
			var p pair
			switch im.name {
			case "local":
				bus := Local(Options{})
				p = pair{caller: bus, callee: bus}
			default:
				url := natstest.Embedded(b)
				p = pair{caller: NATS(natstest.Connect(b, url), Options{}), callee: NATS(natstest.Connect(b, url), Options{})}
			}
			svc, err := p.callee.Serve(b.Context(), "bench.echo", func(_ context.Context, req []byte, progress func([]byte)) ([]byte, error) {
				progress(req)
				progress(req)
				return req, nil
			})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = svc.Stop() }()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.caller.Request(b.Context(), "bench.echo", payload, func([]byte) {}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
