package plivo

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
	Name          string `json:"name"`
	AuthToken     string `json:"auth_token"`
	MainAuthToken string `json:"main_auth_token"`
	Method        string `json:"method"`
	URL           string `json:"url"`
	ContentType   string `json:"content_type"`
	Body          string `json:"body"`
	Nonce         string `json:"nonce"`
	SignedString  string `json:"signed_string"`
	Signature     string `json:"signature"`
	MainSignature string `json:"main_signature"`
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
	if len(vs) < 2 || vs[0].Name != "answer POST" {
		t.Fatal("vectors missing or out of order")
	}
	return vs
}

func (v vector) request() *http.Request {
	r := httptest.NewRequest(v.Method, v.URL, strings.NewReader(v.Body))
	if v.ContentType != "" {
		r.Header.Set("Content-Type", v.ContentType)
	}
	r.Header.Set(SignatureHeader, v.Signature)
	r.Header.Set(MainAccountSignatureHeader, v.MainSignature)
	r.Header.Set(NonceHeader, v.Nonce)
	return r
}

func TestCheckAcceptsIndependentVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			if err := (Verifier{AuthToken: v.AuthToken}).Check(v.request()); err != nil {
				t.Errorf("subaccount token: %v", err)
			}
			if err := (Verifier{AuthToken: v.MainAuthToken}).Check(v.request()); err != nil {
				t.Errorf("main account token: %v", err)
			}
		})
	}
}

func TestSignedStringMatchesIndependentVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		var params url.Values
		if v.Method != http.MethodGet {
			params, _ = url.ParseQuery(v.Body)
		}
		got, err := SignedString(v.Method, v.URL, params)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(v.SignedString, got); diff != "" {
			t.Errorf("%s: SignedString (-python +go):\n%s", v.Name, diff)
		}
	}
}

// Plivo's own test vectors, from github.com/plivo/plivo-go utils_test.go at
// commit 273a8369467eeb2e2603d3916a0f6587dbde4ec4.
func TestVerifyAcceptsPlivoSDKVectors(t *testing.T) {
	const (
		token = "Y2Q2ZDgxZmY5YWRiOTI5YmQ1Njg0MTAxZWIyOTc4"
		nonce = "31627761595286130198"
		base  = "https://plivobin.non-prod.plivops.com/api/v1/validate_signature03.xml"
	)
	params := url.Values{}
	for k, v := range map[string]string{
		"Direction": "outbound", "From": "19792014278", "ALegUUID": "3e82ae9d-2c78-4d85-b1a4-6eae7dbafb36",
		"CallStatus": "in-progress", "BillRate": "0.002", "ParentAuthID": "MANWVLYTK4ZWU1YTY4QA",
		"To":              "sip:PlivoSignature382029104058171078704104@phone-qa.voice.plivodev.com",
		"ALegRequestUUID": "3e82ae9d-2c78-4d85-b1a4-6eae7dbafb36", "CallUUID": "3e82ae9d-2c78-4d85-b1a4-6eae7dbafb36",
		"RequestUUID":  "3e82ae9d-2c78-4d85-b1a4-6eae7dbafb36",
		"SIP-H-To":     "<sip:PlivoSignature382029104058171078704104@52.9.11.55;transport=udp>;tag=1",
		"SessionStart": "2020-04-08 11:34:33.238707", "Event": "StartApp",
	} {
		params.Set(k, v)
	}
	tests := []struct{ name, method, url, sig string }{
		{"POST with a query", "POST", base + "/?a=b&c=d", "k7Pusd4OxCIjR5IfA9iedDNu/h/gbdYqdzG/MiYtd1c="},
		{"GET with a query", "GET", base + "/?a=b&c=d", "UBq8jAtd32wR8EK9VgxbBn4n5rpI/l1H9iN4WfSEHFQ="},
		{"POST", "POST", base, "iAjE5QqI37mbkYe4w3jTMudqEzbDufdqi7sYwTu64e0="},
		{"GET", "GET", base, "i/MQsaQSAd6fiKhOh2qeeeLHZ9faldADSb3/7+Akfbc="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Verify(token, tt.method, tt.url, params, nonce, tt.sig); err != nil {
				t.Fatal(err)
			}
			if err := Verify(token, tt.method, tt.url, params, "1"+nonce, tt.sig); !errors.Is(err, ErrSignature) {
				t.Errorf("another nonce: %v, want ErrSignature", err)
			}
		})
	}
}

func TestCheckRejectsTamperedRequests(t *testing.T) {
	vs := loadVectors(t)
	answer, withQuery, get := vs[0], vs[1], vs[2]
	tests := []struct {
		name string
		v    vector
		edit func(*http.Request)
		want error
	}{
		{"body parameter changed", answer, func(r *http.Request) {
			setBody(r, strings.Replace(answer.Body, "To=14155550100", "To=14155550199", 1))
		}, ErrSignature},
		{"body parameter added", answer, func(r *http.Request) { setBody(r, answer.Body+"&Digits=1") }, ErrSignature},
		{"query parameter changed", withQuery, func(r *http.Request) { r.URL.RawQuery = "bot=sales&lang=en" }, ErrSignature},
		{"GET parameter changed", get, func(r *http.Request) {
			r.URL.RawQuery = strings.Replace(r.URL.RawQuery, "From=14155551212", "From=14155551213", 1)
		}, ErrSignature},
		{"path changed", answer, func(r *http.Request) { r.URL.Path = "/plivo/other" }, ErrSignature},
		{"host changed", answer, func(r *http.Request) { r.Host = "evil.example.com" }, ErrSignature},
		{"scheme changed", answer, func(r *http.Request) { r.TLS = nil }, ErrSignature},
		{"method changed", answer, func(r *http.Request) { r.Method = http.MethodPut }, nil},
		{"nonce changed", answer, func(r *http.Request) { r.Header.Set(NonceHeader, "05429567804466091623") }, ErrSignature},
		{"signature of another request", answer, func(r *http.Request) {
			r.Header.Set(SignatureHeader, withQuery.Signature)
			r.Header.Set(MainAccountSignatureHeader, withQuery.MainSignature)
		}, ErrSignature},
		{"no signature headers", answer, func(r *http.Request) {
			r.Header.Del(SignatureHeader)
			r.Header.Del(MainAccountSignatureHeader)
		}, ErrNoSignature},
		{"no nonce", answer, func(r *http.Request) { r.Header.Del(NonceHeader) }, ErrNoSignature},
		{"too many signatures", answer, func(r *http.Request) {
			r.Header.Set(SignatureHeader, strings.Repeat("x,", maxSignatures)+answer.Signature)
			r.Header.Del(MainAccountSignatureHeader)
		}, ErrMalformed},
		{"form body malformed", answer, func(r *http.Request) { setBody(r, "a=%zz") }, ErrMalformed},
		{"body too large", answer, func(r *http.Request) { setBody(r, strings.Repeat("a", DefaultMaxBody+1)) }, ErrBodyTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.v.request()
			tt.edit(r)
			err := Verifier{AuthToken: tt.v.AuthToken}.Check(r)
			if tt.want == nil {
				// Plivo's SDKs sign every method but GET as POST, and so
				// does this package: the method is not itself signed.
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Check = %v, want %v", err, tt.want)
			}
			if strings.Contains(err.Error(), tt.v.Signature[:16]) {
				t.Errorf("error %q echoes the signature", err)
			}
		})
	}
	t.Run("wrong auth token", func(t *testing.T) {
		if err := (Verifier{AuthToken: "another"}).Check(answer.request()); !errors.Is(err, ErrSignature) {
			t.Fatalf("Check = %v, want ErrSignature", err)
		}
	})
	t.Run("zero Verifier", func(t *testing.T) {
		if err := (Verifier{}).Check(answer.request()); !errors.Is(err, ErrSignature) {
			t.Fatalf("Check = %v, want ErrSignature", err)
		}
	})
}

func TestCheckAcceptsAnyOfSeveralSignatures(t *testing.T) {
	v := loadVectors(t)[0]
	r := v.request()
	r.Header.Set(SignatureHeader, "c29tZXRoaW5nIGVsc2U=, "+v.Signature)
	r.Header.Del(MainAccountSignatureHeader)
	if err := (Verifier{AuthToken: v.AuthToken}).Check(r); err != nil {
		t.Fatal(err)
	}
}

func TestCheckUsesPublicURLBehindAProxy(t *testing.T) {
	v := loadVectors(t)[1]
	r := v.request()
	r.Host, r.TLS = "10.0.0.7:8080", nil
	if err := (Verifier{AuthToken: v.AuthToken}).Check(r); !errors.Is(err, ErrSignature) {
		t.Fatalf("without PublicURL: %v, want ErrSignature", err)
	}
	if err := (Verifier{AuthToken: v.AuthToken, PublicURL: "https://bot.example.com"}).Check(r); err != nil {
		t.Fatalf("with PublicURL: %v", err)
	}
}

func TestCheckPutsTheBodyBack(t *testing.T) {
	v := loadVectors(t)[0]
	r := v.request()
	if err := (Verifier{AuthToken: v.AuthToken}).Check(r); err != nil {
		t.Fatal(err)
	}
	if got := r.PostFormValue("CallerName"); got != "Ada Lovelace & Co" {
		t.Errorf("CallerName after Check = %q", got)
	}
}

func TestInsecureSkipsTheCheck(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "http://localhost/plivo/answer", strings.NewReader("CallUUID=1"))
	if err := (Verifier{Insecure: true}).Check(r); err != nil {
		t.Fatalf("Insecure: %v", err)
	}
	if err := (Verifier{AuthToken: "t"}).Check(r); !errors.Is(err, ErrNoSignature) {
		t.Fatalf("without Insecure: %v, want ErrNoSignature", err)
	}
}

func TestHandler(t *testing.T) {
	v := loadVectors(t)[0]
	reached := false
	h := Verifier{AuthToken: v.AuthToken}.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = true
		io.WriteString(w, r.PostFormValue("CallUUID"))
	}))
	for _, tt := range []struct {
		name string
		edit func(*http.Request)
		code int
	}{
		{"signed", func(*http.Request) {}, http.StatusOK},
		{"tampered", func(r *http.Request) { setBody(r, v.Body+"&x=1") }, http.StatusForbidden},
		{"too large", func(r *http.Request) { setBody(r, strings.Repeat("a", DefaultMaxBody+1)) }, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reached = false
			r := v.request()
			tt.edit(r)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.code || reached != (tt.code == http.StatusOK) {
				t.Fatalf("code %d, reached %v; want %d", w.Code, reached, tt.code)
			}
			if tt.code == http.StatusOK && w.Body.String() != "3e82ae9d-2c78-4d85-b1a4-6eae7dbafb36" {
				t.Errorf("next read CallUUID %q", w.Body.String())
			}
		})
	}
}

// FuzzVerify feeds arbitrary signature headers, nonces, URLs and bodies:
// Verify never panics and accepts only a header offering the signature
// Sign computes.
func FuzzVerify(f *testing.F) {
	for _, v := range loadVectors(f) {
		f.Add(v.Signature, v.Nonce, v.URL, v.Body)
	}
	f.Add(",,,,,,,,,", "n", "https://x/?a=%zz", "")
	f.Add("", "", "::", "a=1")
	f.Fuzz(func(t *testing.T, sigs, nonce, rawURL, body string) {
		params, err := url.ParseQuery(body)
		if err != nil {
			return
		}
		if Verify("fuzz", http.MethodPost, rawURL, params, nonce, sigs) != nil {
			return
		}
		want, err := Sign("fuzz", http.MethodPost, rawURL, params, nonce)
		if err != nil || !strings.Contains(sigs, want) {
			t.Fatalf("accepted %q for %q", sigs, rawURL)
		}
	})
}

func setBody(r *http.Request, body string) {
	r.Body = io.NopCloser(strings.NewReader(body))
	r.ContentLength = int64(len(body))
}
