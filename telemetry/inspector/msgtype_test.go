package inspector

import "testing"

func TestMessageTypeReadsTheTopLevelTypeKey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"label":"rtvi-ai","type":"ui-snapshot","data":{"type":"nested"}}`, "ui-snapshot"},
		{`{"data":{"type":"nested","list":[{"type":"x"}]},"type":"bot-ready"}`, "bot-ready"},
		{`{"type":3}`, ""},
		{`[{"type":"x"}]`, ""},
		{`{"data":{}}`, ""},
		{`not json`, ""},
		{``, ""},
		{`{"type":"unterminated`, ""},
	} {
		if got := messageType([]byte(c.in)); got != c.want {
			t.Errorf("messageType(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzMessageType(f *testing.F) {
	for _, s := range []string{`{"type":"ui-command","data":{"command":"toast"}}`, `{"a":[1,{"b":null}],"type":"x"}`, `{`, `{"type":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { _ = messageType(b) })
}
