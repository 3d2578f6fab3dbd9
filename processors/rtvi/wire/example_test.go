package wire_test

import (
	"fmt"

	"github.com/framewire/framewire/processors/rtvi/wire"
)

// Client messages decode into typed data; the envelope is checked first.
// A 1.3.x client gets the task vocabulary of the UI Agent Protocol.
func ExampleDecode() {
	m, err := wire.Decode([]byte(`{"label":"rtvi-ai","type":"client-ready","id":"c1","data":{"version":"1.3.0","about":{"library":"@pipecat-ai/client-js","library_version":"1.9.0"}}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	ready := m.Data.(*wire.ClientReady)
	fmt.Println(m.Type, m.ID, ready.Version)
	v, verr := wire.CheckClientVersion(ready.Version)
	fmt.Println(v.Vocabulary(), verr == "")

	_, err = wire.Decode([]byte(`{"type":"client-ready"}`))
	fmt.Println(err)
	// Output:
	// client-ready c1 1.3.0
	// task true
	// rtvi: not an RTVI message
}
