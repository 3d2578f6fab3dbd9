package webrtc

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

// startID posts to /start and returns the session id.
func startID(t *testing.T, h *harness, body string) string {
	t.Helper()
	status, _, resp := do(t, "POST", h.url("/start"), body)
	if status != http.StatusOK {
		t.Fatalf("/start: %d %s", status, resp)
	}
	var r struct{ SessionID string }
	if err := json.Unmarshal([]byte(resp), &r); err != nil || r.SessionID == "" {
		t.Fatalf("/start replied %s", resp)
	}
	return r.SessionID
}

// knownStart reports whether the session path of id answers (200) rather
// than 404.
func knownStart(t *testing.T, h *harness, id string) bool {
	t.Helper()
	status, _, _ := do(t, "GET", h.url("/sessions/"+id+"/status"), "")
	return status == http.StatusOK
}

// Row 1: 1000 × /start with a 1 MB body kept 1 GB for ten minutes.
func TestStartBodiesAreCappedSmallAndStoredStartsAreBounded(t *testing.T) {
	if d := (Options{}).withDefaults(); d.MaxStartBodyBytes != 16<<10 || d.MaxStarts != 1000 {
		t.Errorf("defaults: MaxStartBodyBytes %d, MaxStarts %d; want 16 KiB and 1000", d.MaxStartBodyBytes, d.MaxStarts)
	}
	h := newHarness(t, Options{MaxStarts: 50, Logger: nopLogger()})
	big := `{"body":"` + strings.Repeat("x", 16<<10) + `"}`
	status, _, resp := do(t, "POST", h.url("/start"), big)
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(resp, "over 16384 bytes") {
		t.Errorf("/start with a 16 KiB string in its body: %d %s, want 413", status, resp)
	}
	// What the real client sends is far under the cap.
	first := startID(t, h, `{"body":{"user":"ann","room":"`+strings.Repeat("r", 8<<10)+`"}}`)
	var last string
	for range 200 {
		last = startID(t, h, `{"body":{"n":1}}`)
	}
	h.srv.mu.Lock()
	n := h.srv.starts.len()
	h.srv.mu.Unlock()
	if n != 50 {
		t.Errorf("%d /start ids stored after 201 calls with MaxStarts 50", n)
	}
	if knownStart(t, h, first) {
		t.Error("the oldest unused /start id was kept past MaxStarts")
	}
	if !knownStart(t, h, last) {
		t.Error("the newest /start id was forgotten")
	}
}

func TestStartIDsExpireAfterTheirTTL(t *testing.T) {
	h := newHarness(t, Options{StartTTL: time.Second})
	old := startID(t, h, "")
	used := startID(t, h, "")
	time.Sleep(600 * time.Millisecond)
	if !knownStart(t, h, used) { // a use starts the TTL again
		t.Fatal("a /start id was forgotten before its TTL")
	}
	time.Sleep(600 * time.Millisecond)
	if knownStart(t, h, old) {
		t.Error("a /start id unused for 1.2 s was still valid with a 1 s TTL")
	}
	if !knownStart(t, h, used) {
		t.Error("a /start id used 600 ms ago was forgotten with a 1 s TTL")
	}
}

// A /start id that a live session was created through is what the client
// restarts its peer connection on: neither the cap nor the TTL may take it
// while the session lives.
func TestAStartIDInUseOutlivesTheCapAndTheTTL(t *testing.T) {
	h := newHarness(t, Options{MaxStarts: 2, StartTTL: 2 * time.Second})
	id := startID(t, h, `{"body":{"user":"ann"}}`)
	ctx := testContext(t, 20*time.Second)
	c := h.dialUnmanaged(ctx, webrtctest.Options{OfferURL: h.url("/sessions/" + id + "/api/offer")})
	for range 5 {
		startID(t, h, "")
	}
	time.Sleep(2200 * time.Millisecond)
	if !knownStart(t, h, id) {
		t.Fatal("the /start id of a live session was forgotten")
	}
	s, _, _ := h.session(c)
	c.Close()
	<-s.Done()
	// Back among the unused ids, it expires as they do.
	time.Sleep(2200 * time.Millisecond)
	if knownStart(t, h, id) {
		t.Error("the /start id of an ended session never expired")
	}
}

// fillStarts stores n unused ids in t, valid from now for its TTL,
// without the work of n calls.
func fillStarts(t *startTable, n int, now time.Time) {
	for i := range n {
		e := &startEntry{id: fmt.Sprintf("filler-%d", i), expires: now.Add(t.ttl)}
		e.elem = t.unclaimed.PushBack(e)
		t.byID[e.id] = e
	}
}

// Row 2: the cost of a /start grew with the entries stored (0.18 -> 1.2 ms
// at 60k), because each call scanned them all under the server's lock.
func TestStartCostDoesNotGrowWithTheStoredStarts(t *testing.T) {
	h := newHarness(t, Options{Logger: nopLogger(), MaxStarts: 100000})
	srv := h.srv
	now := time.Now()
	srv.mu.Lock()
	fillStarts(srv.starts, 50000, now)
	before := srv.starts.examined
	srv.mu.Unlock()
	const calls = 100
	for range calls {
		rec := httptest.NewRecorder()
		req := localRequest("POST", "/start", strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("/start: %d %s", rec.Code, rec.Body)
		}
	}
	srv.mu.Lock()
	per := float64(srv.starts.examined-before) / calls
	srv.mu.Unlock()
	if per > 2 {
		t.Errorf("each /start looked at %.0f stored entries with 50k stored, want at most 2", per)
	}
}

func TestStartTableDropsExpiredAndOldestInOrder(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tab := newStartTable(time.Minute, 3)
	ids := func() []string {
		var out []string
		for f := tab.unclaimed.Front(); f != nil; f = f.Next() {
			out = append(out, f.Value.(*startEntry).id)
		}
		return out
	}
	tab.add("a", nil, t0)
	tab.add("b", nil, t0.Add(time.Second))
	tab.add("c", nil, t0.Add(2*time.Second))
	tab.get("a", t0.Add(3*time.Second)) // used: now the newest
	tab.add("d", nil, t0.Add(4*time.Second))
	if d := cmp.Diff([]string{"c", "a", "d"}, ids()); d != "" {
		t.Errorf("at the cap the oldest unused id goes (-want +got):\n%s", d)
	}
	c := tab.get("c", t0.Add(5*time.Second))
	tab.claim(c)
	tab.add("e", nil, t0.Add(63500*time.Millisecond)) // a (used at 3 s) expired
	if d := cmp.Diff([]string{"d", "e"}, ids()); d != "" {
		t.Errorf("after a's TTL, with c claimed (-want +got):\n%s", d)
	}
	if tab.get("c", t0.Add(10*time.Minute)) != c {
		t.Error("a claimed id expired")
	}
	tab.add("f", nil, t0.Add(63600*time.Millisecond))
	tab.release(c, t0.Add(63700*time.Millisecond)) // back at the cap: d makes room
	if d := cmp.Diff([]string{"e", "f", "c"}, ids()); d != "" {
		t.Errorf("a released id goes back as the newest (-want +got):\n%s", d)
	}
	if tab.len() != 3 || tab.get("d", t0.Add(63700*time.Millisecond)) != nil {
		t.Errorf("%d ids known, d still there: %v", tab.len(), tab.get("d", t0) != nil)
	}
}

func BenchmarkStart(b *testing.B) {
	for _, stored := range []int{10, 50000} {
		b.Run(fmt.Sprintf("stored=%d", stored), func(b *testing.B) {
			srv, err := NewServer(Options{NewPipeline: nopFactory, Logger: nopLogger(), MaxStarts: 2 * stored})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			now := time.Now()
			srv.mu.Lock()
			fillStarts(srv.starts, stored, now)
			srv.mu.Unlock()
			req := localRequest("POST", "/start", nil)
			req.Header.Set("Content-Type", "application/json")
			b.ReportAllocs()
			for b.Loop() {
				req.Body = http.NoBody
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				// Keep the table at its size: the benchmark measures a
				// call, not a growing table.
				srv.mu.Lock()
				srv.starts.remove(srv.starts.unclaimed.Back().Value.(*startEntry))
				srv.mu.Unlock()
			}
		})
	}
}
