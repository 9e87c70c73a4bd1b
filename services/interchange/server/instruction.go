package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/canonical"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/internal/ledger"
)

var (
	// codePattern is a venue's or a company's identifier, e.g. BYBIT, ZTEST.
	codePattern      = regexp.MustCompile(`^[A-Z0-9_-]+$`)
	requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

// ParseInstruction validates endpoint 3's body field by field (each error names its field
// as a JSON path, e.g. settlements[1].amount) and returns the settlement it describes, for
// companyID, with its shares and body hash. Trading wallets are checked later (the
// settlement service's Create), once the request is known not to repeat an earlier one.
func ParseInstruction(companyID string, req *interchangev1.CreateSettlementRequest, rules settlement.Rules) (settlement.Settlement, error) {
	h := req.GetHeader()
	if h == nil {
		return settlement.Settlement{}, apperr.Missing("header")
	}
	s := settlement.Settlement{CompanyID: companyID, VenueID: h.GetVenueId(), RequestID: h.GetSettlementRequestId(),
		HeaderStatus: h.GetStatus(), HeaderErrors: h.GetErrors(), RequestDateTime: h.GetRequestDateTime(),
		InstructionCount: h.GetInstructionCount()}
	if err := checkHeader(h); err != nil {
		return settlement.Settlement{}, err
	}
	var err error
	if s.Addresses, err = parseAddresses(h.GetReceivableAddresses()); err != nil {
		return settlement.Settlement{}, err
	}
	if s.Legs, err = parseLegs(req.GetSettlements(), rules.MaxLegs); err != nil {
		return settlement.Settlement{}, err
	}
	if err := rules.Check(s.Legs); err != nil {
		return settlement.Settlement{}, err
	}
	if int(h.GetInstructionCount()) != len(s.Legs) {
		return settlement.Settlement{}, apperr.Invalid(apperr.CodeFormat, "header.instructionCount",
			"header.instructionCount is %d but the instruction holds %d settlements", h.GetInstructionCount(), len(s.Legs))
	}
	if s.Nets, err = parseNets(req.GetNetSettlements()); err != nil {
		return settlement.Settlement{}, err
	}
	if s.Shares, err = settlement.Shares(s.VenueID, s.Legs, s.Nets); err != nil {
		return settlement.Settlement{}, err
	}
	if s.BodyHash, err = bodyHash(req); err != nil {
		return settlement.Settlement{}, err
	}
	return s, nil
}

func checkHeader(h *interchangev1.SettlementHeader) error {
	if err := checkID("header.venueId", h.GetVenueId(), codePattern); err != nil {
		return err
	}
	if err := checkID("header.settlementRequestId", h.GetSettlementRequestId(), requestIDPattern); err != nil {
		return err
	}
	if st := h.GetStatus(); st != "" && st != settlement.StatusReceived {
		return apperr.Invalid(apperr.CodeFormat, "header.status", "header.status of a new instruction must be %s (or left out), got %q", settlement.StatusReceived, st)
	}
	if len(h.GetErrors()) > settlement.MaxErrorsLength {
		return apperr.Invalid(apperr.CodeLength, "header.errors", "header.errors must be at most %d characters", settlement.MaxErrorsLength)
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
	if err := checkLength(field, v); err != nil {
		return err
	}
	if !pattern.MatchString(v) {
		return apperr.Invalid(apperr.CodeFormat, field, "%s must match %s, got %q", field, pattern, v)
	}
	return nil
}

// checkLength checks an identifier a caller names to look something up: present and at
// most MaxIDLength (nothing longer is ever stored).
func checkLength(field, v string) error {
	switch {
	case v == "":
		return apperr.Missing(field)
	case len(v) > settlement.MaxIDLength:
		return apperr.Invalid(apperr.CodeLength, field, "%s must be at most %d characters", field, settlement.MaxIDLength)
	}
	return nil
}

func parseAddresses(in []*interchangev1.ReceivableAddress) ([]settlement.Address, error) {
	if len(in) > settlement.MaxAddresses {
		return nil, apperr.Invalid(apperr.CodeLength, "header.receivableAddresses", "header.receivableAddresses holds more than %d addresses", settlement.MaxAddresses)
	}
	out := make([]settlement.Address, 0, len(in))
	for i, a := range in {
		field := func(name string) string { return fmt.Sprintf("header.receivableAddresses[%d].%s", i, name) }
		switch {
		case a.GetAddress() == "":
			return nil, apperr.Missing(field("address"))
		case len(a.GetAddress()) > settlement.MaxAddressLength:
			return nil, apperr.Invalid(apperr.CodeLength, field("address"), "%s must be at most %d characters", field("address"), settlement.MaxAddressLength)
		case a.GetLedger() == "":
			return nil, apperr.Missing(field("ledger"))
		case !isLedger(a.GetLedger()):
			return nil, apperr.Invalid(apperr.CodeFormat, field("ledger"), "%s must be one of %v, got %q", field("ledger"), ledger.Ledgers(), a.GetLedger())
		case ledger.Validate(a.GetLedger(), a.GetAddress()) != nil:
			return nil, apperr.Invalid(apperr.CodeFormat, field("address"), "%s is not a valid %s address", field("address"), a.GetLedger())
		case a.GetDestinationTag() < 0 || a.GetDestinationTag() > settlement.MaxDestinationTag:
			return nil, apperr.Invalid(apperr.CodeLength, field("destinationTag"), "%s must be between 0 and %d", field("destinationTag"), settlement.MaxDestinationTag)
		case len(a.GetMemo()) > settlement.MaxMemoLength:
			return nil, apperr.Invalid(apperr.CodeLength, field("memo"), "%s must be at most %d characters", field("memo"), settlement.MaxMemoLength)
		}
		out = append(out, settlement.Address{Address: a.GetAddress(), Ledger: a.GetLedger(), DestinationTag: a.GetDestinationTag(), Memo: a.GetMemo()})
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

// parseNets validates netSettlements: a supported currency on its ledger, once each, and a
// signed canonical amount no finer than its base unit.
func parseNets(in []*interchangev1.NetSettlement) ([]settlement.Net, error) {
	out := make([]settlement.Net, 0, len(in))
	seen := map[string]int{}
	for i, n := range in {
		field := func(name string) string { return fmt.Sprintf("netSettlements[%d].%s", i, name) }
		cur, err := currencyOn(field, n.GetCurrency(), n.GetLedger())
		if err != nil {
			return nil, err
		}
		if j, dup := seen[cur.Code]; dup {
			return nil, apperr.Invalid(apperr.CodeFormat, field("currency"), "%s %s is netted twice (see netSettlements[%d])", field("currency"), cur.Code, j)
		}
		seen[cur.Code] = i
		if _, err := parseAmount(field("amount"), n.GetAmount(), cur.Decimals, true); err != nil {
			return nil, err
		}
		out = append(out, settlement.Net{Currency: cur.Code, Ledger: cur.Ledger, Amount: n.GetAmount()})
	}
	return out, nil
}
