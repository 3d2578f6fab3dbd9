package main

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/framewire/framewire/examples/ui-agent/demobrain"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/rtvi/wire"
	"github.com/framewire/framewire/processors/uiagent"
)

// researchArgs are the arguments of the research tool.
type researchArgs struct {
	Query  string `json:"query" jsonschema_description:"What to look into, in a few words, for example 'prices for the iPhone 17'."`
	Answer string `json:"answer" jsonschema_description:"A short spoken acknowledgement, for example 'On it: comparing prices now.' No markdown."`
}

const researchDescription = `Start background research that runs while the conversation goes on: three workers (catalog, reviews, deals) look into the query and report progress on a task card the user can cancel. Use it when the user asks to research something or to compare prices. It ends the turn, like reply: "answer" is spoken right away; the results appear on the card.`

// researchTool returns the research tool: it starts a task group on the
// agent and ends the turn with the acknowledgement. step is the pace of
// the simulated workers (each sends three updates, then its summary).
// When every worker has finished, announce tells the user the findings; a
// group the user cancelled ends quietly.
func researchTool(agent *uiagent.Agent, step time.Duration, announce func(text string)) llm.Function {
	return llm.NewFunction(demobrain.ResearchTool, researchDescription,
		func(ctx context.Context, call llm.FunctionCallParams, args researchArgs) error {
			query := strings.TrimSpace(args.Query)
			if query == "" {
				return call.Result(llm.ErrorResult{Error: "research needs a query"})
			}
			_, err := agent.Tasks().Start(uiagent.GroupOptions{
				// The workers are simulated: the card says so.
				Label:   "Research (simulated): " + query,
				Timeout: 2 * time.Minute,
				OnDone: func(g *uiagent.Group) {
					if text := findings(query, g.Completions()); text != "" && announce != nil {
						announce(text)
					}
				},
			}, researchWorkers(query, step)...)
			if err != nil {
				return agent.Respond(call, "Sorry, I couldn't start the research.")
			}
			answer := strings.TrimSpace(args.Answer)
			if answer == "" {
				answer = "On it: researching " + query + "."
			}
			return agent.Respond(call, answer)
		})
}

// findings sums up a group whose workers all completed, or returns "".
func findings(query string, done []uiagent.Completion) string {
	var parts []string
	for _, c := range done {
		if c.Status != wire.StatusCompleted {
			return ""
		}
		var r struct {
			Summary string `json:"summary"`
		}
		if json.Unmarshal(c.Response, &r) == nil && r.Summary != "" {
			parts = append(parts, c.Worker+": "+r.Summary)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "The simulated research on " + query + " is done; its figures are made up. " + strings.Join(parts, "; ") + "."
}

// researchWorkers are three simulated workers. Their findings are made up
// from the query, deterministically, so the demo needs no network.
func researchWorkers(query string, step time.Duration) []uiagent.Worker {
	h := fnv.New32a()
	_, _ = h.Write([]byte(strings.ToLower(query)))
	seed := int(h.Sum32() % 1000)
	type plan struct {
		name    string
		pace    time.Duration
		updates []string
		summary string
	}
	plans := []plan{
		{"catalog", step, []string{"searching the catalog…", fmt.Sprintf("found %d listings", 12+seed%20), "comparing specs…"},
			fmt.Sprintf("%d listings, %d storage options, %d colours", 12+seed%20, 2+seed%3, 3+seed%4)},
		{"reviews", step * 5 / 4, []string{"reading reviews…", fmt.Sprintf("read %d reviews", 800+seed*3), "summarizing…"},
			fmt.Sprintf("%.1f★ average over %d reviews; battery life praised", 4.1+float64(seed%8)/10, 800+seed*3)},
		{"deals", step * 3 / 2, []string{"checking stores…", fmt.Sprintf("found %d offers", 4+seed%6), "ranking offers…"},
			fmt.Sprintf("best offer %d%% below list price, %d stores compared", 4+seed%9, 4+seed%6)},
	}
	workers := make([]uiagent.Worker, 0, len(plans))
	for _, p := range plans {
		workers = append(workers, uiagent.Worker{Name: p.name, Work: func(ctx context.Context, update func(any)) (any, error) {
			for _, u := range p.updates {
				update(map[string]string{"text": u})
				if err := sleep(ctx, p.pace); err != nil {
					return nil, err
				}
			}
			return map[string]string{"summary": p.summary}, nil
		}})
	}
	return workers
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
