package cluster

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRequestRoundTrips(t *testing.T) {
	want := request{V: Version, Kind: kindNew, Method: http.MethodPost, Path: "/api/offer", Query: "a=1",
		Header: http.Header{"Content-Type": {"application/json"}}, Remote: "192.0.2.1:5000", Body: []byte(`{"sdp":"v=0"}`)}
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeRequest(b, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestDecodersRefuseWhatTheyCannotServe(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		want error
	}{
		{"another version", `{"v":2,"kind":"new","method":"POST","path":"/start"}`, errVersion},
		{"no version", `{"kind":"new","method":"POST","path":"/start"}`, errVersion},
		{"too large", `{"v":1,"kind":"new","method":"POST","path":"/start","body":"` + strings.Repeat("A", 100) + `"}`, errTooLarge},
	} {
		if _, err := decodeRequest([]byte(tc.data), 64); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	for _, data := range []string{
		``, `[]`, `{"v":1,"kind":"other","method":"POST","path":"/start"}`,
		`{"v":1,"kind":"new","method":"DELETE","path":"/start"}`,
		`{"v":1,"kind":"new","method":"POST","path":"start"}`,
		`{"v":1,"kind":"new","method":"POST","path":"/` + strings.Repeat("a", maxPath) + `"}`,
	} {
		if _, err := decodeRequest([]byte(data), 1<<20); err == nil {
			t.Errorf("decodeRequest(%.60q) succeeded", data)
		}
	}
	for _, data := range []string{
		`{"v":1,"worker":"a","status":99}`, `{"v":1,"worker":"a b","status":200}`, `{"v":1,"worker":"","status":200}`,
	} {
		if _, err := decodeReply([]byte(data), 1<<20); err == nil {
			t.Errorf("decodeReply(%q) succeeded", data)
		}
	}
	if r, err := decodeReply([]byte(`{"v":1,"worker":"a","declined":"full"}`), 1<<20); err != nil || r.Declined != "full" {
		t.Errorf("a decline: %+v, %v", r, err)
	}
	for _, data := range []string{`{"v":1,"worker":"a","sessions":-1}`, `{"v":1,"worker":"a.b"}`, `{"v":0,"worker":"a"}`,
		`{"v":1,"worker":"a","websocket":{"sessions":-1,"capacity":2}}`, `{"v":1,"worker":"a","webrtc":{"sessions":0,"capacity":-2}}`} {
		if _, err := decodeHeartbeat([]byte(data)); err == nil {
			t.Errorf("decodeHeartbeat(%q) succeeded", data)
		}
	}
	for _, data := range []string{`{"v":1,"kind":"pc"}`, `{"v":1,"kind":"x","id":"1"}`, `{"v":1,"kind":"pc","id":"` + strings.Repeat("a", maxID+1) + `"}`} {
		if _, err := decodeWho([]byte(data)); err == nil {
			t.Errorf("decodeWho(%.40q) succeeded", data)
		}
	}
}

func TestPCIDOf(t *testing.T) {
	for body, want := range map[string]string{
		`{"pc_id":"abc","sdp":"v=0"}`: "abc",
		`{"pc_id":null}`:              "",
		`{"sdp":"v=0"}`:               "",
		`not json`:                    "",
		`{"pc_id":7}`:                 "",
		`{"pc_id":"` + strings.Repeat("x", maxID+1) + `"}`: "",
	} {
		if got := pcIDOf([]byte(body)); got != want {
			t.Errorf("pcIDOf(%.40q) = %q, want %q", body, got, want)
		}
	}
}

func TestValidNames(t *testing.T) {
	for _, p := range []string{"framewire.cluster", "a", "a.b-c_d"} {
		if err := validPrefix(p); err != nil {
			t.Errorf("validPrefix(%q): %v", p, err)
		}
	}
	for _, p := range []string{"", "a..b", "a.*", "a.>", "a b", ".a"} {
		if validPrefix(p) == nil {
			t.Errorf("validPrefix(%q) accepted it", p)
		}
	}
	if validWorkerID(strings.Repeat("a", 65)) == nil || validWorkerID("a.b") == nil || validWorkerID("w-1_A") != nil {
		t.Error("validWorkerID accepts or refuses the wrong ids")
	}
}

func TestTableExpiresAndBoundsItsEntries(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tb := newTable(2, time.Minute)
	tb.put("x", "a", t0)
	tb.put("y", "b", t0)
	if w, ok := tb.get("x", t0.Add(time.Second)); !ok || w != "a" {
		t.Fatalf("get x: %q %v", w, ok)
	}
	tb.put("z", "c", t0.Add(2*time.Second)) // y is the least recently used
	if _, ok := tb.get("y", t0.Add(2*time.Second)); ok {
		t.Error("the least recently used entry was kept past the bound")
	}
	if tb.len() != 2 {
		t.Errorf("len %d, want 2", tb.len())
	}
	if _, ok := tb.get("x", t0.Add(2*time.Minute)); ok {
		t.Error("an entry unused for longer than its TTL was returned")
	}
	tb.put("w", "c", t0.Add(2*time.Minute))
	tb.dropWorker("c")
	tb.expire(t0.Add(10 * time.Minute))
	if tb.len() != 0 {
		t.Errorf("len %d after dropWorker and expire, want 0", tb.len())
	}
}

func TestRecorderBoundsTheBody(t *testing.T) {
	r := newRecorder(4)
	if _, err := r.Write([]byte("abc")); err != nil || r.status() != http.StatusOK {
		t.Fatalf("write: %v, status %d", err, r.status())
	}
	if _, err := r.Write([]byte("de")); err == nil || !r.over {
		t.Error("a body over the bound was accepted")
	}
}

func TestExpireAfterIsThreeClampedIntervals(t *testing.T) {
	for ms, want := range map[int]time.Duration{0: 900 * time.Millisecond, 1000: 3 * time.Second, 3600000: 90 * time.Second} {
		if got := expireAfter(heartbeat{IntervalMS: ms}); got != want {
			t.Errorf("expireAfter(%d ms) = %v, want %v", ms, got, want)
		}
	}
}

func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"v":1,"kind":"new","method":"POST","path":"/api/offer","header":{"Content-Type":["application/json"]},"body":"e30="}`))
	f.Add([]byte(`{"v":1,"kind":"route","method":"PATCH","path":"/sessions/x/api/offer","query":"a=%zz"}`))
	f.Add([]byte(`{"v":1,"kind":"route","method":"POST","path":"//host/x"}`))
	f.Add([]byte(`{"v":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeRequest(data, 1<<16)
		if err != nil {
			return
		}
		hr, err := r.http(t.Context())
		if err == nil && (hr.URL.Path != r.Path || hr.URL.Host != "") {
			t.Errorf("request for %q rebuilt with path %q host %q", r.Path, hr.URL.Path, hr.URL.Host)
		}
	})
}

func FuzzDecodeReply(f *testing.F) {
	f.Add([]byte(`{"v":1,"worker":"a","status":200,"header":{"Content-Type":["application/json"]},"body":"e30=","pc_id":"x"}`))
	f.Add([]byte(`{"v":1,"worker":"a","declined":"full"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeReply(data, 1<<16)
		if err == nil && validWorkerID(r.Worker) != nil {
			t.Errorf("reply from worker %q accepted", r.Worker)
		}
	})
}

func FuzzDecodeSmall(f *testing.F) {
	f.Add([]byte(`{"v":1,"worker":"a","sessions":1,"capacity":2,"interval_ms":1000}`))
	f.Add([]byte(`{"v":1,"worker":"a","sessions":3,"capacity":7,"webrtc":{"sessions":1,"capacity":2},"websocket":{"sessions":2,"capacity":5},"interval_ms":1000}`))
	f.Add([]byte(`{"v":1,"kind":"pc","id":"x"}`))
	f.Add([]byte(`{"v":1,"worker":"a","owns":true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if h, err := decodeHeartbeat(data); err == nil {
			for _, l := range []*Load{{h.Sessions, h.Capacity}, h.WebRTC, h.WebSocket} {
				if l != nil && (l.Sessions < 0 || l.Capacity < 0) {
					t.Errorf("heartbeat %+v accepted", h)
				}
			}
		}
		_, _ = decodeWho(data)
		_, _ = decodeWhoReply(data)
		_ = pcIDOf(data)
	})
}

// A heartbeat's room for a new session is its transport's: a worker
// serving WebRTC alone has no room for a /connect, and one serving both
// says how much each takes.
func TestHeartbeatRoomIsPerTransport(t *testing.T) {
	for _, tc := range []struct {
		name      string
		hb        heartbeat
		rtc, sock int
	}{
		{"WebRTC only", heartbeat{Sessions: 3, Capacity: 10}, 7, 0},
		{"both", heartbeat{Sessions: 4, Capacity: 15, WebRTC: &Load{1, 10}, WebSocket: &Load{3, 5}}, 9, 2},
		{"WebSocket full", heartbeat{Sessions: 5, Capacity: 15, WebRTC: &Load{0, 10}, WebSocket: &Load{5, 5}}, 10, 0},
	} {
		if got := [2]int{tc.hb.room(webRTC), tc.hb.room(webSocket)}; got != [2]int{tc.rtc, tc.sock} {
			t.Errorf("%s: room for WebRTC and WebSocket %v, want %v", tc.name, got, [2]int{tc.rtc, tc.sock})
		}
	}
}

func TestHeartbeatOfAWorkerServingBothTransports(t *testing.T) {
	// The wire shape of docs/decisions/cluster.md.
	data := `{"v":1,"worker":"w1","sessions":12,"capacity":150,"webrtc":{"sessions":10,"capacity":100},` +
		`"websocket":{"sessions":2,"capacity":50},"interval_ms":1000}`
	h, err := decodeHeartbeat([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := heartbeat{V: 1, Worker: "w1", Sessions: 12, Capacity: 150, WebRTC: &Load{10, 100}, WebSocket: &Load{2, 50}, IntervalMS: 1000}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	if b, _ := json.Marshal(want); string(b) != data {
		t.Errorf("encoded %s, want %s", b, data)
	}
}
