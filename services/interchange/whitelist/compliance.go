package whitelist

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	"github.com/zcustody/suite/services/apperr"
	"github.com/zcustody/suite/services/principal"
)

// System is interchange's system name on its calls to other services.
const System = "interchange"

// complianceTimeout bounds one call to compliance.
const complianceTimeout = 10 * time.Second

// directory asks compliance about the VASPs and beneficiaries a payload names, as
// interchange's system principal.
type directory struct {
	client compliancev1.DirectoryServiceClient
	signer *principal.Signer
	logger *slog.Logger
}

// vasp returns the name of the company's VASP vaspID if it is active for the company:
// unknown (or restricted to other companies) is 404 ER-102, deactivated 409 ER-113.
func (d *directory) vasp(ctx context.Context, companyID, vaspID string) (string, error) {
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

// beneficiary returns the name of the company's beneficiary if it is active: unknown (or
// another company's) is 404 ER-102, deactivated 409 ER-113.
func (d *directory) beneficiary(ctx context.Context, companyID, beneficiaryID string) (string, error) {
	ctx, cancel, err := d.outgoing(ctx)
	if err != nil {
		return "", err
	}
	defer cancel()
	resp, err := d.client.CheckBeneficiary(ctx, &compliancev1.CheckBeneficiaryRequest{CompanyId: companyID, BeneficiaryId: beneficiaryID})
	if err != nil {
		return "", d.refusal(err, "beneficiaryId", beneficiaryID)
	}
	if !resp.GetActive() {
		return "", deactivated("beneficiaryId", "beneficiary "+beneficiaryID)
	}
	return resp.GetBeneficiaryName(), nil
}

func (d *directory) outgoing(ctx context.Context) (context.Context, context.CancelFunc, error) {
	ctx, cancel := context.WithTimeout(ctx, complianceTimeout)
	out, err := d.signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: System})
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return out, cancel, nil
}

// refusal maps compliance's error: NotFound is the caller's (ER-102 on field); the caller's
// own deadline or cancellation stays what it is; anything else is compliance's problem and
// answers 503, which the service desk retries at execution.
func (d *directory) refusal(err error, field, id string) error {
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
