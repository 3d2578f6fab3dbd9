package bus_test

import (
	"context"
	"testing"

	"github.com/framewire/framewire/bus"
	"github.com/framewire/framewire/bus/bustest"
)

// BenchmarkRequest measures one call with two progress payloads and a
// result, end to end.
func BenchmarkRequest(b *testing.B) {
	payload := make([]byte, 256)
	for _, im := range bustest.Impls() {
		b.Run(im.Name, func(b *testing.B) {
			p := im.New(b, bus.Options{})
			svc, err := p.Callee.Serve(b.Context(), "bench.echo", func(_ context.Context, req []byte, progress func([]byte)) ([]byte, error) {
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
				if _, err := p.Caller.Request(b.Context(), "bench.echo", payload, func([]byte) {}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
