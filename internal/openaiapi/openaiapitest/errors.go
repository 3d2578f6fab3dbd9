package openaiapitest

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/framewire/framewire/frames"
)

// Refusal is an error answer that allows an immediate retry (Retry-After:
// 0), so a table of error answers runs the client's retries without waiting.
func Refusal(status int, contentType string, body []byte) Answer {
	return Answer{Status: status, ContentType: contentType, Header: http.Header{"Retry-After": {"0"}}, Body: body}
}

// WantError fails t unless err's text contains want and err carries
// category, through the Category method the clients' error types have.
func WantError(t testing.TB, err error, want string, category frames.ErrorCategory) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v\nwant it to contain %q", err, want)
	}
	var c interface{ Category() frames.ErrorCategory }
	if !errors.As(err, &c) || c.Category() != category {
		t.Errorf("category of %v: %v, want %v", err, c, category)
	}
}

// ErrorCase is one error answer a client must turn into a clear error.
type ErrorCase struct {
	// Name names the subtest.
	Name string
	// Status, ContentType and Fixture (a file in testdata/) make the
	// answer, sent with Retry-After: 0 to every request.
	Status      int
	ContentType string
	Fixture     string
	// Requests is how many requests the client sends in all, retries
	// included.
	Requests int
	// Want is a part of the error's text and Category its category.
	Want     string
	Category frames.ErrorCategory
}

// RunErrorCases runs each case as a subtest against its own Server. call
// makes one request to baseURL with the client under test and returns its
// error.
func RunErrorCases(t *testing.T, cases []ErrorCase, call func(baseURL string) error) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			srv := New(t, Refusal(tc.Status, tc.ContentType, Fixture(t, tc.Fixture)))
			WantError(t, call(srv.URL), tc.Want, tc.Category)
			if n := srv.Requests(); n != tc.Requests {
				t.Errorf("%d requests, want %d", n, tc.Requests)
			}
		})
	}
}
