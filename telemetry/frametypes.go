package telemetry

import (
	"encoding/json"
	"reflect"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/telemetry/internal/rtvimsg"
)

// The RTVI and UI agent frames are recognised by their type, without
// importing their packages, so telemetry depends on the core only.

// isUICommand reports whether f is an rtvi.UICommandFrame.
func isUICommand(f frames.Frame) bool {
	t := reflect.TypeOf(f)
	if t.Kind() != reflect.Pointer {
		return false
	}
	t = t.Elem()
	return t.Name() == "UICommandFrame" && t.PkgPath() == "github.com/framewire/framewire/processors/rtvi"
}

// uiCommandName reads the Command field of a UICommandFrame.
func uiCommandName(f frames.Frame) string {
	v := reflect.ValueOf(f).Elem().FieldByName("Command")
	if v.Kind() != reflect.String {
		return ""
	}
	return v.String()
}

// messageType is the "type" of a raw RTVI message.
func messageType(b []byte) string { return rtvimsg.Type(b) }

// resultInfo reads a function result the way the model will: an object
// with an "error" key is an error (llm.ErrorResult), and the UI agent's
// reply tool lists the refs it skipped under "skipped_refs".
func resultInfo(v any) (outcome string, skipped []string) {
	if v == nil {
		return OutcomeOK, nil
	}
	b, err := json.Marshal(v)
	if err != nil || len(b) == 0 || b[0] != '{' {
		return OutcomeOK, nil
	}
	var r struct {
		Error   *string  `json:"error"`
		Skipped []string `json:"skipped_refs"`
	}
	if json.Unmarshal(b, &r) != nil {
		return OutcomeOK, nil
	}
	if r.Error != nil {
		return OutcomeError, r.Skipped
	}
	return OutcomeOK, r.Skipped
}
