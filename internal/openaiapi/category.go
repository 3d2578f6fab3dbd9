package openaiapi

import (
	"net/http"

	"github.com/framewire/framewire/frames"
)

// Retryable reports whether an HTTP status is worth a retry: 429 and 5xx.
func Retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// Category classifies an error status for the pipeline: 429 and 5xx are
// transient; 401 and 403 (bad or missing credentials) are permanent when
// authPermanent is set; anything else is unknown.
func Category(status int, authPermanent bool) frames.ErrorCategory {
	switch {
	case Retryable(status):
		return frames.ErrorTransient
	case authPermanent && (status == http.StatusUnauthorized || status == http.StatusForbidden):
		return frames.ErrorPermanent
	}
	return frames.ErrorUnknown
}
