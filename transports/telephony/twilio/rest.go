package twilio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/framewire/framewire/transports/telephony"
)

// DefaultRESTBaseURL is Twilio's REST API.
const DefaultRESTBaseURL = "https://api.twilio.com"

// REST is the part of Twilio's REST API a call needs: ending it. The
// shape is Twilio's "Update a Call resource": POST
// /2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}.json with the form
// Status=completed, HTTP basic auth with the account SID and auth token.
type REST struct {
	// BaseURL is the API's root. Default: DefaultRESTBaseURL.
	BaseURL string
	// AccountSID and AuthToken are the credentials. Default: the
	// environment's TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN.
	AccountSID, AuthToken string
	// HTTPClient sends the requests. Default: a client of its own.
	HTTPClient *http.Client
	// Timeout bounds one request. Default: 10s.
	Timeout time.Duration
}

// ErrNoCredentials: neither the REST's fields nor the environment give an
// account SID and auth token.
var ErrNoCredentials = errors.New("twilio: no REST credentials (set TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN)")

// HangUp ends the call: Twilio stops the stream and hangs up.
func (r *REST) HangUp(ctx context.Context, callSID string) error {
	sid, token := r.AccountSID, r.AuthToken
	if sid == "" {
		sid = os.Getenv("TWILIO_ACCOUNT_SID")
	}
	if token == "" {
		token = os.Getenv("TWILIO_AUTH_TOKEN")
	}
	if sid == "" || token == "" {
		return ErrNoCredentials
	}
	base := r.BaseURL
	if base == "" {
		base = DefaultRESTBaseURL
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := strings.TrimSuffix(base, "/") + "/2010-04-01/Accounts/" + url.PathEscape(sid) + "/Calls/" + url.PathEscape(callSID) + ".json"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(url.Values{"Status": {"completed"}}.Encode()))
	if err != nil {
		return fmt.Errorf("twilio: hanging up %s: %w", callSID, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(sid, token)
	c := r.HTTPClient
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("twilio: hanging up %s: %w", callSID, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("twilio: hanging up %s: %s", callSID, resp.Status)
	}
	return nil
}

// HangUp implements telephony.HangUpper: the Provider's REST client, if
// any, ends the call.
func (p Provider) HangUp(ctx context.Context, call telephony.Call) error {
	if p.REST == nil {
		return nil
	}
	return p.REST.HangUp(ctx, call.CallID)
}
