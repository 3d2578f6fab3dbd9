package elevenlabs

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/tts/internal/ttstest"
)

// tierRefusalBody is ElevenLabs' answer (HTTP 403) to an output format
// the account's plan does not include. The status and wording are as
// reported against the live API (GoModel PR #787: "Output format
// 'pcm_44100' is only available on the Pro tier and above"; openclaw PR
// #30885: 403 subscription_required) in the {"detail": {"status",
// "message"}} shape of ElevenLabs' API errors; the API reference's
// output_format says pcm_44100 "requires you to be subscribed to Pro tier
// or above".
const tierRefusalBody = `{"detail":{"status":"subscription_required","message":"Output format 'pcm_44100' is only available on the Pro tier and above"}}`

// queryRates returns the output_format of every handshake, in order.
func queryRates(f *fakeElevenLabs) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, q := range f.query {
		for _, kv := range strings.Split(q, "&") {
			if v, ok := strings.CutPrefix(kv, "output_format="); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// A pipeline that plays at a rate not every plan has (48 kHz, WebRTC's)
// gets DefaultSampleRate, which the tts.Service resamples, instead of a
// format the account may not be allowed.
func TestAPipelineRateNotEveryPlanHasAsksForTheDefault(t *testing.T) {
	for _, out := range []int{44100, 48000} {
		f := newFake(t, "hello.ws")
		c := newClient(f)
		r := ttstest.Collect(context.Background(), c, tts.Request{Text: "Hello world.", ContextID: "a", SampleRate: out})
		c.Close()
		f.close()
		if r.Err != nil || r.Rate != DefaultSampleRate {
			t.Errorf("pipeline at %d Hz: audio at %d Hz, err %v; want %d", out, r.Rate, r.Err, DefaultSampleRate)
		}
		if got := queryRates(f); len(got) != 1 || got[0] != "pcm_24000" {
			t.Errorf("pipeline at %d Hz: asked for %v, want [pcm_24000]", out, got)
		}
	}
}

// A rate the account's tier refuses (the websocket handshake answered 403)
// is asked again at DefaultSampleRate at once, and later requests ask for
// it from the start.
func TestATierRefusalFallsBackToTheDefaultRate(t *testing.T) {
	f := newFake(t, "two_requests.ws")
	f.reject = func(n int) (int, http.Header, string) {
		if n == 0 {
			return http.StatusForbidden, nil, tierRefusalBody
		}
		return 0, nil, ""
	}
	defer f.close()
	c := newClient(f, func(o *Options) { o.SampleRate = 44100; o.MaxRetries = -1 })
	defer c.Close()
	for i, id := range []string{"a", "b"} {
		r := ttstest.Collect(context.Background(), c, tts.Request{Text: "Hello world.", ContextID: id, SampleRate: 48000})
		if r.Err != nil || r.Rate != DefaultSampleRate || !bytes.Equal(r.Audio, pcmFixture(t)) {
			t.Fatalf("request %d: %d bytes at %d Hz, err %v", i, len(r.Audio), r.Rate, r.Err)
		}
	}
	if got := queryRates(f); strings.Join(got, " ") != "pcm_44100 pcm_24000" {
		t.Errorf("handshakes asked for %v, want pcm_44100 then pcm_24000 (one connection for both requests)", got)
	}
}

// Over HTTP the same refusal falls back the same way.
func TestHTTPTierRefusalFallsBackToTheDefaultRate(t *testing.T) {
	lines := helloLines(t)
	f := newFakeHTTP(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.RawQuery, "pcm_44100") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(tierRefusalBody))
			return
		}
		streamLines(w, lines)
	})
	c := newHTTPClient(f, func(o *Options) { o.SampleRate = 44100; o.MaxRetries = -1 })
	for i := range 2 {
		r := run(context.Background(), c, "Hello world.", "a")
		if r.Err != nil || r.Rate != DefaultSampleRate {
			t.Fatalf("request %d: audio at %d Hz, err %v", i, r.Rate, r.Err)
		}
	}
	var got []string
	for _, rec := range f.calls() {
		got = append(got, rec.query)
	}
	if strings.Join(got, " ") != "output_format=pcm_44100 output_format=pcm_24000 output_format=pcm_24000" {
		t.Errorf("requests %v", got)
	}
}

// Other refusals are not mistaken for the tier's.
func TestOnlyTheTierRefusalFallsBack(t *testing.T) {
	for _, e := range []*APIError{
		{StatusCode: 403, Code: "missing_permissions", Message: "The API key lacks text_to_speech."},
		{StatusCode: 401, Code: "invalid_api_key"},
		{CloseCode: 1008, Message: "Quota exceeded."},
	} {
		if tierRefusal(e) {
			t.Errorf("%v taken for a tier refusal", e)
		}
	}
	if !tierRefusal(parseAPIError(403, []byte(tierRefusalBody))) {
		t.Error("the tier refusal is not recognised")
	}
}
