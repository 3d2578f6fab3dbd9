package twilio

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// vector is one request of testdata/signature_vectors.json, signed by
// testdata/signature_gen.py with Python's hmac module (see
// testdata/signature_README.md).
type vector struct {
	Name        string `json:"name"`
	AuthToken   string `json:"auth_token"`
	Method      string `json:"method"`
	URL         string `json:"url"`
	ContentType string `json:"content_type"`
	Body        string `json:"body"`
	Signature   string `json:"signature"`
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	b, err := os.ReadFile("testdata/signature_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Fatal("no vectors")
	}
	return vs
}

// request is the vector as Twilio would send it: httptest.NewRequest sets
// Host from the URL and TLS for https.
func (v vector) request() *http.Request {
	r := httptest.NewRequest(v.Method, v.URL, strings.NewReader(v.Body))
	if v.ContentType != "" {
		r.Header.Set("Content-Type", v.ContentType)
	}
	r.Header.Set(SignatureHeader, v.Signature)
	return r
}

func TestCheckAcceptsIndependentVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			ver := Verifier{AuthToken: v.AuthToken}
			if u, _ := url.Parse(v.URL); u.Scheme == "wss" {
				// The upgrade reaches the server as an http(s) GET; the
				// deployment names its public wss URL.
				ver.PublicURL = "wss://" + u.Host
			}
			if err := ver.Check(v.request()); err != nil {
				t.Fatalf("Check: %v", err)
			}
		})
	}
}

func TestSignMatchesIndependentVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		if v.ContentType != "application/x-www-form-urlencoded" || strings.Contains(v.Name, "default port") {
			continue
		}
		params, err := url.ParseQuery(v.Body)
		if err != nil {
			t.Fatal(err)
		}
		if got := Sign(v.AuthToken, v.URL, params); got != v.Signature {
			t.Errorf("%s: Sign = %q, want %q", v.Name, got, v.Signature)
		}
	}
}

// Twilio's own test vectors, from github.com/twilio/twilio-go
// client/request_validator_test.go at commit
// d858acdc095564232ae71a5cd1c7b130dad88b73 (auth token "12345").
func TestVerifyAcceptsTwilioSDKVectors(t *testing.T) {
	const sdkURL = "https://mycompany.com/myapp.php?foo=1&bar=2"
	params := url.Values{
		"Digits":                {"1234"},
		"CallSid":               {"CA1234567890ABCDE"},
		"To":                    {"+18005551212"},
		"Caller":                {"+14158675309"},
		"From":                  {"+14158675309"},
		"ReasonConferenceEnded": {"test"},
		"Reason":                {"Participant"},
	}
	const bodyHash = "0a1ff7634d9ab3b95db5c9a2dfe9416e41502b283a80c7cf19632632f96e6620"
	tests := []struct {
		name, url, body, sig string
		params               url.Values
	}{
		{"https", sdkURL, "", "vOEb5UThFn24KEfnOFLQY2AE5FY=", params},
		{"https with a port, signed without", strings.Replace(sdkURL, ".com", ".com:1234", 1), "", "vOEb5UThFn24KEfnOFLQY2AE5FY=", params},
		{"http", strings.Replace(sdkURL, "https", "http", 1), "", "n2xBNyzSW7rfYStDtOFiFMv7qNo=", params},
		{"JSON body", sdkURL + "&bodySHA256=" + bodyHash, `{"property": "value", "boolean": true}`, "a9nBmqA0ju/hNViExpshrM61xv4=", nil},
		{"JSON body, no other parameter", "https://mycompany.com/myapp.php?bodySHA256=" + bodyHash, `{"property": "value", "boolean": true}`, "y77kIzt2vzLz71DgmJGsen2scGs=", nil},
		{"form body", sdkURL, "", "NBdBDr/T/lgjI+tlgpXjKZQZs/k=", url.Values{"property": {"value"}, "boolean": {"true"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Verify("12345", tt.url, tt.params, []byte(tt.body), tt.sig); err != nil {
				t.Fatal(err)
			}
		})
	}
	// The SDK's vector of parameters sorted wrongly (ReasonConferenceEnded
	// before Reason) must fail.
	if err := Verify("12345", sdkURL, params, nil, "95+Bu0JVPi0r/SsESZCVf0dWAjw="); !errors.Is(err, ErrSignature) {
		t.Errorf("wrongly sorted: err = %v, want ErrSignature", err)
	}
}

func TestCheckRejectsTamperedRequests(t *testing.T) {
	vs := loadVectors(t)
	voice, jsonVec := vs[0], vs[len(vs)-1]
	if voice.Name != "voice webhook POST" || !strings.Contains(jsonVec.URL, "bodySHA256") {
		t.Fatal("vectors out of order")
	}
	tests := []struct {
		name string
		v    vector
		edit func(*http.Request)
		want error
	}{
		{"body parameter changed", voice, func(r *http.Request) {
			setBody(r, strings.Replace(voice.Body, "CallStatus=ringing", "CallStatus=in-progress", 1))
		}, ErrSignature},
		{"body parameter added", voice, func(r *http.Request) { setBody(r, voice.Body+"&Digits=1") }, ErrSignature},
		{"body parameter removed", voice, func(r *http.Request) {
			setBody(r, strings.Replace(voice.Body, "&Direction=inbound", "", 1))
		}, ErrSignature},
		{"path changed", voice, func(r *http.Request) { r.URL.Path = "/twilio/other" }, ErrSignature},
		{"query added", voice, func(r *http.Request) { r.URL.RawQuery = "bot=other" }, ErrSignature},
		{"host changed", voice, func(r *http.Request) { r.Host = "evil.example.com" }, ErrSignature},
		{"scheme changed", voice, func(r *http.Request) { r.TLS = nil }, ErrSignature},
		{"signature of another request", voice, func(r *http.Request) { r.Header.Set(SignatureHeader, vs[1].Signature) }, ErrSignature},
		{"signature not base64", voice, func(r *http.Request) { r.Header.Set(SignatureHeader, "not a signature") }, ErrSignature},
		{"header missing", voice, func(r *http.Request) { r.Header.Del(SignatureHeader) }, ErrNoSignature},
		{"JSON body changed", jsonVec, func(r *http.Request) { setBody(r, strings.Replace(jsonVec.Body, "answered", "completed", 1)) }, ErrBodyHash},
		{"bodySHA256 changed", jsonVec, func(r *http.Request) {
			r.URL.RawQuery = "bodySHA256=" + strings.Repeat("0", 64)
		}, ErrSignature},
		{"form body malformed", voice, func(r *http.Request) { setBody(r, "a=%zz") }, ErrMalformed},
		{"body too large", voice, func(r *http.Request) { setBody(r, strings.Repeat("a", DefaultMaxBody+1)) }, ErrBodyTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.v.request()
			tt.edit(r)
			err := Verifier{AuthToken: tt.v.AuthToken}.Check(r)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Check = %v, want %v", err, tt.want)
			}
			if sig := r.Header.Get(SignatureHeader); len(sig) > 8 && strings.Contains(err.Error(), sig) {
				t.Errorf("error %q echoes the signature", err)
			}
		})
	}
	t.Run("wrong auth token", func(t *testing.T) {
		err := Verifier{AuthToken: "another token"}.Check(voice.request())
		if !errors.Is(err, ErrSignature) {
			t.Fatalf("Check = %v, want ErrSignature", err)
		}
	})
	t.Run("zero Verifier", func(t *testing.T) {
		if err := (Verifier{}).Check(voice.request()); !errors.Is(err, ErrSignature) {
			t.Fatalf("Check = %v, want ErrSignature", err)
		}
	})
}

func TestCheckUsesPublicURLBehindAProxy(t *testing.T) {
	v := loadVectors(t)[1] // https://bot.example.com/twilio/voice?bot=support&lang=en-GB
	r := httptest.NewRequest(http.MethodPost, "http://10.0.0.7:8080/twilio/voice?bot=support&lang=en-GB", strings.NewReader(v.Body))
	r.Header.Set("Content-Type", v.ContentType)
	r.Header.Set(SignatureHeader, v.Signature)
	if err := (Verifier{AuthToken: v.AuthToken}).Check(r); !errors.Is(err, ErrSignature) {
		t.Fatalf("without PublicURL: %v, want ErrSignature", err)
	}
	r.Body = io.NopCloser(strings.NewReader(v.Body))
	if err := (Verifier{AuthToken: v.AuthToken, PublicURL: "https://bot.example.com/"}).Check(r); err != nil {
		t.Fatalf("with PublicURL: %v", err)
	}
}

func TestCheckPutsTheBodyBack(t *testing.T) {
	v := loadVectors(t)[0]
	r := v.request()
	if err := (Verifier{AuthToken: v.AuthToken}).Check(r); err != nil {
		t.Fatal(err)
	}
	if err := r.ParseForm(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("Ada Lovelace & Co", r.PostForm.Get("CallerName")); diff != "" {
		t.Errorf("form after Check (-want +got):\n%s", diff)
	}
}

func TestInsecureSkipsTheCheck(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "http://localhost/twilio/voice", strings.NewReader("CallSid=CA1"))
	if err := (Verifier{Insecure: true}).Check(r); err != nil {
		t.Fatalf("Insecure: %v", err)
	}
	if err := (Verifier{AuthToken: "t"}).Check(r); !errors.Is(err, ErrNoSignature) {
		t.Fatalf("without Insecure: %v, want ErrNoSignature", err)
	}
}

func TestHandler(t *testing.T) {
	v := loadVectors(t)[0]
	reached := 0
	h := Verifier{AuthToken: v.AuthToken}.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		io.WriteString(w, r.PostFormValue("CallSid"))
	}))
	tests := []struct {
		name    string
		edit    func(*http.Request)
		code    int
		reached int
	}{
		{"signed", func(*http.Request) {}, http.StatusOK, 1},
		{"tampered", func(r *http.Request) { setBody(r, v.Body+"&x=1") }, http.StatusForbidden, 0},
		{"unsigned", func(r *http.Request) { r.Header.Del(SignatureHeader) }, http.StatusForbidden, 0},
		{"too large", func(r *http.Request) { setBody(r, strings.Repeat("a", DefaultMaxBody+1)) }, http.StatusRequestEntityTooLarge, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reached = 0
			r := v.request()
			tt.edit(r)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.code || reached != tt.reached {
				t.Fatalf("code %d, next reached %d times; want %d, %d", w.Code, reached, tt.code, tt.reached)
			}
			if tt.code == http.StatusOK && w.Body.String() != "CA0123456789abcdef0123456789abcdef" {
				t.Errorf("next read CallSid %q", w.Body.String())
			}
		})
	}
}

// FuzzCheck feeds arbitrary signature headers, bodies and paths: Check never
// panics, and accepts a request only when its header is the signature Sign
// computes for it.
func FuzzCheck(f *testing.F) {
	for _, v := range loadVectors(f) {
		u, _ := url.Parse(v.URL)
		f.Add(v.Signature, v.Body, u.RequestURI())
	}
	f.Add("", "a=%zz", "/")
	f.Add("====", "a=1;b=2", "/x?bodySHA256=zz")
	f.Fuzz(func(t *testing.T, sig, body, uri string) {
		if !strings.HasPrefix(uri, "/") || strings.ContainsAny(uri, " \r\n#") {
			return
		}
		u, err := url.ParseRequestURI(uri)
		if err != nil {
			return
		}
		r := httptest.NewRequest(http.MethodPost, "https://bot.example.com/", strings.NewReader(body))
		r.URL = u
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set(SignatureHeader, sig)
		err = Verifier{AuthToken: "fuzz"}.Check(r)
		if err != nil {
			return
		}
		params, _ := url.ParseQuery(body)
		if u.Query().Get("bodySHA256") != "" {
			params = nil
		}
		full := "https://bot.example.com" + u.RequestURI()
		alt := "https://bot.example.com:443" + u.RequestURI()
		if sig != Sign("fuzz", full, params) && sig != Sign("fuzz", alt, params) {
			t.Fatalf("accepted signature %q for %q", sig, full)
		}
	})
}

func setBody(r *http.Request, body string) {
	r.Body = io.NopCloser(strings.NewReader(body))
	r.ContentLength = int64(len(body))
}
