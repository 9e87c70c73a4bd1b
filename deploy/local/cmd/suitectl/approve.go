package main

import (
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/signing"
)

// approve confirms, approves or rejects a pending request: args are REQUEST-ID [TYPE [REASON]].
func approve(c *signing.Client, keyFile string, args []string) error {
	requestID := args[0]
	body, _ := json.Marshal(map[string]string{"requestId": requestID})
	status, resp, err := c.Do(http.MethodPost, "/v3/api/servicedesk/pending", body)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		show(status, resp)
		return fmt.Errorf("pending: HTTP %d", status)
	}
	var pending struct {
		Request map[string]any `json:"request"`
	}
	if err := json.Unmarshal(resp, &pending); err != nil {
		return fmt.Errorf("pending: %w", err)
	}
	if len(args) > 1 {
		pending.Request["type"] = args[1]
	}
	if len(args) > 2 {
		pending.Request["rejectReason"] = args[2]
	}
	signed, err := signApproval(keyFile, pending.Request)
	if err != nil {
		return err
	}
	body, _ = json.Marshal(map[string]any{"requestId": requestID, "request": pending.Request, "signature": signed})
	status, resp, err = c.Do(http.MethodPost, "/v3/api/servicedesk/approve", body)
	if err != nil {
		return err
	}
	show(status, resp)
	return nil
}

func signApproval(keyFile string, request map[string]any) (string, error) {
	pemKey, err := demo.Key(keyFile)
	if err != nil {
		return "", err
	}
	key, err := signing.ParsePrivateKey(pemKey)
	if err != nil {
		return "", err
	}
	ecKey, ok := key.(*ecdsa.PrivateKey)
	if !ok {
		return "", fmt.Errorf("%s is not an EC approval key", keyFile)
	}
	obj, _ := json.Marshal(request)
	return signing.SignApproval(ecKey, obj)
}
