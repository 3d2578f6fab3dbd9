package llm_test

import (
	"testing"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
)

// An ErrorResult says it failed through frames.Outcomer, so telemetry
// counts the call as an error without reading its JSON.
func TestErrorResultIsAFailedOutcome(t *testing.T) {
	var r frames.Outcomer = llm.ErrorResult{Error: "no such page"}
	if ok, skipped := r.Outcome(); ok || skipped != nil {
		t.Errorf("Outcome() = %v, %v; want false, nil", ok, skipped)
	}
}
