package openaiapitest

import (
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

func post(t *testing.T, url string) (*http.Response, string, error) {
	t.Helper()
	resp, err := http.Post(url+"/v1/audio/speech", "application/json", strings.NewReader(`{"input":"hi"}`))
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

func TestAnswersInOrderAndRepeatsTheLast(t *testing.T) {
	s := New(t,
		Answer{Status: http.StatusTooManyRequests, ContentType: "application/json", Header: http.Header{"Retry-After": {"0"}}, Body: []byte(`{"error":{}}`)},
		Answer{ContentType: "audio/pcm", Body: []byte("pcm")},
	)
	resp, body, err := post(t, s.URL)
	if err != nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "0" || resp.Header.Get("Content-Type") != "application/json" || body != `{"error":{}}` {
		t.Fatalf("first answer: %v %v %q, err %v; want the 429", resp.StatusCode, resp.Header, body, err)
	}
	for i := range 2 {
		resp, body, err := post(t, s.URL)
		if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "audio/pcm" || body != "pcm" {
			t.Fatalf("answer %d: %v %q, err %v; want the last answer again, with status 200", i+2, resp.StatusCode, body, err)
		}
	}
	if n := s.Requests(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func TestDropHangsUpWithoutAnAnswer(t *testing.T) {
	s := New(t, Answer{Drop: true})
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodGet, s.URL, nil)
	req.Close = true
	resp, err := client.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("status %d; want a broken connection", resp.StatusCode)
	}
	if s.Requests() == 0 {
		t.Error("the dropped request was not counted")
	}
}

func TestCloseStopsTheServer(t *testing.T) {
	s := New(t, Answer{Body: []byte("ok")})
	if _, body, err := post(t, s.URL); err != nil || body != "ok" {
		t.Fatalf("body %q, err %v", body, err)
	}
	s.Close()
	s.Close() // again, as the test's cleanup does: harmless
	if _, _, err := post(t, s.URL); err == nil {
		t.Error("the server answered after Close")
	}
	http.DefaultClient.CloseIdleConnections() // goleak in TestMain checks the rest
}

func TestFixtureReadsTestdata(t *testing.T) {
	if got := string(Fixture(t, "answer.json")); got != "{\"text\":\"hello\"}\n" {
		t.Errorf("Fixture = %q", got)
	}
}

func TestFixtureFailsTheTestOnAMissingFile(t *testing.T) {
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Fixture(rec, "missing.json")
	}()
	<-done
	if !errors.Is(rec.err, errFatal) {
		t.Error("Fixture of a missing file did not fail the test")
	}
}

var errFatal = errors.New("fatal")

// fatalRecorder records a Fatal and ends its goroutine, as testing does.
type fatalRecorder struct {
	testing.TB
	err error
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatal(...any) {
	r.err = errFatal
	runtime.Goexit()
}
