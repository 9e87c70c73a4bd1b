package signing

import (
	"bytes"
	"crypto"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// Client signs and sends requests as one company (and optionally one API user).
type Client struct {
	BaseURL   string // e.g. http://127.0.0.1:8080
	Company   string
	Submitter string // e-mail; empty for company-level calls
	Key       crypto.PrivateKey
	HTTP      *http.Client
	Now       func() time.Time
}

// NewRequest builds a signed request for method and path (with query) with body.
func (c *Client) NewRequest(method, path string, body []byte) (*http.Request, error) {
	req, err := http.NewRequest(method, c.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	reqID := uuid.NewString()
	ts := strconv.FormatInt(now().UnixMilli(), 10)
	sig, err := Sign(c.Key, StringToSign(c.Company, reqID, ts, req.URL.String(), body))
	if err != nil {
		return nil, err
	}
	req.Header.Set(HeaderCompany, c.Company)
	req.Header.Set(HeaderRequestID, reqID)
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderSignature, sig)
	if c.Submitter != "" {
		req.Header.Set(HeaderSubmitter, c.Submitter)
	}
	return req, nil
}

// Do signs and sends a request and returns the status and body of the response.
func (c *Client) Do(method, path string, body []byte) (int, []byte, error) {
	req, err := c.NewRequest(method, path, body)
	if err != nil {
		return 0, nil, err
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("send request: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("read response: %w", err)
	}
	return resp.StatusCode, data, nil
}
