package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/invopop/jsonschema"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// Handler runs one function call. It settles the call with
// [FunctionCallParams.Result] (or [FunctionCallParams.ResultWith]); a
// handler that returns without settling settles with no value ("COMPLETED",
// no re-run). A returned error or a panic settles the call with a generic
// [ErrorResult] the model can read; the error itself goes to the logs and
// an upstream [frames.Error], never into the conversation.
//
// ctx is cancelled when the call times out, when an interruption cancels
// it, and when the task is cancelled or ends. Handlers run as the task's
// background work ([pipeline.Outlet.Go]), concurrently with each other
// unless the service runs calls sequentially; the task waits for them
// when it ends and names in its log any that ignores its context.
type Handler func(ctx context.Context, call FunctionCallParams) error

// Function declares a function the model may call, together with its
// handler and call options. Write one as a literal with a hand-written
// JSON Schema, or build one from a Go args struct with [NewFunction]; a
// function the client runs is declared with [ClientFunction].
type Function struct {
	// Name is the function name the model calls.
	Name string
	// Description tells the model what the function does and when to call it.
	Description string
	// Parameters is the JSON Schema of the arguments object. Empty means
	// "no arguments".
	Parameters json.RawMessage
	// Handler runs the call. A client function has none.
	Handler Handler
	// Client says the client runs the function (client-js
	// registerFunctionCallHandler): the service runs no handler, and the
	// call settles with the first [frames.FunctionCallResult] that reaches
	// the service for its tool_call_id (the RTVI processor pushes one for
	// the client's llm-function-call-result), unless its timeout or an
	// interruption settles it first. Whatever arrives for the call after
	// it settled is dropped. The RTVI observer names such calls to the
	// client (with their arguments) whatever the report level, since the
	// client cannot run them otherwise. With [ServiceOptions.Sequential],
	// the calls after it in the same response wait for its answer.
	Client bool
	// Timeout bounds the call; when it passes the model is told the call
	// failed. Zero takes the service's default; negative means no timeout.
	// For a client function it bounds the wait for the client's answer.
	Timeout time.Duration
	// KeepOnInterruption keeps the call running when the user interrupts
	// the bot. By default an interruption cancels it (Pipecat's
	// cancel_on_interruption=True).
	KeepOnInterruption bool
	// Raw, when set, is a provider-specific tool declaration sent verbatim
	// instead of Name, Description and Parameters.
	Raw json.RawMessage
}

// Tool returns the declaration the model sees, for [Context.SetTools].
func (f Function) Tool() frames.LLMTool {
	return frames.LLMTool{Name: f.Name, Description: f.Description, Parameters: f.Parameters, Raw: f.Raw}
}

// Tools returns the declarations of fns, for [Context.SetTools].
func Tools(fns ...Function) []frames.LLMTool {
	out := make([]frames.LLMTool, len(fns))
	for i, f := range fns {
		out[i] = f.Tool()
	}
	return out
}

// ClientFunction declares a function the client runs: the service
// announces its calls and waits for the client's result (see
// [Function.Client]). parameters is the JSON Schema of its arguments (nil
// for none; [Schema] builds one from a Go type). Set Timeout on the result
// to wait longer or shorter than the service's default, KeepOnInterruption
// to keep waiting when the user interrupts.
func ClientFunction(name, description string, parameters json.RawMessage) Function {
	return Function{Name: name, Description: description, Parameters: parameters, Client: true}
}

// NoArgs is the args type of a function that takes no arguments.
type NoArgs struct{}

// NewFunction declares a function whose arguments are decoded into a T.
// The JSON Schema is generated from T: JSON field names from `json` tags,
// fields without omitempty required, descriptions from
// `jsonschema_description:"..."` tags (or `jsonschema:"description=..."`,
// where a comma ends the text), enums and bounds from the other jsonschema
// tag keys. Arguments that do not
// decode into a T settle the call with an [ErrorResult] that says why, so
// the model can correct itself; handle is not called then.
func NewFunction[T any](name, description string, handle func(ctx context.Context, call FunctionCallParams, args T) error) Function {
	return Function{
		Name:        name,
		Description: description,
		Parameters:  Schema[T](),
		Handler: func(ctx context.Context, call FunctionCallParams) error {
			var args T
			raw := call.Arguments
			if len(raw) == 0 {
				raw = json.RawMessage("{}")
			}
			if err := json.Unmarshal(raw, &args); err != nil {
				return call.Result(ErrorResult{Error: fmt.Sprintf("The arguments for %s were invalid: %v", call.Name, err)})
			}
			return handle(ctx, call, args)
		},
	}
}

// Schema returns the JSON Schema of the object type T as an OpenAI
// function's parameters (no $schema, no $id, no $defs references). T must
// be a struct (or a pointer to one).
func Schema[T any]() json.RawMessage {
	r := &jsonschema.Reflector{
		ExpandedStruct: true,
		DoNotReference: true,
		Anonymous:      true,
	}
	t := reflect.TypeFor[T]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s := r.ReflectFromType(t)
	s.Version = ""
	s.ID = ""
	if s.Type == "object" && s.Properties == nil {
		s.Properties = jsonschema.NewProperties()
	}
	b, err := json.Marshal(s)
	if err != nil {
		// The schema types marshal by construction; this is a programming error.
		panic(fmt.Sprintf("llm: JSON Schema for %v: %v", t, err))
	}
	return b
}

// validate reports what is wrong with a declaration about to be registered.
func (f Function) validate() error {
	if f.Name == "" {
		return errors.New("llm: a function needs a name")
	}
	switch {
	case f.Client && f.Handler != nil:
		return fmt.Errorf("llm: function %q runs on the client and cannot have a handler", f.Name)
	case !f.Client && f.Handler == nil:
		return fmt.Errorf("llm: function %q has no handler", f.Name)
	}
	if len(f.Parameters) > 0 && !json.Valid(f.Parameters) {
		return fmt.Errorf("llm: function %q: parameters are not valid JSON", f.Name)
	}
	if len(f.Raw) > 0 && !json.Valid(f.Raw) {
		return fmt.Errorf("llm: function %q: raw declaration is not valid JSON", f.Name)
	}
	return nil
}

// ErrorResult is the result a call settles with when it failed: the
// function is unknown, its arguments were invalid, its handler failed or
// panicked, or it timed out. The model reads Error and may try again.
type ErrorResult struct {
	Error string `json:"error"`
}

// Outcome implements [frames.Outcomer]: the call failed.
func (ErrorResult) Outcome() (ok bool, skipped []string) { return false, nil }

// Rerun says whether a result asks for another inference.
type Rerun uint8

const (
	// RerunDefault runs inference once every call of the response has
	// settled, if at least one of them produced a value.
	RerunDefault Rerun = iota
	// RerunAlways asks for inference even for an empty result (still once
	// per group of calls).
	RerunAlways
	// RerunNever does not ask for inference: the conversation waits for
	// the user (for tools whose effect is the whole answer).
	RerunNever
)

// ResultOptions tune what follows a result.
type ResultOptions struct {
	// Rerun says whether this result asks for another inference.
	Rerun Rerun
}

// FunctionCallParams is what a handler gets for one call.
type FunctionCallParams struct {
	// Name is the function name the model called.
	Name string
	// ToolCallID identifies the call.
	ToolCallID string
	// Arguments is the JSON arguments object, as the model wrote it.
	Arguments json.RawMessage
	// GroupID is shared by the calls of one model response.
	GroupID string
	// Context is the snapshot of the conversation the model answered.
	Context *frames.LLMContext
	// Out pushes frames from the LLM service (for example UI commands or
	// speech); it is safe for concurrent use.
	Out pipeline.Pusher

	call *call
}

// ErrSettled is returned by [FunctionCallParams.Result] when the call has
// already settled: a result was given, it timed out, or it was cancelled.
var ErrSettled = errors.New("llm: function call already settled")

// Result settles the call with v, a JSON-encodable value (a string is used
// as is). A nil v records "COMPLETED" and does not ask for inference. It
// returns [ErrSettled] (wrapped) if the call was already settled: late
// results are rejected, never recorded.
func (p FunctionCallParams) Result(v any) error {
	return p.ResultWith(v, ResultOptions{})
}

// ResultWith is [FunctionCallParams.Result] with options, for example
// ResultOptions{Rerun: RerunNever} to settle without running the model again.
func (p FunctionCallParams) ResultWith(v any, o ResultOptions) error {
	if p.call == nil {
		return errors.New("llm: FunctionCallParams not issued by a service")
	}
	if !p.call.settleResult(v, o.Rerun) {
		return fmt.Errorf("%w: %s (%s) %s", ErrSettled, p.Name, p.ToolCallID, p.call.settledHow())
	}
	return nil
}
