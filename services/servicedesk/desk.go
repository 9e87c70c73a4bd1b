package servicedesk

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/zcustody/suite/services/internal/ids"
	"github.com/zcustody/suite/services/servicedesk/policy"
)

// Store is what the desk needs from the service desk's store. Requests change only through
// Apply, one conditional update that loses (apperr.ErrConflict) to a racing change.
type Store interface {
	FindCatalog(ctx context.Context, f CatalogFilter) ([]Service, error)
	Company(ctx context.Context, id string) (Company, error)
	User(ctx context.Context, companyID, email string) (User, error)
	InsertRequest(ctx context.Context, r Request) error
	Request(ctx context.Context, companyID, id string) (Request, error)
	RequestByEndToEnd(ctx context.Context, companyID, endToEndID string) (Request, error)
	RequestsByID(ctx context.Context, companyID string, ids []string) ([]Request, error)
	RequestByIDAnyCompany(ctx context.Context, id string) (Request, error)
	SearchRequests(ctx context.Context, f RequestFilter) ([]Request, int64, error)
	Apply(ctx context.Context, r Request, t Transition, at time.Time) (Request, error)
	RecordFailedAttempt(ctx context.Context, id string) (int32, error)
	// ActivePolicy returns the company's policy in force (its latest version), or
	// apperr.ErrNotFound when it adopted none.
	ActivePolicy(ctx context.Context, companyID string) (policy.Policy, error)
	// Policy returns one version of the company's policy, or apperr.ErrNotFound.
	Policy(ctx context.Context, companyID string, version int64) (policy.Policy, error)
	// PolicyVersions returns the company's adopted versions, newest first, at most limit.
	PolicyVersions(ctx context.Context, companyID string, limit int64) ([]policy.Policy, error)
	// InsertPolicy stores a new version; apperr.ErrExists when that version exists.
	InsertPolicy(ctx context.Context, p policy.Policy) error
	// CompanyUsers returns the company's users.
	CompanyUsers(ctx context.Context, companyID string) ([]User, error)
	// Due returns up to limit requests in one of statuses whose time field is before cutoff.
	Due(ctx context.Context, statuses []string, field string, cutoff time.Time, limit int64) ([]Request, error)
}

// Owners carries requests to the services that own them (their plugin API), as the service
// desk. venues are the venues the request's company operates, for a venue's service.
type Owners interface {
	// Validate asks r.Owner to check a new request and reserve its entity ids. Its refusal
	// is the caller's answer, as the owner gave it.
	Validate(ctx context.Context, r Request, venues []string) (Validated, error)
	// Execute asks r.Owner to carry out an authorised request (idempotent by request id). A
	// failure is an *OwnerError saying whether it is final.
	Execute(ctx context.Context, r Request, venues []string) error
}

// Validated is an owner's answer to Validate.
type Validated struct {
	EntityIDs []string
	// Details is the owner's description of the entities, a JSON array of objects.
	Details string
	// Subject is what the owner reports the request to be for the company's policy: the
	// wallet and currency, the USD value (nil without a price) and the destination kind, each
	// left zero where it knows nothing more than the payload tells (its Operation is unset).
	Subject policy.Subject
}

// Actor is the API user who acts on a request, as the caller's verified principal names them.
type Actor struct {
	Email        string
	CompanyID    string
	CompanyName  string
	Roles        []string
	Entitlements []string
	// Venues are the venues the actor's company operates (none for a client company).
	Venues []string
}

// HasRole reports whether the actor holds role (RoleMaker, RoleChecker).
func (a Actor) HasRole(role string) bool { return slices.Contains(a.Roles, role) }

// Entitled reports whether the actor may use catalog service id.
func (a Actor) Entitled(id string) bool { return slices.Contains(a.Entitlements, id) }

// Config is what a Desk is built from; zero fields take their defaults.
type Config struct {
	Store  Store
	Owners Owners
	Logger *slog.Logger // discards when nil
	// Now is the clock (time.Now when nil); NewID makes request ids (ids.RequestID when nil).
	Now   func() time.Time
	NewID func() string
	// Grace is how long an authorised request is left to its inline execution before the
	// sweeper resumes it.
	Grace time.Duration
}

// Desk carries service requests through their lifecycle.
type Desk struct {
	store  Store
	owners Owners
	logger *slog.Logger
	now    func() time.Time
	newID  func() string
	grace  time.Duration
}

// New returns the desk of cfg.
func New(cfg Config) *Desk {
	d := &Desk{store: cfg.Store, logger: cfg.Logger, now: cfg.Now, newID: cfg.NewID, grace: cfg.Grace}
	d.owners = proposals{Owners: cfg.Owners, desk: d} // the service desk owns policy changes
	if d.logger == nil {
		d.logger = slog.New(slog.DiscardHandler)
	}
	if d.now == nil {
		d.now = time.Now
	}
	if d.newID == nil {
		d.newID = ids.RequestID
	}
	return d
}
