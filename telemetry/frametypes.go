package telemetry

import "github.com/framewire/framewire/frames"

// resultInfo reads a function result the way the model will, through
// frames.Outcomer (llm.ErrorResult is an error; the UI agent's reply lists
// the refs it skipped): a result that does not implement it succeeded.
func resultInfo(v any) (outcome string, skipped []string) {
	r, ok := v.(frames.Outcomer)
	if !ok {
		return OutcomeOK, nil
	}
	good, skipped := r.Outcome()
	if !good {
		return OutcomeError, skipped
	}
	return OutcomeOK, skipped
}
