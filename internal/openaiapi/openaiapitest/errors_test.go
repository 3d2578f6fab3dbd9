package openaiapitest

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/framewire/framewire/frames"
)

// statusError is what a client under test returns: a text and a category.
type statusError struct {
	status int
	body   string
}

func (e statusError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.body) }

func (e statusError) Category() frames.ErrorCategory {
	if e.status == http.StatusTooManyRequests {
		return frames.ErrorTransient
	}
	return frames.ErrorUnknown
}

// tryTwice is a client that retries a refused request once.
func tryTwice(baseURL string) error {
	var err error
	for range 2 {
		resp, e := http.Post(baseURL+"/v1/x", "application/json", nil)
		if e != nil {
			return e
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.Header.Get("Retry-After") != "0" {
			return fmt.Errorf("Retry-After %q, want 0", resp.Header.Get("Retry-After"))
		}
		err = statusError{resp.StatusCode, string(b)}
	}
	return err
}

func TestRunErrorCasesChecksTextCategoryAndRequests(t *testing.T) {
	RunErrorCases(t, []ErrorCase{
		{Name: "rate limited", Status: 429, ContentType: "application/json", Fixture: "error_429.json", Requests: 2, Want: "HTTP 429: {\"error\":{\"message\":\"Rate limit reached\"}}", Category: frames.ErrorTransient},
	}, tryTwice)
}

func TestWantErrorFailsOnTheWrongCategory(t *testing.T) {
	rec := &errorRecorder{TB: t}
	WantError(rec, statusError{500, "oops"}, "oops", frames.ErrorTransient)
	if len(rec.errors) != 1 {
		t.Fatalf("failures %q, want one about the category", rec.errors)
	}
	WantError(rec, statusError{429, "slow down"}, "slow down", frames.ErrorTransient)
	if len(rec.errors) != 1 {
		t.Errorf("failures %q, want none for a matching error", rec.errors[1:])
	}
}

// errorRecorder keeps Errorf failures instead of reporting them.
type errorRecorder struct {
	testing.TB
	errors []string
}

func (r *errorRecorder) Helper() {}

func (r *errorRecorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
