package servicedesk

import (
	"slices"
	"time"

	"github.com/zcustody/suite/services/servicedesk/policy"
)

// Service-request statuses (DESIGN.md §7), upper case with spaces as the reference API shows.
const (
	StatusPendingConfirmation  = "PENDING CONFIRMATION"
	StatusPendingAuthorisation = "PENDING AUTHORISATION"
	StatusAuthorised           = "AUTHORISED"
	StatusCompleted            = "COMPLETED"
	StatusFailed               = "FAILED"
	StatusRejected             = "REJECTED"
	StatusCancelled            = "CANCELLED"
	StatusExpired              = "EXPIRED"
)

// Statuses lists every status (the search filter's allowed values).
var Statuses = []string{StatusPendingConfirmation, StatusPendingAuthorisation, StatusAuthorised,
	StatusCompleted, StatusFailed, StatusRejected, StatusCancelled, StatusExpired}

// transitions is the request's state machine (DESIGN.md §7): from each status, where it may
// go. The maker's confirmation leads to PENDING AUTHORISATION, or straight to AUTHORISED for
// a service its policy rule lets through on the maker's word; an approver approves (an
// approval short of the rule's quorum keeps it pending, the last one authorises it) or
// rejects; the maker may cancel and the sweeper expires while a person is awaited; the
// owner's execution ends it.
var transitions = map[string][]string{
	StatusPendingConfirmation:  {StatusPendingAuthorisation, StatusAuthorised, StatusCancelled, StatusExpired},
	StatusPendingAuthorisation: {StatusPendingAuthorisation, StatusAuthorised, StatusRejected, StatusCancelled, StatusExpired},
	StatusAuthorised:           {StatusCompleted, StatusFailed},
}

// Allowed reports whether a request may move from one status to the other.
func Allowed(from, to string) bool { return slices.Contains(transitions[from], to) }

// Pending reports whether a request in status s still waits for a person.
func Pending(s string) bool {
	return s == StatusPendingConfirmation || s == StatusPendingAuthorisation
}

// Version actions: the documented integers of an audit-trail version's versionAction.
const (
	ActionCreated   int32 = 1
	ActionConfirmed int32 = 2
	ActionApproved  int32 = 3
	ActionRejected  int32 = 4
	ActionCancelled int32 = 5
	ActionExpired   int32 = 6
	ActionCompleted int32 = 7
	ActionFailed    int32 = 8
)

// Roles of the audit trail.
const (
	RoleMaker   = "MAKER"
	RoleChecker = "CHECKER"
	RoleSystem  = "SYSTEM"
)

// Step names of the processing summary, per action.
var stepNames = map[int32]string{
	ActionCreated: "Created", ActionConfirmed: "Confirmed", ActionApproved: "Approved",
	ActionRejected: "Rejected", ActionCancelled: "Cancelled", ActionExpired: "Expired",
	ActionCompleted: "Completed", ActionFailed: "Failed",
}

// StepName returns the processing-summary status of an action.
func StepName(action int32) string { return stepNames[action] }

// Request is a service request.
type Request struct {
	ID            string
	CompanyID     string
	CompanyName   string
	ServiceID     string
	Product       string
	ProductID     string // hexadecimal, e.g. 0x0013
	RequestType   string
	Owner         string
	NeedsChecker  bool
	EndToEndID    string
	Payload       string // canonical JSON object
	BodyHash      string // hex SHA-256 of the canonical {serviceId, payload}
	EntityIDs     []string
	PluginDetails string // JSON array of objects
	Status        string
	CreatedBy     string
	UpdatedBy     string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	ExpiresAt     time.Time
	AuthorisedAt  time.Time
	FailureReason string
	Versions      []Version
	// PolicyVersion is the version of the company's policy that decided the request when it
	// was created (0: the default policy), and Rule the rule of it that matched, kept as it
	// was: a later policy never applies to a request already made. Rule is nil on requests
	// made before policies, which the default's rule for their service decides (DecidingRule).
	PolicyVersion int64
	Rule          *policy.Rule
	// USD is the request's value in US dollars when it was created, a canonical decimal, as
	// its owner reported it from trading's prices and the policy matched it; "" when it has
	// none (no single amount, or no recent price). It never changes.
	USD string
}

// Version is one entry of a request's append-only audit trail.
type Version struct {
	Number      int32
	Action      int32
	Role        string
	Actor       string
	CompanyName string
	Status      string // request status after the action
	At          time.Time
	Reason      string // a rejection's or failure's reason
	Signature   string // the acting user's approval signature (confirm, approve, reject)
	// Roles are an approver's roles when they approved: which of the rule's groups they count
	// for (Request.Tally).
	Roles    []string
	PrevHash string
	Hash     string
}

// Transition is one state change: the statuses it may start from, the status it sets, and
// the version it appends.
type Transition struct {
	From      []string
	To        string
	Action    int32
	Role      string
	Actor     string
	Reason    string
	Signature string // the approval signature the action was taken with
	Updated   string // updatedBy
	Roles     []string
}

// Allowed reports whether a request in status s may take transition t: s is one of t's
// sources and the state machine allows the move.
func (t Transition) Allowed(s string) bool { return slices.Contains(t.From, s) && Allowed(s, t.To) }

// move is the transition of r from its current status to status to.
func move(r Request, to string, action int32, role, actor string) Transition {
	return Transition{From: []string{r.Status}, To: to, Action: action, Role: role, Actor: actor}
}

// Maker is who creates a request.
type Maker struct {
	Email, CompanyID, CompanyName string
}

// NewRequest returns a request awaiting its maker's confirmation, with its first audit version.
func NewRequest(id string, m Maker, svc Service, endToEndID, payload, bodyHash string, now time.Time) Request {
	v := Seal(id, bodyHash, Version{Number: 1, Action: ActionCreated, Role: RoleMaker, Actor: m.Email, CompanyName: m.CompanyName,
		Status: StatusPendingConfirmation, At: now}, nil)
	return Request{ID: id, CompanyID: m.CompanyID, CompanyName: m.CompanyName, ServiceID: svc.ID, Product: svc.Product,
		ProductID: ProductHex(svc.ProductID), RequestType: svc.RequestType, Owner: svc.Owner, NeedsChecker: svc.NeedsChecker,
		EndToEndID: endToEndID, Payload: payload, BodyHash: bodyHash, Status: StatusPendingConfirmation,
		CreatedBy: m.Email, UpdatedBy: m.Email, CreatedAt: v.At, UpdatedAt: v.At, ExpiresAt: v.At.Add(svc.Expiry),
		Versions: []Version{v}}
}
