package webrtc

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"time"
)

// TURNCredentials hands every /start client its own short-lived TURN
// credentials in the TURN REST scheme (draft-uberti-behave-turn-rest), the
// one coturn checks with use-auth-secret and static-auth-secret=Secret:
// the username is "<expiry as Unix seconds>:<user>" and the credential is
// base64(HMAC-SHA1(Secret, username)). The TURN server needs no user
// database, and what a client learns from /start stops working at the
// expiry, unlike static credentials in Options.ICEServers, which /start
// never hands out.
//
// The credentials are for the browser; the server's own peer connections
// use Options.ICEServers (a server with a public address needs no relay).
type TURNCredentials struct {
	// URLs are the TURN server's, e.g. "turn:turn.example.com:3478",
	// "turns:turn.example.com:5349?transport=tcp". Required.
	URLs []string
	// Secret is the TURN server's shared secret (coturn's
	// static-auth-secret). Required.
	Secret []byte
	// TTL is how long credentials stay valid. The browser reuses them when
	// it restarts its peer connection, so it should outlast a session.
	// Default: 1h.
	TTL time.Duration
	// User names the client in the username, which the TURN server logs.
	// It must not contain ':'. Default: the /start session id.
	User func(r *http.Request, startID string) string
	// Anonymous lets a server without Options.Authorize hand credentials
	// to every /start: anyone who can reach the server may then relay
	// through the TURN server until the credentials expire. Default:
	// false, NewServer refuses TURN without Authorize.
	Anonymous bool
}

func (c *TURNCredentials) validate() error {
	switch {
	case c == nil:
		return nil
	case len(c.URLs) == 0:
		return errors.New("webrtc: Options.TURN has no URLs")
	case len(c.Secret) == 0:
		return errors.New("webrtc: Options.TURN has no Secret")
	}
	return nil
}

// issue returns the ICE server entry for one client, valid until now+TTL.
func (c *TURNCredentials) issue(r *http.Request, startID string, now time.Time) iceServer {
	ttl := c.TTL
	if ttl <= 0 {
		ttl = time.Hour
	}
	user := startID
	if c.User != nil {
		user = c.User(r, startID)
	}
	username, credential := turnRESTCredential(c.Secret, user, now.Add(ttl))
	return iceServer{URLs: c.URLs, Username: username, Credential: credential}
}

// turnRESTCredential returns the TURN REST username and credential of
// user, valid until expires.
func turnRESTCredential(secret []byte, user string, expires time.Time) (username, credential string) {
	username = strconv.FormatInt(expires.Unix(), 10) + ":" + user
	m := hmac.New(sha1.New, secret)
	m.Write([]byte(username))
	return username, base64.StdEncoding.EncodeToString(m.Sum(nil))
}
