// Package directory asks compliance about the VASPs and beneficiaries a request names, as the
// calling service's own system principal: compliance's refusals become the caller's
// field-precise errors (unknown or another company's: 404 ER-102; deactivated: 409 ER-113),
// and a compliance that cannot answer is 503, which the service desk retries at execution.
package directory

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
)

// complianceTimeout bounds one call to compliance.
const complianceTimeout = 10 * time.Second

// Client asks compliance, signing as its service's system principal.
type Client struct {
	client compliancev1.DirectoryServiceClient
	signer *principal.Signer
	system string
	logger *slog.Logger
}

// New returns the client: system is the calling service's system name (its signer's).
func New(client compliancev1.DirectoryServiceClient, signer *principal.Signer, system string, logger *slog.Logger) *Client {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Client{client: client, signer: signer, system: system, logger: logger}
}

// Vasp returns the name of the company's VASP vaspID if it is active for the company:
// unknown (or restricted to other companies) is 404 ER-102, deactivated 409 ER-113, each on
// field vaspId.
func (d *Client) Vasp(ctx context.Context, companyID, vaspID string) (string, error) {
	ctx, cancel, err := d.outgoing(ctx)
	if err != nil {
		return "", err
	}
	defer cancel()
	resp, err := d.client.CheckVasp(ctx, &compliancev1.CheckVaspRequest{CompanyId: companyID, VaspId: vaspID})
	if err != nil {
		return "", d.refusal(err, "vaspId", vaspID)
	}
	if !resp.GetActive() {
		return "", deactivated("vaspId", "VASP "+vaspID)
	}
	return resp.GetVaspName(), nil
}

// Beneficiary returns the name of the company's beneficiary if it is active: unknown (or
// another company's) is 404 ER-102, deactivated 409 ER-113, each on field.
func (d *Client) Beneficiary(ctx context.Context, field, companyID, beneficiaryID string) (string, error) {
	ctx, cancel, err := d.outgoing(ctx)
	if err != nil {
		return "", err
	}
	defer cancel()
	resp, err := d.client.CheckBeneficiary(ctx, &compliancev1.CheckBeneficiaryRequest{CompanyId: companyID, BeneficiaryId: beneficiaryID})
	if err != nil {
		return "", d.refusal(err, field, beneficiaryID)
	}
	if !resp.GetActive() {
		return "", deactivated(field, "beneficiary "+beneficiaryID)
	}
	return resp.GetBeneficiaryName(), nil
}

func (d *Client) outgoing(ctx context.Context) (context.Context, context.CancelFunc, error) {
	ctx, cancel := context.WithTimeout(ctx, complianceTimeout)
	out, err := d.signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: d.system})
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return out, cancel, nil
}

// refusal maps compliance's error: NotFound is the caller's (ER-102 on field); the caller's
// own deadline or cancellation stays what it is; anything else is compliance's problem and
// answers 503, which the service desk retries at execution.
func (d *Client) refusal(err error, field, id string) error {
	code := status.Code(err)
	switch {
	case code == codes.NotFound:
		return apperr.NotFound(field, id)
	case errors.Is(err, context.Canceled) || code == codes.Canceled:
		return context.Canceled
	}
	d.logger.Warn("compliance check failed", "field", field, "code", code.String())
	return &apperr.Error{Status: codes.Unavailable, Code: apperr.CodeUnavailable, Field: field,
		Message: "compliance cannot check " + field + " now; retry later"}
}

func deactivated(field, what string) error {
	return &apperr.Error{Status: codes.FailedPrecondition, Code: apperr.CodeDeactivated, Field: field, Message: what + " is deactivated"}
}
