package settlement

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/apperr"
	"github.com/zcustody/suite/services/canonical"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/ledger"
)

// Limits of a settlement instruction.
const (
	MaxIDLength        = 64
	DefaultMaxLegs     = 1000
	MaxAddresses       = 100
	MaxAddressLength   = 128
	MaxMemoLength      = 128
	MaxErrorsLength    = 1024
	MaxDestinationTag  = 2147483647
	CounterpartyWallet = "WALLET_ID"
)

var (
	venuePattern     = regexp.MustCompile(`^[A-Z0-9_-]+$`)
	requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

// Rules bound an instruction: legs per settlement, the gross amount per currency, and who
// may instruct payables.
type Rules struct {
	MaxLegs int
	// MaxGross bounds, per currency, the sum of the legs' sizes; a currency without a bound
	// is refused.
	MaxGross map[string]amount.Amount
	// Payables allows negative legs (the venue pays the wallet). A client's own instruction
	// holds receivables only: payables move the venue's money and come from the venue's side
	// (the settlement engine).
	Payables bool
}

// ParseInstruction validates endpoint 3's body field by field (each error names its field
// as a JSON path, e.g. settlements[1].amount) and returns the settlement it describes, for
// companyID, with its shares and body hash. Trading wallets are checked later
// (checkWallets), once the request is known not to repeat an earlier one.
func ParseInstruction(companyID string, req *interchangev1.CreateSettlementRequest, rules Rules) (Settlement, error) {
	h := req.GetHeader()
	if h == nil {
		return Settlement{}, apperr.Missing("header")
	}
	s := Settlement{CompanyID: companyID, VenueID: h.GetVenueId(), RequestID: h.GetSettlementRequestId(),
		HeaderStatus: h.GetStatus(), HeaderErrors: h.GetErrors(), RequestDateTime: h.GetRequestDateTime(),
		InstructionCount: h.GetInstructionCount()}
	if err := checkHeader(h); err != nil {
		return Settlement{}, err
	}
	var err error
	if s.Addresses, err = parseAddresses(h.GetReceivableAddresses()); err != nil {
		return Settlement{}, err
	}
	if s.Legs, err = parseLegs(req.GetSettlements(), rules.MaxLegs); err != nil {
		return Settlement{}, err
	}
	if err := rules.check(s.Legs); err != nil {
		return Settlement{}, err
	}
	if int(h.GetInstructionCount()) != len(s.Legs) {
		return Settlement{}, apperr.Invalid(apperr.CodeFormat, "header.instructionCount",
			"header.instructionCount is %d but the instruction holds %d settlements", h.GetInstructionCount(), len(s.Legs))
	}
	if s.Nets, err = parseNets(req.GetNetSettlements()); err != nil {
		return Settlement{}, err
	}
	if s.Shares, err = shares(companyID, s.VenueID, s.Legs, s.Nets); err != nil {
		return Settlement{}, err
	}
	if s.BodyHash, err = bodyHash(req); err != nil {
		return Settlement{}, err
	}
	return s, nil
}

func checkHeader(h *interchangev1.SettlementHeader) error {
	if err := checkID("header.venueId", h.GetVenueId(), venuePattern); err != nil {
		return err
	}
	if err := checkID("header.settlementRequestId", h.GetSettlementRequestId(), requestIDPattern); err != nil {
		return err
	}
	if st := h.GetStatus(); st != "" && st != StatusReceived {
		return apperr.Invalid(apperr.CodeFormat, "header.status", "header.status of a new instruction must be %s (or left out), got %q", StatusReceived, st)
	}
	if len(h.GetErrors()) > MaxErrorsLength {
		return apperr.Invalid(apperr.CodeLength, "header.errors", "header.errors must be at most %d characters", MaxErrorsLength)
	}
	if t := h.GetRequestDateTime(); t != "" {
		if _, err := time.Parse(time.RFC3339Nano, t); err != nil {
			return apperr.Invalid(apperr.CodeFormat, "header.requestDateTime", "header.requestDateTime must be an ISO 8601 timestamp such as 2026-11-21T10:15:30.123Z, got %q", t)
		}
	}
	return nil
}

// checkID checks a mandatory identifier: present, at most MaxIDLength, matching pattern.
func checkID(field, v string, pattern *regexp.Regexp) error {
	switch {
	case v == "":
		return apperr.Missing(field)
	case len(v) > MaxIDLength:
		return apperr.Invalid(apperr.CodeLength, field, "%s must be at most %d characters", field, MaxIDLength)
	case !pattern.MatchString(v):
		return apperr.Invalid(apperr.CodeFormat, field, "%s must match %s, got %q", field, pattern, v)
	}
	return nil
}

func parseAddresses(in []*interchangev1.ReceivableAddress) ([]Address, error) {
	if len(in) > MaxAddresses {
		return nil, apperr.Invalid(apperr.CodeLength, "header.receivableAddresses", "header.receivableAddresses holds more than %d addresses", MaxAddresses)
	}
	out := make([]Address, 0, len(in))
	for i, a := range in {
		field := func(name string) string { return fmt.Sprintf("header.receivableAddresses[%d].%s", i, name) }
		switch {
		case a.GetAddress() == "":
			return nil, apperr.Missing(field("address"))
		case len(a.GetAddress()) > MaxAddressLength:
			return nil, apperr.Invalid(apperr.CodeLength, field("address"), "%s must be at most %d characters", field("address"), MaxAddressLength)
		case a.GetLedger() == "":
			return nil, apperr.Missing(field("ledger"))
		case !isLedger(a.GetLedger()):
			return nil, apperr.Invalid(apperr.CodeFormat, field("ledger"), "%s must be one of %v, got %q", field("ledger"), ledger.Ledgers(), a.GetLedger())
		case ledger.Validate(a.GetLedger(), a.GetAddress()) != nil:
			return nil, apperr.Invalid(apperr.CodeFormat, field("address"), "%s is not a valid %s address", field("address"), a.GetLedger())
		case a.GetDestinationTag() < 0 || a.GetDestinationTag() > MaxDestinationTag:
			return nil, apperr.Invalid(apperr.CodeLength, field("destinationTag"), "%s must be between 0 and %d", field("destinationTag"), MaxDestinationTag)
		case len(a.GetMemo()) > MaxMemoLength:
			return nil, apperr.Invalid(apperr.CodeLength, field("memo"), "%s must be at most %d characters", field("memo"), MaxMemoLength)
		}
		out = append(out, Address{Address: a.GetAddress(), Ledger: a.GetLedger(), DestinationTag: a.GetDestinationTag(), Memo: a.GetMemo()})
	}
	return out, nil
}

// bodyHash is the SHA-256 of the request's canonical JSON (keys sorted, empty fields left
// out): the same instruction sent again hashes the same whatever its key order.
func bodyHash(req *interchangev1.CreateSettlementRequest) (string, error) {
	raw, err := protojson.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("encode instruction: %w", err)
	}
	c, err := canonical.FromJSON(raw)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// check applies the rules to parsed legs.
func (r Rules) check(legs []Leg) error {
	gross := map[string]amount.Amount{}
	for i, l := range legs {
		a := amount.MustStored(l.Amount)
		if a.Sign() < 0 && !r.Payables {
			return &apperr.Error{Status: codes.PermissionDenied, Code: apperr.CodeForbidden, Field: fmt.Sprintf("settlements[%d].amount", i),
				Message: fmt.Sprintf("settlements[%d].amount %s is a payable: payables move the venue's money and are instructed by the venue, a client's instruction holds receivables only", i, l.Amount)}
		}
		gross[l.Currency] = gross[l.Currency].Add(a.Abs())
	}
	for cur, g := range gross {
		bound, ok := r.MaxGross[cur]
		if !ok || g.Cmp(bound) > 0 {
			return apperr.Invalid(apperr.CodeLength, "settlements", "the %s settlements add up to %s, beyond the %s per settlement allowed", cur, g, bound)
		}
	}
	return nil
}

// DefaultMaxGross is the default bound of one settlement's gross amount per currency.
func DefaultMaxGross() map[string]amount.Amount {
	out := map[string]amount.Amount{}
	for cur, v := range map[string]string{"BTC": "10000", "ETH": "200000", "USDC": "500000000", "EURC": "500000000", "XLM": "5000000000", "XRP": "1000000000"} {
		out[cur] = amount.MustStored(v)
	}
	return out
}
