package funds

import (
	"context"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/interchange/withdrawal"
)

// Custody checks and credits custody wallets over custody's ledger API, under interchange's
// system principal: the custody side of a withdrawal from a trading wallet to a custody
// wallet.
type Custody struct {
	client custodyv1.CustodyLedgerServiceClient
	signer *principal.Signer
}

// NewCustody returns the custody side over custody's ledger client.
func NewCustody(client custodyv1.CustodyLedgerServiceClient, signer *principal.Signer) Custody {
	return Custody{client: client, signer: signer}
}

func (c Custody) outgoing(ctx context.Context) (context.Context, error) {
	return c.signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: System})
}

// CheckTarget asks custody whether walletID, a custody wallet of company, can take amount
// of currency. Custody's refusal is the caller's, with custody's code and message, naming
// field; anything else means custody cannot answer now: 503, which the service desk retries
// at execution.
func (c Custody) CheckTarget(ctx context.Context, field, company, walletID, currency, amount string) error {
	ctx, err := c.outgoing(ctx)
	if err != nil {
		return err
	}
	_, err = c.client.CheckTransferTarget(ctx, &custodyv1.CheckTransferTargetRequest{CompanyId: company, WalletId: walletID, Currency: currency, Amount: amount})
	if err == nil {
		return nil
	}
	st := status.Convert(err)
	switch st.Code() {
	case codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition:
		return &apperr.Error{Status: st.Code(), Code: reason(st), Field: field, Message: field + ": " + st.Message()}
	case codes.Canceled:
		return context.Canceled
	}
	return &apperr.Error{Status: codes.Unavailable, Code: apperr.CodeUnavailable, Field: field, Message: "custody cannot check " + field + " now; retry later"}
}

// reason is the ER code a status of ours carries (ER-108 when it carries none).
func reason(st *status.Status) string {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == apperr.Domain && info.GetReason() != "" {
			return info.GetReason()
		}
	}
	return apperr.CodeFormat
}

// Credit credits an accepted withdrawal's custody wallet out of custody's in-transit
// account, once per transfer id (a repeat is answered as a replay).
func (c Custody) Credit(ctx context.Context, w withdrawal.Withdrawal) error {
	ctx, err := c.outgoing(ctx)
	if err != nil {
		return err
	}
	resp, err := c.client.CreditTransfer(ctx, &custodyv1.CreditTransferRequest{TransferId: w.TransferID, CompanyId: w.CompanyID,
		WalletId: w.DestinationWalletID, Currency: w.Currency, Amount: w.Amount})
	if err != nil {
		return fmt.Errorf("credit %s: %w", withdrawal.CreditID(w), err)
	}
	switch resp.GetOutcome() {
	case custodyv1.EntryOutcome_ENTRY_OUTCOME_APPLIED, custodyv1.EntryOutcome_ENTRY_OUTCOME_REPLAYED:
		return nil
	}
	return fmt.Errorf("%w: credit %s answered %s", errLedger, withdrawal.CreditID(w), resp.GetOutcome())
}
