package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// The tests below drive one session's pipeline directly with RTVI frames,
// row by row of docs/protocol.md §10; server_test.go covers the
// same rows over HTTP and WebRTC.

func TestRow1HandshakeEchoesTheClientVersionAndTheRequestID(t *testing.T) {
	for _, version := range []string{"2.1.0", "1.3.0"} {
		t.Run(version, func(t *testing.T) {
			b := startBot(t)
			m := b.ready(version)
			if m.Label != "rtvi-ai" || m.ID == nil || *m.ID != "ready001" {
				t.Errorf("bot-ready envelope = %s", m.raw)
			}
			d := m.data(t)
			if d["version"] != version {
				t.Errorf("bot-ready version = %v, want %s", d["version"], version)
			}
			if about, ok := d["about"].(map[string]any); !ok || about["library"] != "framewire" {
				t.Errorf("bot-ready about = %v", d["about"])
			}
		})
	}
}

func TestRow3EchoReturnsTheDataUnchanged(t *testing.T) {
	b := startBot(t)
	b.ready("2.1.0")
	for i, d := range []string{`{"x":1,"s":"héllo"}`, `"still here"`, `[1,2.5,null,{"k":["ü","😀"]}]`, `null`, `{"deep":{"a":{"b":{"c":[]}}}}`} {
		id := fmt.Sprintf("echo%04d", i)
		b.sendRaw(`{"label":"rtvi-ai","type":"client-message","id":"` + id + `","data":{"t":"echo","d":` + d + `}}`)
		m := b.next(withID(id))
		if m.Type != "server-response" {
			t.Fatalf("echo %s answered with %s", d, m.raw)
		}
		var got struct {
			T string          `json:"t"`
			D json.RawMessage `json:"d"`
		}
		if err := json.Unmarshal(m.Data, &got); err != nil {
			t.Fatal(err)
		}
		if got.T != "echo" || !sameJSON(t, got.D, []byte(d)) {
			t.Errorf("echo of %s = %s", d, m.raw)
		}
	}
}

func TestRow4UICommandIsSentBackWithoutAnID(t *testing.T) {
	b := startBot(t)
	b.ready("2.1.0")
	b.send("client-message", "cmd00001", map[string]any{"t": "ui-command", "d": map[string]any{"command": "toast", "payload": map[string]any{"title": "Saved", "n": 2}}})
	m := b.next(ofType("ui-command"))
	if m.ID != nil {
		t.Errorf("ui-command carries an id: %s", m.raw)
	}
	if !sameJSON(t, m.Data, []byte(`{"command":"toast","payload":{"title":"Saved","n":2}}`)) {
		t.Errorf("ui-command = %s", m.raw)
	}

	b.send("client-message", "cmd00002", map[string]any{"t": "ui-command", "d": map[string]any{"command": "scroll_to", "payload": nil}})
	if m := b.next(ofType("ui-command")); !sameJSON(t, m.Data, []byte(`{"command":"scroll_to","payload":null}`)) {
		t.Errorf("a null payload is passed on: %s", m.raw)
	}
}

func TestRow4BadUICommandGetsAnErrorResponse(t *testing.T) {
	for name, d := range map[string]any{
		"no command":     map[string]any{"payload": 1},
		"empty command":  map[string]any{"command": ""},
		"number command": map[string]any{"command": 7},
		"not an object":  "toast",
	} {
		t.Run(name, func(t *testing.T) {
			b := startBot(t)
			b.ready("2.1.0")
			b.send("client-message", "badcmd01", map[string]any{"t": "ui-command", "d": d})
			m := b.next(withID("badcmd01"))
			if m.Type != "error-response" || !strings.HasPrefix(m.data(t)["error"].(string), "ui-command: ") {
				t.Errorf("reply = %s", m.raw)
			}
		})
	}
}

func TestUnknownClientMessageGetsAnErrorResponse(t *testing.T) {
	b := startBot(t)
	b.ready("2.1.0")
	b.send("client-message", "unk00001", map[string]any{"t": "ech0", "d": 1})
	m := b.next(withID("unk00001"))
	if m.Type != "error-response" || !strings.Contains(m.data(t)["error"].(string), `"ech0"`) {
		t.Errorf("reply = %s", m.raw)
	}
}

// page is a small snapshot: a heading, a text input with a value, a
// checkbox, and a selection.
const page = `{"root":{"ref":"e1","role":"main","children":[
 {"ref":"e2","role":"heading","name":"Checkout","level":1},
 {"ref":"e3","role":"textbox","name":"Email","value":"ada@example.com","state":["focused"]},
 {"ref":"e4","role":"checkbox","name":"Gift wrap","state":["checked"]},
 {"ref":"","role":"","name":"no role here"}]},
 "captured_at":1700000000000,
 "selection":{"ref":"e2","text":"Check"}}`

const wantPageState = `<ui_state>
- main [ref=e1]:
  - heading "Checkout" [level=1] [ref=e2]
  - textbox "Email" = "ada@example.com" [focused] [ref=e3]
  - checkbox "Gift wrap" [checked] [ref=e4]
  - generic "no role here"
<selection ref="e2">
Check
</selection>
</ui_state>`

func TestRow5SnapshotIsAnsweredWithTheRenderedUIState(t *testing.T) {
	b := startBot(t)
	b.ready("2.1.0")
	b.sendRaw(`{"label":"rtvi-ai","type":"ui-snapshot","id":"snap0001","data":{"tree":` + page + `}}`)
	m := b.next(ofType("server-message"))
	d := m.data(t)
	if d["type"] != "ui_state" || m.ID != nil {
		t.Fatalf("reply = %s", m.raw)
	}
	if got := d["text"]; got != wantPageState {
		t.Errorf("ui_state text =\n%s\nwant\n%s", got, wantPageState)
	}
}

// bigPage returns a snapshot of about size bytes of JSON: a heading and
// a long list.
func bigPage(heading string, size int) string {
	var sb strings.Builder
	sb.WriteString(`{"root":{"ref":"e1","role":"main","children":[{"ref":"e2","role":"heading","name":` + fmt.Sprintf("%q", heading) + `,"level":1},{"ref":"e3","role":"list","children":[`)
	for i := 4; sb.Len() < size-200; i++ {
		if i > 4 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"ref":"e%d","role":"listitem","name":"Item %d: a line of text long enough to make the page heavy, ünïcödé included"}`, i, i)
	}
	sb.WriteString(`]}]},"captured_at":1700000000000}`)
	return sb.String()
}

func TestRow10LargeSnapshotIsAnswered(t *testing.T) {
	b := startBot(t)
	b.ready("2.1.0")
	tree := bigPage("A very large page", 60_000)
	raw := `{"label":"rtvi-ai","type":"ui-snapshot","id":"bigsnap1","data":{"tree":` + tree + `}}`
	if n := len(raw); n < 58_000 || n > 64*1024 {
		t.Fatalf("the snapshot message is %d bytes, want about 60 KB", n)
	}
	b.sendRaw(raw)
	m := b.next(ofType("server-message"))
	text, _ := m.data(t)["text"].(string)
	if !strings.HasPrefix(text, "<ui_state>\n") || !strings.HasSuffix(text, "\n</ui_state>") ||
		!strings.Contains(text, `- heading "A very large page" [level=1] [ref=e2]`) || !strings.Contains(text, "[ref=e400]") {
		t.Errorf("ui_state of the large snapshot (%d bytes) does not hold the page", len(text))
	}
}

func TestRow6UIEventIsEchoedAsAServerMessage(t *testing.T) {
	b := startBot(t)
	b.ready("2.1.0")
	b.send("ui-event", "evt00001", map[string]any{"event": "clicked", "payload": map[string]any{"ref": "e7"}})
	if m := b.next(ofType("server-message")); !sameJSON(t, m.Data, []byte(`{"type":"ui_event","event":"clicked","payload":{"ref":"e7"}}`)) || m.ID != nil {
		t.Errorf("reply = %s", m.raw)
	}
	b.send("ui-event", "evt00002", map[string]any{"event": "scrolled"})
	if m := b.next(ofType("server-message")); !sameJSON(t, m.Data, []byte(`{"type":"ui_event","event":"scrolled","payload":null}`)) {
		t.Errorf("reply without payload = %s", m.raw)
	}
}

func TestRow9SendTextIsEchoedByTheLLM(t *testing.T) {
	b := startBot(t)
	b.ready("2.1.0")
	for _, content := range []string{"héllo there", "  spaced\tout  ", "", "one"} {
		b.send("send-text", "text0001", map[string]any{"content": content, "options": map[string]any{}})
		var seq []string
		var text strings.Builder
		for {
			m := b.next(func(m msg) bool { return strings.HasPrefix(m.Type, "bot-llm-") })
			seq = append(seq, m.Type)
			if m.Type == "bot-llm-text" {
				text.WriteString(m.data(t)["text"].(string))
			}
			if m.Type == "bot-llm-stopped" {
				break
			}
		}
		if seq[0] != "bot-llm-started" || slices.Index(seq, "bot-llm-stopped") != len(seq)-1 || len(seq) < 3 {
			t.Errorf("send-text %q: sequence %v", content, seq)
		}
		if text.String() != "echo: "+content {
			t.Errorf("send-text %q: text %q", content, text.String())
		}
	}
}

func TestRow10BadInputGetsTheSpecifiedRepliesAndTheSessionLives(t *testing.T) {
	b := startBot(t)
	b.ready("2.1.0")
	b.sendRaw("ping: 1700000000000")
	b.sendRaw("{this is not json")
	b.sendRaw(`{"label":"rtvi-ai","type":"client-message","data":{"t":"echo","d":1}}`)
	b.sendRaw(`{"label":"rtvi-ai","type":"frobnicate","id":"hfrob001"}`)
	b.sendRaw(`{"label":"rtvi-ai","type":"ui-event","id":"hevt0001","data":{"payload":{}}}`)
	b.send("client-message", "alive001", map[string]any{"t": "echo", "d": "still here"})

	first := b.next(nil)
	if d := first.data(t); first.Type != "error" || first.ID != nil || d["fatal"] != false ||
		!strings.HasPrefix(d["error"].(string), "Invalid RTVI transport message: ") {
		t.Errorf("the first reply (to the message without id) = %s", first.raw)
	}
	if m := b.next(nil); m.Type != "error-response" || *m.ID != "hfrob001" || m.data(t)["error"] != "Unsupported type frobnicate" {
		t.Errorf("frobnicate reply = %s", m.raw)
	}
	if m := b.next(nil); m.Type != "error-response" || *m.ID != "hevt0001" || !strings.HasPrefix(m.data(t)["error"].(string), "Invalid message: ") {
		t.Errorf("ui-event without event reply = %s", m.raw)
	}
	if m := b.next(nil); m.Type != "server-response" || *m.ID != "alive001" {
		t.Errorf("the echo after the bad input = %s", m.raw)
	}
	for _, m := range b.all() {
		if m.Type == "error" && m.data(t)["fatal"] == true {
			t.Errorf("a fatal error would disconnect the client: %s", m.raw)
		}
	}
}

func TestRow11DisconnectBotEndsTheSession(t *testing.T) {
	b := startBot(t)
	b.ready("2.1.0")
	b.send("disconnect-bot", "bye00001", map[string]any{})
	select {
	case err := <-b.done:
		if err != nil {
			t.Errorf("the task ended with %v", err)
		}
		b.done <- err // for the cleanup
	case <-time.After(wait):
		t.Fatal("disconnect-bot did not end the task")
	}
}

// vocab is one vocabulary of the job-group messages (row 13).
type vocab struct {
	typ, cancel, id, workers, worker, update, completed string
}

var (
	vocab21 = vocab{"ui-job-group", "ui-cancel-job-group", "job_id", "workers", "worker_name", "job_update", "job_completed"}
	vocab13 = vocab{"ui-task", "ui-cancel-task", "task_id", "agents", "agent_name", "task_update", "task_completed"}
)

// foreign lists the keys and kinds that belong only to the other
// vocabulary.
func (v vocab) foreign() []string {
	other := vocab13
	if v == vocab13 {
		other = vocab21
	}
	return []string{other.typ, other.id, other.workers, other.worker, other.update, other.completed}
}

// groupMessages collects one group's messages until group_completed and
// checks what every envelope must carry.
func groupMessages(t *testing.T, b *bot, v vocab) []map[string]any {
	t.Helper()
	var got []map[string]any
	for {
		m := b.next(func(m msg) bool { return m.Type == "ui-job-group" || m.Type == "ui-task" })
		if m.Type != v.typ || m.ID != nil {
			t.Errorf("envelope %s, want type %s and no id", m.raw, v.typ)
		}
		for _, k := range v.foreign() {
			if strings.Contains(m.raw, `"`+k+`"`) {
				t.Errorf("envelope %s mixes in %q of the other vocabulary", m.raw, k)
			}
		}
		d := m.data(t)
		if at, ok := d["at"].(float64); !ok || at <= 0 || at != float64(int64(at)) {
			t.Errorf("envelope %s: at is not epoch milliseconds", m.raw)
		}
		if _, ok := d[v.id].(string); !ok {
			t.Errorf("envelope %s has no %s", m.raw, v.id)
		}
		got = append(got, d)
		if d["kind"] == "group_completed" {
			return got
		}
	}
}

// checkLifecycle checks a group that ran to the end: group_started, each
// worker's update before its completion, group_completed last.
func checkLifecycle(t *testing.T, v vocab, got []map[string]any, workers []string, label string) {
	t.Helper()
	start := got[0]
	wantLabel := any(label)
	if label == "" {
		wantLabel = nil // no label: the key is left out, as Pipecat's exclude_none does
	}
	if start["kind"] != "group_started" || start["label"] != wantLabel || start["cancellable"] != true {
		t.Errorf("first envelope = %v", start)
	}
	if ws, ok := start[v.workers].([]any); !ok || fmt.Sprint(ws) != fmt.Sprint(workers) {
		t.Errorf("%s = %v, want %v", v.workers, start[v.workers], workers)
	}
	id := start[v.id]
	updated := map[string]bool{}
	completed := map[string]bool{}
	for _, d := range got[1 : len(got)-1] {
		if d[v.id] != id {
			t.Errorf("envelope of another group: %v", d)
		}
		name, _ := d[v.worker].(string)
		switch d["kind"] {
		case v.update:
			if fmt.Sprint(d["data"]) != "map[text:working]" || completed[name] {
				t.Errorf("update %v (after completion: %v)", d, completed[name])
			}
			updated[name] = true
		case v.completed:
			if d["status"] != "completed" || fmt.Sprint(d["response"]) != "map[worker:"+name+"]" || !updated[name] {
				t.Errorf("completion %v (updated before: %v)", d, updated[name])
			}
			completed[name] = true
		default:
			t.Errorf("unexpected envelope %v", d)
		}
	}
	if last := got[len(got)-1]; last["kind"] != "group_completed" || last[v.id] != id || keys(last) != fmt.Sprint(slices.Sorted(slices.Values([]string{"at", "kind", v.id}))) {
		t.Errorf("last envelope = %v", last)
	}
	if len(completed) != len(workers) || len(updated) != len(workers) {
		t.Errorf("updated %v, completed %v, want each of %v", updated, completed, workers)
	}
}

func TestRow7And13JobGroupLifecycleInTheClientsVocabulary(t *testing.T) {
	for version, v := range map[string]vocab{"2.1.0": vocab21, "1.3.0": vocab13, "1.3.2": vocab13, "1.4.0": vocab21} {
		t.Run(version, func(t *testing.T) {
			b := startBot(t)
			b.ready(version)
			b.send("client-message", "group001", map[string]any{"t": "start-job-group", "d": map[string]any{"workers": []string{"alpha", "beta"}, "label": "Research"}})
			checkLifecycle(t, v, groupMessages(t, b, v), []string{"alpha", "beta"}, "Research")
		})
	}
}

func TestRow7HoldDelaysTheCompletions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := startBot(t)
		b.ready("2.1.0")
		t0 := time.Now()
		b.send("client-message", "group001", map[string]any{"t": "start-job-group", "d": map[string]any{"workers": []string{"w1"}, "hold_ms": 1500}})
		got := groupMessages(t, b, vocab21)
		checkLifecycle(t, vocab21, got, []string{"w1"}, "")
		if took := time.Since(t0); took < 1500*time.Millisecond || took > 2*time.Second {
			t.Errorf("the group took %v, want hold_ms (1.5 s)", took)
		}
	})
}

func TestRow7BadRequestGetsAnErrorResponse(t *testing.T) {
	b := startBot(t)
	b.ready("2.1.0")
	for i, d := range []any{map[string]any{}, map[string]any{"workers": []string{}}, map[string]any{"workers": "alpha"},
		map[string]any{"workers": []string{"a", "a"}}, map[string]any{"workers": []string{"a"}, "hold_ms": -1}, 7} {
		id := fmt.Sprintf("badgrp%02d", i)
		b.send("client-message", id, map[string]any{"t": "start-job-group", "d": d})
		if m := b.next(withID(id)); m.Type != "error-response" || !strings.HasPrefix(m.data(t)["error"].(string), "start-job-group: ") {
			t.Errorf("start-job-group %v answered %s", d, m.raw)
		}
	}
	for _, m := range b.all() {
		if m.Type == "ui-job-group" {
			t.Errorf("a bad request started a group: %s", m.raw)
		}
	}
}

func TestRow8CancelCompletesUnfinishedWorkersAsCancelledAtOnce(t *testing.T) {
	for _, c := range []struct {
		version string
		v       vocab
		cancel  vocab // the vocabulary of the cancel request: either is accepted
	}{
		{"2.1.0", vocab21, vocab21},
		{"2.1.0", vocab21, vocab13},
		{"1.3.0", vocab13, vocab13},
		{"1.3.0", vocab13, vocab21},
	} {
		t.Run(c.version+" "+c.cancel.cancel, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := startBot(t)
				b.ready(c.version)
				b.send("client-message", "group001", map[string]any{"t": "start-job-group", "d": map[string]any{"workers": []string{"a", "b", "c"}, "hold_ms": 60_000}})
				start := b.next(func(m msg) bool { return m.Type == c.v.typ })
				id := start.data(t)[c.v.id]
				for range 3 {
					b.next(func(m msg) bool { return m.Type == c.v.typ && strings.Contains(m.raw, c.v.update) })
				}
				t0 := time.Now()
				b.send(c.cancel.cancel, "cancel01", map[string]any{c.cancel.id: id, "reason": "user pressed cancel"})
				var cancelled []string
				for {
					m := b.next(func(m msg) bool { return m.Type == c.v.typ })
					d := m.data(t)
					if d["kind"] == "group_completed" {
						break
					}
					if d["kind"] != c.v.completed || d["status"] != "cancelled" || d["response"] != nil || strings.Contains(m.raw, `"response"`) {
						t.Errorf("after cancel: %s", m.raw)
					}
					cancelled = append(cancelled, d[c.v.worker].(string))
				}
				if took := time.Since(t0); took > 2*time.Second {
					t.Errorf("cancelling took %v, want under 2 s", took)
				}
				slices.Sort(cancelled)
				if fmt.Sprint(cancelled) != "[a b c]" {
					t.Errorf("cancelled workers %v, want [a b c]", cancelled)
				}
			})
		})
	}
}

func TestRow8CancelOfANonCancellableGroupIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := startBot(t)
		b.ready("2.1.0")
		b.send("client-message", "group001", map[string]any{"t": "start-job-group", "d": map[string]any{"workers": []string{"a"}, "cancellable": false, "hold_ms": 1000}})
		start := b.next(ofType("ui-job-group"))
		if start.data(t)["cancellable"] != false {
			t.Errorf("group_started = %s", start.raw)
		}
		b.send("ui-cancel-job-group", "cancel01", map[string]any{"job_id": start.data(t)["job_id"]})
		got := groupMessages(t, b, vocab21)
		if done := got[len(got)-2]; done["status"] != "completed" {
			t.Errorf("the worker of a non-cancellable group ended %v", done)
		}
	})
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
