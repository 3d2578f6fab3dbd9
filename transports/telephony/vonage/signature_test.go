package vonage

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// vectors is testdata/signature_vectors.json, tokens made by
// testdata/signature_gen.py with Python's hmac module (see
// testdata/signature_README.md).
type vectors struct {
	Secret  string  `json:"secret"`
	IAT     int64   `json:"iat"`
	APIKey  string  `json:"api_key"`
	Valid   []valid `json:"valid"`
	Invalid []struct {
		Name  string `json:"name"`
		Token string `json:"token"`
		Want  string `json:"want"`
	} `json:"invalid_for_answer_post"`
}

type valid struct {
	Name         string `json:"name"`
	Method       string `json:"method"`
	URL          string `json:"url"`
	Body         string `json:"body"`
	QueryPayload string `json:"query_payload"`
	Token        string `json:"token"`
}

func loadVectors(t testing.TB) vectors {
	t.Helper()
	b, err := os.ReadFile("testdata/signature_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs vectors
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs.Valid) < 2 || vs.Valid[0].Name != "answer POST" || vs.Valid[1].Method != http.MethodGet {
		t.Fatal("vectors missing or out of order")
	}
	return vs
}

func (vs vectors) verifier(now time.Time) Verifier {
	return Verifier{SignatureSecret: vs.Secret, APIKey: vs.APIKey, Now: func() time.Time { return now }}
}

func (vs vectors) issued() time.Time { return time.Unix(vs.IAT, 0) }

func (v valid) request() *http.Request {
	r := httptest.NewRequest(v.Method, v.URL, strings.NewReader(v.Body))
	if v.Body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	r.Header.Set("Authorization", "Bearer "+v.Token)
	return r
}

func TestCheckAcceptsIndependentVectors(t *testing.T) {
	vs := loadVectors(t)
	for _, v := range vs.Valid {
		t.Run(v.Name, func(t *testing.T) {
			if err := vs.verifier(vs.issued().Add(time.Minute)).Check(v.request()); err != nil {
				t.Fatalf("Check: %v", err)
			}
		})
	}
}

func TestVerifyReturnsTheClaims(t *testing.T) {
	vs := loadVectors(t)
	v := vs.Valid[0]
	claims, err := vs.verifier(vs.issued()).Verify(v.Token, []byte(v.Body))
	if err != nil {
		t.Fatal(err)
	}
	want := Claims{APIKey: "a1b2c3d4", ApplicationID: "aaaaaaaa-bbbb-cccc-dddd-0123456789ab"}
	want.Issuer, want.ID = "Vonage", "c5ba8f24-1a14-4c10-bfdf-3fbe8ce511b5"
	if diff := cmp.Diff(want, *claims, cmpopts.IgnoreFields(Claims{}, "PayloadHash", "IssuedAt")); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	if !claims.IssuedAt.Equal(vs.issued()) {
		t.Errorf("iat %v, want %v", claims.IssuedAt, vs.issued())
	}
}

func TestQueryPayloadMatchesJSONStringify(t *testing.T) {
	vs := loadVectors(t)
	v := vs.Valid[1]
	_, rawQuery, _ := strings.Cut(v.URL, "?")
	got, err := QueryPayload(rawQuery)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(v.QueryPayload, string(got)); diff != "" {
		t.Errorf("QueryPayload (-python +go):\n%s", diff)
	}
	for q, want := range map[string]string{
		"":                     `{}`,
		"a=1&a=2&b":            `{"a":"1","b":""}`,
		"k=%0A%01%5C%E2%80%A8": "{\"k\":\"\\n\\u0001\\\\\u2028\"}",
		"x=%FF":                "{\"x\":\"\uFFFD\"}",
	} {
		got, err := QueryPayload(q)
		if err != nil || string(got) != want {
			t.Errorf("QueryPayload(%q) = %s, %v; want %s", q, got, err, want)
		}
	}
	if _, err := QueryPayload("a=%zz"); !errors.Is(err, ErrPayloadHash) {
		t.Errorf("bad escape: %v, want ErrPayloadHash", err)
	}
}

func TestCheckRejects(t *testing.T) {
	vs := loadVectors(t)
	post, get := vs.Valid[0], vs.Valid[1]
	kinds := map[string]error{"token": ErrToken, "timestamp": ErrTimestamp, "payload_hash": ErrPayloadHash, "api_key": ErrAPIKey}
	for _, bad := range vs.Invalid {
		t.Run(bad.Name, func(t *testing.T) {
			r := post.request()
			r.Header.Set("Authorization", "Bearer "+bad.Token)
			err := vs.verifier(vs.issued()).Check(r)
			if !errors.Is(err, kinds[bad.Want]) {
				t.Fatalf("Check = %v, want %v", err, kinds[bad.Want])
			}
			if strings.Contains(err.Error(), bad.Token[len(bad.Token)-20:]) {
				t.Errorf("error %q echoes the token", err)
			}
		})
	}
	tests := []struct {
		name string
		v    valid
		edit func(*http.Request)
		now  time.Time
		want error
	}{
		{"body changed", post, func(r *http.Request) { setBody(r, strings.Replace(post.Body, "447700900000", "447700900009", 1)) }, vs.issued(), ErrPayloadHash},
		{"body emptied", post, func(r *http.Request) { setBody(r, "") }, vs.issued(), ErrPayloadHash},
		{"GET query changed", get, func(r *http.Request) {
			r.URL.RawQuery = strings.Replace(r.URL.RawQuery, "447700900001", "447700900002", 1)
		}, vs.issued(), ErrPayloadHash},
		{"GET query reordered", get, func(r *http.Request) {
			a, b, _ := strings.Cut(r.URL.RawQuery, "&")
			r.URL.RawQuery = b + "&" + a
		}, vs.issued(), ErrPayloadHash},
		{"too old", post, func(*http.Request) {}, vs.issued().Add(DefaultTolerance + time.Second), ErrTimestamp},
		{"from the future", post, func(*http.Request) {}, vs.issued().Add(-DefaultTolerance - time.Second), ErrTimestamp},
		{"token tampered", post, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+flipClaim(post.Token)) }, vs.issued(), ErrToken},
		{"not a JWT", post, func(r *http.Request) { r.Header.Set("Authorization", "Bearer abc.def") }, vs.issued(), ErrToken},
		{"token too long", post, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+strings.Repeat("a", maxToken+1)) }, vs.issued(), ErrToken},
		{"no Authorization", post, func(r *http.Request) { r.Header.Del("Authorization") }, vs.issued(), ErrNoToken},
		{"Basic, not Bearer", post, func(r *http.Request) { r.Header.Set("Authorization", "Basic dTpw") }, vs.issued(), ErrNoToken},
		{"empty Bearer", post, func(r *http.Request) { r.Header.Set("Authorization", "Bearer  ") }, vs.issued(), ErrNoToken},
		{"body too large", post, func(r *http.Request) { setBody(r, strings.Repeat("x", DefaultMaxBody+1)) }, vs.issued(), ErrBodyTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.v.request()
			tt.edit(r)
			if err := vs.verifier(tt.now).Check(r); !errors.Is(err, tt.want) {
				t.Fatalf("Check = %v, want %v", err, tt.want)
			}
		})
	}
	t.Run("zero Verifier", func(t *testing.T) {
		if err := (Verifier{}).Check(post.request()); !errors.Is(err, ErrToken) {
			t.Fatalf("Check = %v, want ErrToken", err)
		}
	})
}

func TestIgnorePayloadHashStillChecksTheToken(t *testing.T) {
	vs := loadVectors(t)
	v := vs.verifier(vs.issued())
	v.IgnorePayloadHash = true
	r := vs.Valid[0].request()
	setBody(r, "anything")
	if err := v.Check(r); err != nil {
		t.Fatalf("changed body, IgnorePayloadHash: %v", err)
	}
	r = vs.Valid[0].request()
	r.Header.Set("Authorization", "Bearer "+vs.Invalid[0].Token) // another secret
	if err := v.Check(r); !errors.Is(err, ErrToken) {
		t.Fatalf("another secret, IgnorePayloadHash: %v, want ErrToken", err)
	}
}

func TestSignIsVerified(t *testing.T) {
	vs := loadVectors(t)
	body := []byte(vs.Valid[0].Body)
	c := Claims{APIKey: vs.APIKey}
	c.IssuedAt = jwt.NewNumericDate(vs.issued())
	tok, err := Sign(vs.Secret, c, body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vs.verifier(vs.issued()).Verify(tok, body); err != nil {
		t.Fatal(err)
	}
}

func TestCheckPutsTheBodyBack(t *testing.T) {
	vs := loadVectors(t)
	r := vs.Valid[0].request()
	if err := vs.verifier(vs.issued()).Check(r); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	if diff := cmp.Diff(vs.Valid[0].Body, string(b)); diff != "" {
		t.Errorf("body after Check (-want +got):\n%s", diff)
	}
}

func TestInsecureSkipsTheCheck(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "http://localhost/vonage/answer?to=1", nil)
	if err := (Verifier{Insecure: true}).Check(r); err != nil {
		t.Fatalf("Insecure: %v", err)
	}
	if err := (Verifier{SignatureSecret: "s"}).Check(r); !errors.Is(err, ErrNoToken) {
		t.Fatalf("without Insecure: %v, want ErrNoToken", err)
	}
}

func TestHandler(t *testing.T) {
	vs := loadVectors(t)
	v := vs.Valid[0]
	reached := false
	h := vs.verifier(vs.issued()).Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = true
		io.Copy(w, r.Body)
	}))
	for _, tt := range []struct {
		name string
		edit func(*http.Request)
		code int
	}{
		{"signed", func(*http.Request) {}, http.StatusOK},
		{"tampered", func(r *http.Request) { setBody(r, v.Body+" ") }, http.StatusForbidden},
		{"unsigned", func(r *http.Request) { r.Header.Del("Authorization") }, http.StatusForbidden},
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

// FuzzAuthorization feeds arbitrary Authorization headers and bodies:
// Check never panics and accepts only the vector tokens with their own
// payloads.
func FuzzAuthorization(f *testing.F) {
	vs := loadVectors(f)
	for _, v := range vs.Valid {
		f.Add("Bearer "+v.Token, v.Body)
	}
	for _, bad := range vs.Invalid {
		f.Add("Bearer "+bad.Token, vs.Valid[0].Body)
	}
	f.Add("Bearer a.b.c", "")
	f.Add("bearer", "")
	f.Add("Bearer eyJhbGciOiJIUzI1NiJ9.e30.", "{}")
	f.Fuzz(func(t *testing.T, header, body string) {
		r := httptest.NewRequest(http.MethodPost, "https://bot.example.com/vonage/answer", strings.NewReader(body))
		r.Header.Set("Authorization", header)
		if vs.verifier(vs.issued()).Check(r) != nil {
			return
		}
		for _, v := range vs.Valid {
			if v.Method == http.MethodPost && v.Body == body && strings.Contains(header, v.Token[:len(v.Token)-1]) {
				return
			}
		}
		t.Fatalf("accepted Authorization %q for body %q", header, body)
	})
}

func setBody(r *http.Request, body string) {
	r.Body = io.NopCloser(strings.NewReader(body))
	r.ContentLength = int64(len(body))
}

// flipClaim changes one character of the token's claims part.
func flipClaim(tok string) string {
	parts := strings.Split(tok, ".")
	c := []byte(parts[1])
	if c[5] == 'A' {
		c[5] = 'B'
	} else {
		c[5] = 'A'
	}
	parts[1] = string(c)
	return strings.Join(parts, ".")
}
