package openaiapi

import (
	"bytes"
	"context"
	"net/http"
)

// Post describes one JSON or form POST to an OpenAI-compatible endpoint.
type Post struct {
	// URL is the full endpoint URL.
	URL string
	// Body is sent as is; it is reread on each retry.
	Body []byte
	// ContentType is the body's media type.
	ContentType string
	// Accept, when set, is sent as the Accept header.
	Accept string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// Header holds extra headers from the caller's options.
	Header http.Header
	// AppendHeader adds Header after the fixed headers (keeping both values
	// of a name set twice) instead of copying it first and letting the
	// fixed headers win.
	AppendHeader bool
}

// NewRequest builds the HTTP request for p, bound to ctx.
func (p Post) NewRequest(ctx context.Context) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(p.Body))
	if err != nil {
		return nil, err
	}
	if !p.AppendHeader {
		for k, vs := range p.Header {
			req.Header[k] = append([]string(nil), vs...)
		}
	}
	req.Header.Set("Content-Type", p.ContentType)
	if p.Accept != "" {
		req.Header.Set("Accept", p.Accept)
	}
	if p.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.APIKey)
	}
	if p.AppendHeader {
		for k, vs := range p.Header {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
	}
	return req, nil
}
