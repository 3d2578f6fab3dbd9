package uiagent_test

import (
	"fmt"

	"github.com/framewire/framewire/processors/rtvi/wire"
	"github.com/framewire/framewire/processors/uiagent"
)

// The model reads the page as <ui_state>: one line per node of the
// accessibility snapshot the browser sent, with the refs it acts on.
func ExampleRenderUIState() {
	snap, err := wire.DecodeSnapshot([]byte(`{
		"root": {"ref": "e1", "role": "main", "name": "Shop", "children": [
			{"ref": "e2", "role": "heading", "name": "Phones", "level": 2},
			{"ref": "e3", "role": "textbox", "name": "Email", "value": "ada@example.com"},
			{"ref": "e4", "role": "checkbox", "name": "Subscribe", "state": ["checked"]}
		]},
		"captured_at": 1767225600000
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(uiagent.RenderUIState(snap))
	// Output:
	// <ui_state>
	// - main "Shop" [ref=e1]:
	//   - heading "Phones" [level=2] [ref=e2]
	//   - textbox "Email" = "ada@example.com" [ref=e3]
	//   - checkbox "Subscribe" [checked] [ref=e4]
	// </ui_state>
}
