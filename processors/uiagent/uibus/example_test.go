package uibus_test

import (
	"context"
	"fmt"

	"github.com/framewire/framewire/bus"
	"github.com/framewire/framewire/processors/uiagent"
	"github.com/framewire/framewire/processors/uiagent/uibus"
)

// A voice agent asks a UI agent that runs elsewhere. In one binary the
// bus is bus.Local; across processes it is bus.NATS over a connection,
// and nothing else changes. The served func is typically a
// uiagent.Agent's Ask.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := bus.Local(bus.Options{})

	uiAsk := func(_ context.Context, q string) (uiagent.Answer, error) {
		return uiagent.Answer{Text: "The cart holds two books.", Outcome: uiagent.Replied, Asked: true}, nil
	}
	svc, err := uibus.ServeAgent(ctx, b, "framewire.agents.ui", uiAsk)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Stop()

	ui := uibus.Agent{Bus: b, Subject: "framewire.agents.ui"}
	ans, err := ui.Ask(ctx, "What is in the cart?") // ctx: the voice turn; an interruption cancels it
	fmt.Println(ans.Text, ans.Outcome, err)
	// Output: The cart holds two books. replied <nil>
}
