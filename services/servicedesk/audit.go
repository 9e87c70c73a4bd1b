package servicedesk

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// hashInput is what a version's hash covers, besides the previous hash.
type hashInput struct {
	RequestID   string `json:"requestId"`
	BodyHash    string `json:"bodyHash"`
	Reason      string `json:"reason"`
	Signature   string `json:"signature"`
	Number      int32  `json:"number"`
	Action      int32  `json:"action"`
	Role        string `json:"role"`
	Actor       string `json:"actor"`
	CompanyName string `json:"companyName"`
	Status      string `json:"status"`
	At          string `json:"at"`
	PrevHash    string `json:"prevHash"`
	// Roles is hashed only when set, so versions sealed before approvers' roles were kept
	// still verify.
	Roles []string `json:"roles,omitempty"`
}

// Seal fills v.PrevHash and v.Hash so v chains onto prev (nil for the first version). The
// hash binds the request's id and body (service and payload), the version's content, its
// reason and approval signature, and the previous hash. The time is cut to milliseconds, the
// precision the database keeps.
func Seal(requestID, bodyHash string, v Version, prev *Version) Version {
	v.At = v.At.UTC().Truncate(time.Millisecond)
	v.PrevHash = ""
	if prev != nil {
		v.PrevHash = prev.Hash
	}
	v.Hash = hashOf(requestID, bodyHash, v)
	return v
}

func hashOf(requestID, bodyHash string, v Version) string {
	data, _ := json.Marshal(hashInput{RequestID: requestID, BodyHash: bodyHash, Reason: v.Reason, Signature: v.Signature, Number: v.Number, Action: v.Action, Role: v.Role,
		Actor: v.Actor, CompanyName: v.CompanyName, Status: v.Status, At: v.At.UTC().Format(time.RFC3339Nano), PrevHash: v.PrevHash, Roles: v.Roles})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ChainError says where an audit trail stops verifying.
type ChainError struct {
	Version int32
	Reason  string
}

func (e *ChainError) Error() string { return fmt.Sprintf("version %d: %s", e.Version, e.Reason) }

// VerifyChain checks that versions are numbered 1..n without gaps, each linked to the previous
// one and hashed over its own content and the request's body (bodyHash); status is the
// request's current status, which must be the last version's.
func VerifyChain(requestID, bodyHash, status string, versions []Version) error {
	if len(versions) == 0 {
		return &ChainError{Version: 1, Reason: "no versions"}
	}
	prev := ""
	for i, v := range versions {
		want := int32(i + 1)
		switch {
		case v.Number != want:
			return &ChainError{Version: want, Reason: fmt.Sprintf("version %d is missing (found %d)", want, v.Number)}
		case v.PrevHash != prev:
			return &ChainError{Version: want, Reason: "does not link to the previous version"}
		case hashOf(requestID, bodyHash, v) != v.Hash:
			return &ChainError{Version: want, Reason: "content does not match its hash"}
		}
		prev = v.Hash
	}
	if last := versions[len(versions)-1]; last.Status != status {
		return &ChainError{Version: last.Number, Reason: "the request's status differs from its last version"}
	}
	return nil
}
