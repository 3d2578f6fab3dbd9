package conformancebot

import (
	"encoding/json"
	"strings"
	"testing"

	rtviwire "github.com/framewire/framewire/processors/rtvi/wire"
)

// FuzzParseUICommand: any client data gives a frame or an error, never a
// panic; a frame always has a command, and its payload is the client's.
func FuzzParseUICommand(f *testing.F) {
	for _, seed := range []string{
		`{"command":"toast","payload":{"title":"Saved","n":2}}`,
		`{"command":"scroll_to","payload":null}`,
		`{"command":"click"}`,
		`{"command":""}`, `{"command":7}`, `{"payload":1}`, `"toast"`, `[]`, `null`, ``, `{`,
		`{"command":"x","payload":"\u00e9"}`, `  {"command":"x"}  `,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, d string) {
		cmd, err := parseUICommand([]byte(d))
		if err != nil {
			if cmd != nil || !strings.HasPrefix(err.Error(), "ui-command: ") {
				t.Fatalf("%q: %v, %v", d, cmd, err)
			}
			return
		}
		if cmd.Command == "" {
			t.Fatalf("%q: a frame without a command", d)
		}
		if cmd.Payload != nil && !json.Valid(cmd.Payload.AppendJSON(nil)) {
			t.Fatalf("%q: payload %s is not JSON", d, cmd.Payload.AppendJSON(nil))
		}
	})
}

// FuzzParseStartJobGroup checks the conformance request parser.
func FuzzParseStartJobGroup(f *testing.F) {
	for _, s := range []string{
		`{"workers":["a","b"],"label":"L","cancellable":false,"hold_ms":250}`,
		`{"workers":[]}`, `{"workers":"a"}`, `{"workers":["a","a"]}`, `{"workers":["a"],"hold_ms":-1}`,
		`{"workers":["a"],"hold_ms":1e309}`, `[]`, `null`, ``, `{"workers":["é"],"extra":{"x":[1]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseStartJobGroup(rtviwire.RawJSON(b))
		if err != nil {
			return
		}
		if len(r.Workers) == 0 || len(r.Workers) > maxGroupWorkers || r.Hold < 0 || r.Hold > maxHold {
			t.Fatalf("accepted %+v", r)
		}
		seen := map[string]bool{}
		for _, w := range r.Workers {
			if w == "" || seen[w] {
				t.Fatalf("accepted workers %q", r.Workers)
			}
			seen[w] = true
		}
	})
}
