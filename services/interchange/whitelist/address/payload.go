package address

import (
	"slices"
	"strings"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/ledger"
	reqpayload "github.com/zcustody/suite/services/internal/payload"
)

// Catalog services interchange's address side owns.
const (
	ServiceWhitelist  = catalog.AddressWhitelist
	ServiceDeactivate = catalog.AddressDeactivate
)

// Limits of the payloads.
const (
	MaxAddressLength = 128
	MaxIDLength      = 64 // vaspId, beneficiaryId
	MaxNotesLength   = 256
)

// Whitelist is a validated 0x0007-007 payload.
type Whitelist struct {
	Address       string
	Blockchain    string
	Purposes      []string // INCOMING and/or OUTGOING, in that order, no repeats
	VaspID        string
	BeneficiaryID string // optional
	Notes         string // optional
	Hosted        bool   // optional, false when absent
}

// Deactivate is a validated 0x0007-008 payload.
type Deactivate struct {
	Address    string
	Blockchain string
}

// ParseWhitelist validates a 0x0007-007 payload. Strings may come as "x" or ["x"] (the
// catalog template's form); addressPurpose as ["INCOMING","OUTGOING"], ["INCOMING, OUTGOING"]
// or "INCOMING"; hostedAddress as true or [true].
func ParseWhitelist(payload map[string]any) (Whitelist, error) {
	err := reqpayload.CheckKeys("", payload, "address", "blockchain", "beneficiaryId", "notes", "hostedAddress", "vaspId", "addressPurpose")
	if err != nil {
		return Whitelist{}, err
	}
	d, err := parseLocation(payload)
	if err != nil {
		return Whitelist{}, err
	}
	w := Whitelist{Address: d.Address, Blockchain: d.Blockchain}
	if w.Purposes, err = purposes(payload); err != nil {
		return Whitelist{}, err
	}
	if w.VaspID, err = text(payload, "vaspId", MaxIDLength); err != nil {
		return Whitelist{}, err
	}
	if w.BeneficiaryID, err = optionalText(payload, "beneficiaryId", MaxIDLength, false); err != nil {
		return Whitelist{}, err
	}
	if w.Notes, err = optionalText(payload, "notes", MaxNotesLength, true); err != nil {
		return Whitelist{}, err
	}
	w.Hosted, err = flag(payload, "hostedAddress")
	return w, err
}

// ParseDeactivate validates a 0x0007-008 payload.
func ParseDeactivate(payload map[string]any) (Deactivate, error) {
	if err := reqpayload.CheckKeys("", payload, "address", "blockchain"); err != nil {
		return Deactivate{}, err
	}
	return parseLocation(payload)
}

// parseLocation reads address and blockchain, and checks the address's format on the
// blockchain (checksum included).
func parseLocation(payload map[string]any) (Deactivate, error) {
	addr, err := text(payload, "address", MaxAddressLength)
	if err != nil {
		return Deactivate{}, err
	}
	chain, err := text(payload, "blockchain", MaxIDLength)
	if err != nil {
		return Deactivate{}, err
	}
	if !slices.Contains(ledger.Ledgers(), chain) {
		return Deactivate{}, apperr.Invalid(apperr.CodeCurrency, "blockchain", "unsupported blockchain %q; supported: %s", chain,
			strings.Join(ledger.Ledgers(), ", "))
	}
	if err := ledger.Validate(chain, addr); err != nil {
		return Deactivate{}, apperr.Invalid(apperr.CodeFormat, "address", "address is not a valid %s address: %s", chain, formatHint(chain))
	}
	return Deactivate{Address: addr, Blockchain: chain}, nil
}

func formatHint(chain string) string {
	switch chain {
	case ledger.BTC:
		return "a bech32 P2WPKH address bc1q… with a valid checksum"
	case ledger.ETH:
		return "0x and 40 hexadecimal digits, EIP-55 checksum when mixed case"
	case ledger.XLM:
		return "a StrKey account id G… of 56 characters with a valid checksum"
	}
	return "a classic address r… with a valid checksum"
}

// purposes reads addressPurpose: a list of purposes, each element possibly several joined by
// commas.
func purposes(payload map[string]any) ([]string, error) {
	v, ok := payload["addressPurpose"]
	if !ok || v == nil {
		return nil, apperr.Missing("addressPurpose")
	}
	list, isList := v.([]any)
	if !isList {
		list = []any{v}
	}
	seen := map[string]bool{}
	for _, e := range list {
		s, isString := e.(string)
		if !isString {
			return nil, apperr.Invalid(apperr.CodeFormat, "addressPurpose", "addressPurpose must hold strings")
		}
		if strings.TrimSpace(s) == "" {
			return nil, apperr.Invalid(apperr.CodeBlank, "addressPurpose", "addressPurpose must not hold blank values")
		}
		for part := range strings.SplitSeq(s, ",") {
			p := strings.TrimSpace(part)
			if !slices.Contains(Purposes(), p) {
				return nil, apperr.Invalid(apperr.CodeFormat, "addressPurpose", "addressPurpose value %q must be INCOMING or OUTGOING", p)
			}
			seen[p] = true
		}
	}
	if len(seen) == 0 {
		return nil, apperr.Invalid(apperr.CodeEmptyList, "addressPurpose", "addressPurpose must hold at least one purpose")
	}
	var out []string
	for _, p := range Purposes() {
		if seen[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

// Checked is what compliance answered about a payload's references.
type Checked struct {
	VaspName        string
	BeneficiaryName string
}

// NewWhitelisted is the ACTIVE address the request creates.
func (w Whitelist) NewWhitelisted(id, companyID, createdBy, requestID string, c Checked, now time.Time) Whitelisted {
	now = now.UTC().Truncate(time.Millisecond)
	return Whitelisted{ID: id, CompanyID: companyID, Address: w.Address, Blockchain: w.Blockchain, Purposes: slices.Clone(w.Purposes),
		BeneficiaryID: w.BeneficiaryID, BeneficiaryName: c.BeneficiaryName, Notes: w.Notes, Hosted: w.Hosted, VaspID: w.VaspID,
		VaspName: c.VaspName, Status: StatusActive, CreatedBy: createdBy, CreatedAt: now, UpdatedAt: now, Version: 1, RequestID: requestID}
}

// Details are the address's fields as pluginDetail.details shows them (empty ones left out).
func (w Whitelisted) Details() map[string]any {
	d := map[string]any{"beneficiaryAddressId": w.ID, "address": w.Address, "cryptoAddress": w.Address, "blockchain": w.Blockchain,
		"blockchainId": BlockchainID(w.Blockchain), "currency": w.Blockchain, "addressPurpose": toAny(w.Purposes),
		"hostedAddress": w.Hosted, "vaspId": w.VaspID}
	for k, v := range map[string]string{"status": w.Status, "managingVasp": w.VaspName, "beneficiaryId": w.BeneficiaryID,
		"beneficiaryName": w.BeneficiaryName, "notes": w.Notes} {
		if v != "" {
			d[k] = v
		}
	}
	return d
}

func toAny(list []string) []any {
	out := make([]any, 0, len(list))
	for _, s := range list {
		out = append(out, s)
	}
	return out
}
