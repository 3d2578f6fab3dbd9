package telnyx

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// vectors is testdata/signature_vectors.json, signed by openssl (see
// testdata/signature_README.md).
type vectors struct {
	PublicKey      string   `json:"public_key"`
	OtherPublicKey string   `json:"other_public_key"`
	Vectors        []vector `json:"vectors"`
}

type vector struct {
	Name      string `json:"name"`
	Timestamp string `json:"timestamp"`
	Body      string `json:"body"`
	Signature string `json:"signature"`
}

func loadVectors(t testing.TB) (vectors, ed25519.PublicKey) {
	t.Helper()
	b, err := os.ReadFile("testdata/signature_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs vectors
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	pub, err := ParsePublicKey(vs.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return vs, pub
}

func (v vector) at() time.Time {
	at, err := ParseTimestamp(v.Timestamp)
	if err != nil {
		panic(err)
	}
	return at
}

func (v vector) request() *http.Request {
	r := httptest.NewRequest(http.MethodPost, "https://bot.example.com/telnyx/voice", strings.NewReader(v.Body))
	r.Header.Set(SignatureHeader, v.Signature)
	r.Header.Set(TimestampHeader, v.Timestamp)
	return r
}

func verifierAt(pub ed25519.PublicKey, now time.Time) Verifier {
	return Verifier{PublicKey: pub, Now: func() time.Time { return now }}
}

func TestCheckAcceptsOpenSSLVectors(t *testing.T) {
	vs, pub := loadVectors(t)
	for _, v := range vs.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			if err := verifierAt(pub, v.at().Add(30*time.Second)).Check(v.request()); err != nil {
				t.Fatalf("Check: %v", err)
			}
		})
	}
}

func TestSignMatchesOpenSSL(t *testing.T) {
	b, err := os.ReadFile("testdata/signature_test_key.pem")
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	vs, _ := loadVectors(t)
	for _, v := range vs.Vectors {
		sig, ts := Sign(key.(ed25519.PrivateKey), []byte(v.Body), v.at())
		if diff := cmp.Diff([2]string{v.Signature, v.Timestamp}, [2]string{sig, ts}); diff != "" {
			t.Errorf("%s: Sign (-openssl +got):\n%s", v.Name, diff)
		}
	}
}

func TestCheckRejects(t *testing.T) {
	vs, pub := loadVectors(t)
	v := vs.Vectors[0]
	now := v.at()
	other := vs.Vectors[1]
	otherKey, err := ParsePublicKey(vs.OtherPublicKey)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(*http.Request)
		key  ed25519.PublicKey
		now  time.Time
		want error
	}{
		{"body changed", func(r *http.Request) { setBody(r, strings.Replace(v.Body, "+13125550100", "+13125550199", 1)) }, pub, now, ErrSignature},
		{"body extended", func(r *http.Request) { setBody(r, v.Body+" ") }, pub, now, ErrSignature},
		{"timestamp header changed", func(r *http.Request) { r.Header.Set(TimestampHeader, "1796220030") }, pub, now, ErrSignature},
		{"signature of another webhook", func(r *http.Request) { r.Header.Set(SignatureHeader, other.Signature) }, pub, now, ErrSignature},
		{"one signature bit flipped", func(r *http.Request) { r.Header.Set(SignatureHeader, flipBit(v.Signature)) }, pub, now, ErrSignature},
		{"another account's key", func(*http.Request) {}, otherKey, now, ErrSignature},
		{"too old", func(*http.Request) {}, pub, now.Add(DefaultTolerance + time.Second), ErrTimestamp},
		{"from the future", func(*http.Request) {}, pub, now.Add(-DefaultTolerance - time.Second), ErrTimestamp},
		{"no signature header", func(r *http.Request) { r.Header.Del(SignatureHeader) }, pub, now, ErrNoSignature},
		{"no timestamp header", func(r *http.Request) { r.Header.Del(TimestampHeader) }, pub, now, ErrNoSignature},
		{"timestamp not decimal", func(r *http.Request) { r.Header.Set(TimestampHeader, "2026-12-02T14:00:00Z") }, pub, now, ErrMalformed},
		{"timestamp negative", func(r *http.Request) { r.Header.Set(TimestampHeader, "-1") }, pub, now, ErrMalformed},
		{"signature not base64", func(r *http.Request) { r.Header.Set(SignatureHeader, "!!!!") }, pub, now, ErrMalformed},
		{"signature short", func(r *http.Request) {
			r.Header.Set(SignatureHeader, base64.StdEncoding.EncodeToString(make([]byte, 63)))
		}, pub, now, ErrMalformed},
		{"body too large", func(r *http.Request) { setBody(r, strings.Repeat("x", DefaultMaxBody+1)) }, pub, now, ErrBodyTooLarge},
		{"no key configured", func(*http.Request) {}, nil, now, ErrPublicKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := v.request()
			tt.edit(r)
			err := verifierAt(tt.key, tt.now).Check(r)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Check = %v, want %v", err, tt.want)
			}
			if strings.Contains(err.Error(), v.Signature[:16]) {
				t.Errorf("error %q echoes the signature", err)
			}
		})
	}
}

func TestToleranceIsInclusiveAndConfigurable(t *testing.T) {
	vs, pub := loadVectors(t)
	v := vs.Vectors[0]
	if err := verifierAt(pub, v.at().Add(DefaultTolerance)).Check(v.request()); err != nil {
		t.Errorf("at the default tolerance: %v", err)
	}
	short := Verifier{PublicKey: pub, Tolerance: 10 * time.Second, Now: func() time.Time { return v.at().Add(11 * time.Second) }}
	if err := short.Check(v.request()); !errors.Is(err, ErrTimestamp) {
		t.Errorf("past a 10 s tolerance: %v, want ErrTimestamp", err)
	}
}

func TestParsePublicKey(t *testing.T) {
	for _, bad := range []string{"", "not base64!", base64.StdEncoding.EncodeToString(make([]byte, 31))} {
		if _, err := ParsePublicKey(bad); !errors.Is(err, ErrPublicKey) {
			t.Errorf("ParsePublicKey(%q) = %v, want ErrPublicKey", bad, err)
		}
	}
}

func TestCheckPutsTheBodyBack(t *testing.T) {
	vs, pub := loadVectors(t)
	v := vs.Vectors[0]
	r := v.request()
	if err := verifierAt(pub, v.at()).Check(r); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(v.Body, string(b)); diff != "" {
		t.Errorf("body after Check (-want +got):\n%s", diff)
	}
}

func TestInsecureSkipsTheCheck(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "http://localhost/telnyx/voice", strings.NewReader("{}"))
	if err := (Verifier{Insecure: true}).Check(r); err != nil {
		t.Fatalf("Insecure: %v", err)
	}
	if err := (Verifier{}).Check(r); !errors.Is(err, ErrNoSignature) {
		t.Fatalf("zero Verifier: %v, want ErrNoSignature", err)
	}
}

func TestHandler(t *testing.T) {
	vs, pub := loadVectors(t)
	v := vs.Vectors[0]
	reached := false
	h := verifierAt(pub, v.at()).Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = true
		io.Copy(w, r.Body)
	}))
	for _, tt := range []struct {
		name string
		edit func(*http.Request)
		code int
	}{
		{"signed", func(*http.Request) {}, http.StatusOK},
		{"tampered", func(r *http.Request) { setBody(r, v.Body+"x") }, http.StatusForbidden},
		{"too large", func(r *http.Request) { setBody(r, strings.Repeat("x", DefaultMaxBody+1)) }, http.StatusRequestEntityTooLarge},
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
			if tt.code == http.StatusOK && w.Body.String() != v.Body {
				t.Errorf("next read %q", w.Body.String())
			}
		})
	}
}

// FuzzHeaders feeds arbitrary header values and bodies: Verify never
// panics and never accepts what the test key did not sign.
func FuzzHeaders(f *testing.F) {
	vs, pub := loadVectors(f)
	for _, v := range vs.Vectors {
		f.Add(v.Timestamp, v.Signature, v.Body)
	}
	f.Add("", "", "")
	f.Add("99999999999999999999", "AAAA", "{}")
	f.Add("1796220000", strings.Repeat("A", 86), "{}")
	signed := map[string]bool{}
	for _, v := range vs.Vectors {
		signed[v.Timestamp+"|"+v.Body] = true
	}
	f.Fuzz(func(t *testing.T, ts, sig, body string) {
		err := Verify(pub, []byte(body), ts, sig, time.Unix(1796220000, 0), time.Hour)
		if err == nil && !signed[ts+"|"+body] {
			t.Fatalf("accepted an unsigned message: timestamp %q, body %q", ts, body)
		}
	})
}

func setBody(r *http.Request, body string) {
	r.Body = io.NopCloser(strings.NewReader(body))
	r.ContentLength = int64(len(body))
}

func flipBit(b64 string) string {
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		panic(err)
	}
	b[10] ^= 1
	return base64.StdEncoding.EncodeToString(b)
}
