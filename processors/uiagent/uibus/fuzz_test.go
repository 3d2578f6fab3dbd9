package uibus

import (
	"context"
	"testing"

	"github.com/framewire/framewire/bus"
	"github.com/framewire/framewire/processors/uiagent"
)

// FuzzPayloads sends whatever a broken or hostile peer could send to the
// decoders of both sides: the callee's worker and agent handlers read it
// as a request, the caller's RemoteWorker and Agent read it as a result.
// Nothing may panic, and a decoded result is one of the documented forms.
func FuzzPayloads(f *testing.F) {
	for _, s := range []string{
		`{"v":1,"status":"completed","response":{"found":"x"}}`,
		`{"v":1,"status":"failed","response":[1]}`,
		`{"v":1,"status":"error","error":"boom"}`,
		`{"v":2,"status":"completed"}`,
		`{"v":1,"text":"hi","outcome":"replied","skipped_refs":["e1"]}`,
		`{"v":1,"code":"no_answer","outcome":"no answer"}`,
		`{"v":1,"question":"what?"}`,
		`{"v":1,"worker":"w"}`,
		``, `null`, `[`, `{"v":1,"response":"\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b := bus.Local(bus.Options{})
		ctx := context.Background()
		svc, err := b.Serve(ctx, "fuzz.echo", func(context.Context, []byte, func([]byte)) ([]byte, error) { return data, nil })
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = svc.Stop() }()
		_, _ = RemoteWorker(b, "w", "fuzz.echo").Work(ctx, func(any) {})
		_, _ = Agent{Bus: b, Subject: "fuzz.echo"}.Ask(ctx, "?")

		for _, serve := range []func() (*bus.Service, error){
			func() (*bus.Service, error) {
				return ServeWorker(ctx, b, "fuzz.in", func(context.Context, func(any)) (any, error) { return "ok", nil })
			},
			func() (*bus.Service, error) {
				return ServeAgent(ctx, b, "fuzz.in", func(context.Context, string) (ans uiagent.Answer, err error) { return ans, nil })
			},
		} {
			in, err := serve()
			if err != nil {
				t.Fatal(err)
			}
			_, _ = b.Request(ctx, "fuzz.in", data, nil)
			_ = in.Stop()
		}
	})
}
