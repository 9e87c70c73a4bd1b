package funds

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/principal"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/interchange/withdrawal"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/trading"
)

// LimitSource reads the limits of a company's approval policy in force (the service desk's
// GetCompanyLimits).
type LimitSource interface {
	CompanyLimits(ctx context.Context, companyID string) (version int64, limits []*servicedeskv1.PolicyLimit, err error)
}

// DeskLimits reads limits from the service desk, as interchange.
type DeskLimits struct {
	Client servicedeskv1.ServicedeskServiceClient
	Signer *principal.Signer
}

// CompanyLimits asks the service desk.
func (d DeskLimits) CompanyLimits(ctx context.Context, companyID string) (int64, []*servicedeskv1.PolicyLimit, error) {
	ctx, err := d.Signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: System})
	if err != nil {
		return 0, nil, err
	}
	resp, err := d.Client.GetCompanyLimits(ctx, &servicedeskv1.GetCompanyLimitsRequest{CompanyId: companyID})
	if err != nil {
		return 0, nil, fmt.Errorf("limits of %s: %w", companyID, err)
	}
	return resp.GetPolicyVersion(), resp.GetLimits(), nil
}

// Limits reserves a withdrawal's amount against its company's limits in trading's journal
// (withdrawal.Limiter), as TigerBeetle's rate-limiting recipe does: each rolling-window
// limit is a constrained account (trading.LimitAccount) credited with its allowance from
// limit:grant; a withdrawal holds its amount there (to limit:used) by a hold that nobody
// posts and that expires after the window, so the allowance comes back by itself, and at once
// when the withdrawal is declined (the hold is voided). Two withdrawals that only one fits
// under: the constrained account refuses the second.
type Limits struct {
	ledger ledger
	source LimitSource
	// versions keeps, per limit account, the newest policy version that set its allowance
	// (colLimitVersions): a reader of an older version never changes it.
	versions *mongo.Collection
	// prices values withdrawals for the limits in US dollars.
	prices Valuer
}

// Valuer values an amount of a currency in US dollars ("" without a fresh price): Prices.
type Valuer interface {
	USDValue(ctx context.Context, currency, amt string) string
}

// colLimitVersions is interchange's collection of the policy version behind each limit
// account's allowance: {_id: account, version}.
const colLimitVersions = "limit_versions"

var _ withdrawal.Limiter = Limits{}

// NewLimits returns the limits over trading's ledger client, the limits' source and
// interchange's database (the allowances' versions).
func NewLimits(client tradingv1.TradingLedgerServiceClient, source LimitSource, signer *principal.Signer, db *mongo.Database, prices Valuer) Limits {
	return Limits{ledger: ledger{client: client, signer: signer}, source: source, versions: db.Collection(colLimitVersions), prices: prices}
}

// windowLimit is one rolling-window limit that applies to a withdrawal: its account in
// currency (the withdrawal's, or USD), and what the withdrawal takes of it (measure).
type windowLimit struct {
	name, account, allowance, currency string
	window                             time.Duration
	measure                            amount.Amount
}

// Reserve checks w against its company's limits: a per-transaction maximum it exceeds, or a
// window whose allowance it does not fit in, is a refusal naming the limit and what is left
// (nothing stays held); otherwise w's amount is held on every window limit that applies.
// Repeating it holds nothing twice (the holds' ids derive from the transfer and the account,
// their expiry from w's creation time).
func (l Limits) Reserve(ctx context.Context, w withdrawal.Withdrawal) (string, error) {
	version, limits, err := l.source.CompanyLimits(ctx, w.CompanyID)
	if err != nil {
		return "", err
	}
	var windows []windowLimit
	for _, lim := range limits {
		if !applies(lim, w) {
			continue
		}
		measure, currency := w.Held(), w.Currency
		if lim.GetCurrency() == trading.LimitUSD {
			usd := l.prices.USDValue(ctx, w.Currency, measure.String())
			if usd == "" {
				return fmt.Sprintf("over the limit %q: %s has no fresh USD price, so the withdrawal cannot be checked against a limit in USD", lim.GetName(), w.Currency), nil
			}
			measure, currency = amount.FromDecimal(amount.MustStored(usd).Decimal().RoundCeil(trading.LimitUSDPlaces)), trading.LimitUSD
		}
		if m := lim.GetMaxPerTransaction(); m != "" && measure.Cmp(amount.MustStored(m)) > 0 {
			return fmt.Sprintf("over the limit %q: at most %s %s per withdrawal, this one holds %s %s", lim.GetName(), m, currency, measure, currency), nil
		}
		if lim.GetAmount() == "" {
			continue
		}
		wl, err := windowOf(lim, w)
		if err != nil {
			return "", err
		}
		wl.measure = measure
		windows = append(windows, wl)
	}
	for i, wl := range windows {
		refusal, err := l.reserve(ctx, w, wl, version)
		if err != nil || refusal != "" {
			for _, placed := range windows[:i] {
				if verr := l.ledger.void(ctx, limitHoldID(w, placed.account), "withdrawal.limit.release"); verr != nil && err == nil {
					err = verr
				}
			}
			return refusal, err
		}
	}
	return "", nil
}

// reserve sets wl's allowance, then holds w's amount on its account until the window ends.
func (l Limits) reserve(ctx context.Context, w withdrawal.Withdrawal, wl windowLimit, version int64) (string, error) {
	if ok, err := l.grant(ctx, wl, wl.currency, version); err != nil || !ok {
		return fmt.Sprintf("over the limit %q: its allowance is being lowered to %s %s while reservations made under the higher one are outstanding", wl.name, wl.allowance, wl.currency), err
	}
	expires := w.CreatedAt.Add(wl.window).UTC().Format(time.RFC3339Nano)
	ok, err := l.ledger.record(ctx, &tradingv1.RecordEntryRequest{EntryId: limitHoldID(w, wl.account), Kind: tradingv1.EntryKind_ENTRY_KIND_HOLD,
		Code: "withdrawal.limit", BusinessKey: w.TransferID, ExpiresAt: expires, Legs: []*tradingv1.JournalLeg{
			{Account: wl.account, Currency: wl.currency, Side: tradingv1.LegSide_LEG_SIDE_DEBIT, Amount: wl.measure.String()},
			{Account: trading.LimitUsed, Currency: wl.currency, Side: tradingv1.LegSide_LEG_SIDE_CREDIT, Amount: wl.measure.String()},
		}})
	if err != nil || ok {
		return "", err
	}
	left, err := l.available(ctx, wl.account, wl.currency)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("over the limit %q: %s %s left of %s per %s, this withdrawal holds %s %s", wl.name, left, wl.currency, wl.allowance, wl.window, wl.measure, wl.currency), nil
}

// grant brings the account's allowance (credits posted less debits posted) to wl's, the
// allowance of policy version. Only the newest version seen sets it (claimVersion): a
// reservation that read an older policy while a newer one was adopted reserves under the
// newer allowance and never puts its own back. The change is an entry named for the version
// and the allowance it starts from (limitgrant:<account>:v<version>:<from>), so racing
// reservations that read the same allowance raise it once; a lowering also names what was
// reserved when it was read, because a lowering refused while more is reserved than the
// lower allowance leaves must be tried again once those reservations are gone (a refused id
// stays refused), and two lowerings from one allowance cannot both pass the constrained
// account. It reports false when the lowering is refused: the reservation is then refused,
// never made under the higher allowance.
func (l Limits) grant(ctx context.Context, wl windowLimit, currency string, version int64) (bool, error) {
	newest, err := l.claimVersion(ctx, wl.account, version)
	if err != nil || !newest {
		return err == nil, err
	}
	c, err := l.counters(ctx, wl.account, currency)
	if err != nil {
		return false, err
	}
	current := amount.MustStored(c.GetCreditsPosted()).Sub(amount.MustStored(c.GetDebitsPosted()))
	target := amount.MustStored(wl.allowance)
	change := target.Sub(current)
	if change.Sign() == 0 {
		return true, nil
	}
	account, grant := tradingv1.LegSide_LEG_SIDE_CREDIT, tradingv1.LegSide_LEG_SIDE_DEBIT
	id := fmt.Sprintf("limitgrant:%s:v%d:%s", wl.account, version, current)
	if change.Sign() < 0 {
		account, grant, change = grant, account, change.Neg()
		id += ":" + c.GetDebitsPending()
	}
	ok, err := l.ledger.record(ctx, &tradingv1.RecordEntryRequest{EntryId: id,
		Kind: tradingv1.EntryKind_ENTRY_KIND_TRANSFER, Code: "limit.allowance", BusinessKey: wl.account, Legs: []*tradingv1.JournalLeg{
			{Account: wl.account, Currency: currency, Side: account, Amount: change.String()},
			{Account: trading.LimitGrant, Currency: currency, Side: grant, Amount: change.String()},
		}})
	if status.Code(err) == codes.AlreadyExists {
		return true, nil // another reservation of this version made that change (with other legs: a lost race)
	}
	return ok, err
}

// claimVersion records version as the newest behind account's allowance and reports whether
// it is (a version at least as new already recorded by another reservation counts too);
// an older version is not.
func (l Limits) claimVersion(ctx context.Context, account string, version int64) (bool, error) {
	filter := bson.D{{Key: "_id", Value: account}, {Key: "version", Value: bson.D{{Key: "$lte", Value: version}}}}
	_, err := l.versions.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: bson.D{{Key: "version", Value: version}}}}, options.UpdateOne().SetUpsert(true))
	if mongo.IsDuplicateKeyError(err) { // a newer version set it, or the same one in a racing first claim
		var doc struct {
			Version int64 `bson:"version"`
		}
		if err := l.versions.FindOne(ctx, bson.D{{Key: "_id", Value: account}}).Decode(&doc); err != nil {
			return false, fmt.Errorf("read the allowance version of %s: %w", account, err)
		}
		return doc.Version == version, nil
	}
	if err != nil {
		return false, fmt.Errorf("claim the allowance of %s for policy version %d: %w", account, version, err)
	}
	return true, nil
}

// available is what is left of a limit account's allowance.
func (l Limits) available(ctx context.Context, account, currency string) (amount.Amount, error) {
	c, err := l.counters(ctx, account, currency)
	if err != nil {
		return amount.Zero, err
	}
	left := amount.MustStored(c.GetCreditsPosted()).Sub(amount.MustStored(c.GetDebitsPosted())).Sub(amount.MustStored(c.GetDebitsPending()))
	if left.Sign() < 0 {
		return amount.Zero, nil
	}
	return left, nil
}

// counters reads a limit account's counters in currency (zero before its first entry).
func (l Limits) counters(ctx context.Context, account, currency string) (*tradingv1.AccountCounters, error) {
	ctx, err := l.ledger.signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: System})
	if err != nil {
		return nil, err
	}
	resp, err := l.ledger.client.GetSystemAccount(ctx, &tradingv1.GetSystemAccountRequest{Account: account})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", account, err)
	}
	for _, c := range resp.GetCounters() {
		if c.GetCurrency() == currency {
			return c, nil
		}
	}
	return &tradingv1.AccountCounters{Currency: currency, DebitsPending: "0", DebitsPosted: "0", CreditsPending: "0", CreditsPosted: "0"}, nil
}

// Release gives back at once what a declined withdrawal reserved under the limits in force
// (a hold never placed is blocked, so it cannot be placed after). A reservation under an
// account the policy no longer has comes back when its window ends.
func (l Limits) Release(ctx context.Context, w withdrawal.Withdrawal) error {
	_, limits, err := l.source.CompanyLimits(ctx, w.CompanyID)
	if err != nil {
		return err
	}
	for _, lim := range limits {
		if !applies(lim, w) || lim.GetAmount() == "" {
			continue
		}
		wl, err := windowOf(lim, w)
		if err != nil {
			return err
		}
		if err := l.ledger.void(ctx, limitHoldID(w, wl.account), "withdrawal.limit.release"); err != nil {
			return err
		}
	}
	return nil
}

// windowOf is the rolling-window limit lim (which sets an amount) as it bounds w: its
// account, per wallet or for the company.
func windowOf(lim *servicedeskv1.PolicyLimit, w withdrawal.Withdrawal) (windowLimit, error) {
	window, err := time.ParseDuration(lim.GetWindow())
	if err == nil && window <= 0 {
		err = errors.New("not a positive duration")
	}
	if err != nil {
		return windowLimit{}, fmt.Errorf("limit %q: window %q: %w", lim.GetName(), lim.GetWindow(), err)
	}
	scope := w.WalletID
	if lim.GetScope() == "COMPANY" {
		scope = "*"
	}
	currency := w.Currency
	if lim.GetCurrency() == trading.LimitUSD {
		currency = trading.LimitUSD
	}
	return windowLimit{name: lim.GetName(), allowance: lim.GetAmount(), window: window, currency: currency,
		account: trading.LimitAccount(w.CompanyID, scope, currency, int64(window/time.Second))}, nil
}

// applies reports whether lim bounds w.
func applies(lim *servicedeskv1.PolicyLimit, w withdrawal.Withdrawal) bool {
	if lim.GetCurrency() != w.Currency && lim.GetCurrency() != trading.LimitUSD {
		return false
	}
	if lim.GetScope() == "COMPANY" || len(lim.GetWallets()) == 0 {
		return true
	}
	for _, id := range lim.GetWallets() {
		if id == w.WalletID {
			return true
		}
	}
	return false
}

// limitHoldID is the hold of w's reservation on a limit account: the account by a short hash
// of its name, so that the id stays within the journal's bound whatever the transfer id.
func limitHoldID(w withdrawal.Withdrawal, account string) string {
	sum := sha256.Sum256([]byte(account))
	return "wd:" + w.TransferID + ":limit:" + hex.EncodeToString(sum[:8])
}
