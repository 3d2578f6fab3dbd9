package rtvi

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// clientLLM stands for an LLM service whose function "get_location" the
// client runs.
type clientLLM struct{ pipeline.PassThrough }

func (clientLLM) IsClientFunction(name string) bool { return name == "get_location" }

var clientLLMNode = node{"LLM#3", &clientLLM{}}

func resultMsg(id, toolCallID, result string) string {
	return `{"label":"rtvi-ai","type":"llm-function-call-result","id":"` + id + `","data":` +
		`{"function_name":"get_location","tool_call_id":"` + toolCallID + `","arguments":{},"result":` + result + `}}`
}

func locationCall(id string) frames.FunctionCall {
	return frames.FunctionCall{Name: "get_location", ToolCallID: id, Arguments: json.RawMessage(`{"precise":true}`)}
}

// A client function's calls are named to the client with their arguments
// at the default level, and even when disabled: client-js runs its
// handler only for an in-progress message that names the function, with
// that message's arguments. Server functions keep their level.
func TestClientFunctionsAreNamedWithTheirArgumentsAtAnyLevel(t *testing.T) {
	for _, lvl := range []ReportLevel{ReportNone, ReportDisabled, ReportName} {
		t.Run(lvl.String(), func(t *testing.T) {
			p, rec := testProcessor("2.1.0")
			o := NewObserver(p, ObserverOptions{FunctionCallReportLevels: map[string]ReportLevel{"*": lvl}})
			server := frames.FunctionCall{Name: "get_time", ToolCallID: "s1"}
			observe(o, clientLLMNode, &frames.FunctionCallsStarted{Calls: []frames.FunctionCall{locationCall("c1"), server}})
			observe(o, clientLLMNode, &frames.FunctionCallInProgress{FunctionCall: locationCall("c1")})
			observe(o, clientLLMNode, &frames.FunctionCallInProgress{FunctionCall: server})
			observe(o, clientLLMNode, &frames.FunctionCallResult{FunctionCall: locationCall("c1"), Result: "Lyon"})
			want := []any{
				msgData(wire.TypeLLMFunctionCallStarted, obj{"function_name": "get_location"}),
				msgData(wire.TypeLLMFunctionCallInProgress, obj{"tool_call_id": "c1", "function_name": "get_location", "arguments": obj{"precise": true}}),
				msgData(wire.TypeLLMFunctionCallStopped, obj{"tool_call_id": "c1", "cancelled": false, "function_name": "get_location"}),
			}
			switch lvl {
			case ReportNone:
				want = []any{want[0], msgData(wire.TypeLLMFunctionCallStarted, obj{}),
					want[1], msgData(wire.TypeLLMFunctionCallInProgress, obj{"tool_call_id": "s1"}), want[2]}
			case ReportName:
				want = []any{want[0], msgData(wire.TypeLLMFunctionCallStarted, obj{"function_name": "get_time"}),
					want[1], msgData(wire.TypeLLMFunctionCallInProgress, obj{"tool_call_id": "s1", "function_name": "get_time"}), want[2]}
			}
			if d := cmp.Diff(want, rec.messages(t)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// The client's own answer, which the processor pushes towards the LLM
// service, is not reported: the service's settlement of the call is.
func TestTheClientsAnswerIsNotReportedAsTheCallsEnd(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	o := NewObserver(p, ObserverOptions{})
	observe(o, node{"RTVIProcessor#1", p}, &frames.FunctionCallResult{FunctionCall: locationCall("c1"), Result: "Lyon"})
	if msgs := rec.messages(t); len(msgs) != 0 {
		t.Errorf("sent %v for the client's own answer", msgs)
	}
}

// announced returns a processor whose observer has told the client about
// the client function calls ids.
func announced(t *testing.T, ids ...string) *Processor {
	t.Helper()
	p := NewProcessor(Options{})
	o := NewObserver(p, ObserverOptions{})
	for _, id := range ids {
		observe(o, clientLLMNode, &frames.FunctionCallInProgress{FunctionCall: locationCall(id)})
	}
	return p
}

// The client's answer to a call it was asked to run goes on as a
// FunctionCallResult (an object stays raw JSON, a string becomes a Go
// string); a second answer to the same call is dropped, and so is one to
// a call it was never asked to run. None gets a reply.
func TestClientAnswersOnlyCallsItWasAskedOnce(t *testing.T) {
	p := announced(t, "c1", "c2")
	res := runProcessor(t, p,
		resultMsg("m1", "c1", `{"lat":41.4}`),
		resultMsg("m2", "c2", `"Lyon"`),
		resultMsg("m3", "c1", `{"lat":0}`),  // a duplicate
		resultMsg("m4", "x9", `"injected"`), // never asked
	)
	want := []frames.Frame{
		&FunctionCallResultFrame{FunctionCall: frames.FunctionCall{Name: "get_location", ToolCallID: "c1", Arguments: json.RawMessage(`{}`)},
			Result: json.RawMessage(`{"lat":41.4}`)},
		&FunctionCallResultFrame{FunctionCall: frames.FunctionCall{Name: "get_location", ToolCallID: "c2", Arguments: json.RawMessage(`{}`)},
			Result: "Lyon"},
	}
	if d := pipelinetest.Diff(want, notSent(res.Down())); d != "" {
		t.Errorf("downstream (-want +got):\n%s", d)
	}
	// What was sent is the two announcements, made before the task ran.
	if msgs := sent(t, res.Down()); len(msgs) != 2 || len(ofType(msgs, wire.TypeLLMFunctionCallInProgress)) != 2 {
		t.Errorf("sent %v, want the two in-progress messages and no reply", msgs)
	}
}

// Once the service settles a call (its timeout's result, or a cancel on
// interruption), the client's late answer is dropped.
func TestLateClientAnswersAfterSettlementAreDropped(t *testing.T) {
	for _, tc := range []struct {
		name    string
		settled frames.Frame
	}{
		{"timed out", &frames.FunctionCallResult{FunctionCall: locationCall("c1"), Result: map[string]string{"error": "timed out"}}},
		{"cancelled", &frames.FunctionCallCancel{Name: "get_location", ToolCallID: "c1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := announced(t, "c1")
			observe(p.observer(), clientLLMNode, tc.settled)
			res := runProcessor(t, p, resultMsg("m1", "c1", `"Lyon"`))
			if got := notSent(res.Down()); len(got) != 0 {
				t.Errorf("the late answer went on: %v", got)
			}
		})
	}
}

// The calls awaiting the client are bounded: past maxClientCalls the
// oldest is forgotten.
func TestCallsAwaitingTheClientAreBounded(t *testing.T) {
	p := NewProcessor(Options{})
	for i := range maxClientCalls + 10 {
		p.awaitClient(string(rune('a'+i%26)) + string(rune(i)))
	}
	p.callMu.Lock()
	n, order := len(p.clientCalls), len(p.callOrder)
	p.callMu.Unlock()
	if n != maxClientCalls || order != maxClientCalls {
		t.Errorf("%d calls (%d in order) remembered, want %d", n, order, maxClientCalls)
	}
}

// BenchmarkObserverClientFunctionCall is one client function call as the
// observer sees it: the in-progress message (with the call recorded as
// awaiting the client) and the stopped message when it settles.
func BenchmarkObserverClientFunctionCall(b *testing.B) {
	p := NewProcessor(Options{})
	p.sink = nopPusher{}
	o := NewObserver(p, ObserverOptions{})
	call := locationCall("c1")
	in := observers.Event{Kind: observers.Pushed, Source: clientLLMNode, Frame: &frames.FunctionCallInProgress{FunctionCall: call},
		Direction: frames.Downstream, FirstSeen: true}
	out := observers.Event{Kind: observers.Pushed, Source: clientLLMNode, Frame: &frames.FunctionCallResult{FunctionCall: call, Result: "Lyon"},
		Direction: frames.Downstream, FirstSeen: true}
	b.ReportAllocs()
	for b.Loop() {
		o.Observe(in)
		o.Observe(out)
	}
}
