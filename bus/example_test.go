package bus_test

import (
	"context"
	"fmt"

	"github.com/framewire/framewire/bus"
)

// A call that streams its progress and ends with one result. In one
// binary the bus is bus.Local; across processes it is bus.NATS over a
// connection, and nothing else changes. Package
// processors/uiagent/uibus builds task-group workers and agent questions
// on such calls.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := bus.Local(bus.Options{})

	svc, err := b.Serve(ctx, "framewire.search", func(_ context.Context, req []byte, progress func([]byte)) ([]byte, error) {
		progress([]byte("searching " + string(req)))
		return []byte("found 2 books"), nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Stop()

	resp, err := b.Request(ctx, "framewire.search", []byte("the cart"), func(p []byte) { fmt.Println(string(p)) })
	fmt.Println(string(resp), err)
	// Output:
	// searching the cart
	// found 2 books <nil>
}
