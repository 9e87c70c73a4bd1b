package servicedesk

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/zcustody/suite/platform/canonical"
)

// PendingView is the request object a user signs to act on r: the maker confirms it as is,
// an approver sets `type` to Approve or Reject (and `rejectReason`). It binds the signature to
// this request, its payload, the policy version and rule that decide it, and the version that
// put it in its current status (ViewVersion),
// so a signature cannot be replayed on another request or in another status, while the
// approvers of one quorum all sign the same object, whatever order their approvals land in.
func PendingView(r Request) (map[string]any, error) {
	var payload map[string]any
	if err := json.Unmarshal([]byte(r.Payload), &payload); err != nil {
		return nil, fmt.Errorf("payload of %s: %w", r.ID, err)
	}
	typ := TypeConfirm
	if r.Status == StatusPendingAuthorisation {
		typ = TypeApprove
	}
	view := map[string]any{
		"requestId":     r.ID,
		"serviceId":     r.ServiceID,
		"requestType":   r.RequestType,
		"companyId":     r.CompanyID,
		"endToEndId":    r.EndToEndID,
		"payload":       payload,
		"entityId":      r.EntityIDs,
		"status":        r.Status,
		"createdBy":     r.CreatedBy,
		"versionNumber": r.ViewVersion(),
		"type":          typ,
	}
	if r.Rule != nil { // what the signer approves under (requests made before policies have none)
		view["policyVersion"] = r.PolicyVersion
		view["rule"] = r.Rule.Name
	}
	return view, nil
}

// ViewVersion is the number of the version that moved r into its current status: its last
// version, but that approvals short of the quorum keep a request pending authorisation at
// the version that entered it (the maker's confirmation).
func (r Request) ViewVersion() int {
	n := len(r.Versions)
	for n > 1 && r.Versions[n-1].Action == ActionApproved && r.Versions[n-1].Status == StatusPendingAuthorisation {
		n--
	}
	return n
}

// Decision is what a signed request object asks for.
type Decision struct {
	Type         string
	RejectReason string
}

// MatchPending checks that the signed object (any JSON) is r's pending view apart from the
// decision fields, and returns the decision.
func MatchPending(r Request, signed []byte) (Decision, bool, error) {
	var got map[string]any
	if err := json.Unmarshal(signed, &got); err != nil {
		return Decision{}, false, fmt.Errorf("request object: %w", err)
	}
	d := Decision{}
	d.Type, _ = got["type"].(string)
	d.RejectReason, _ = got["rejectReason"].(string)
	want, err := PendingView(r)
	if err != nil {
		return d, false, err
	}
	got = maps.Clone(got)
	for _, k := range []string{"type", "rejectReason"} {
		delete(got, k)
		delete(want, k)
	}
	a, err := canonical.Marshal(got)
	if err != nil {
		return d, false, err
	}
	b, err := canonical.Marshal(want)
	if err != nil {
		return d, false, err
	}
	return d, string(a) == string(b), nil
}
