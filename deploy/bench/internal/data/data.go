// Package data loads the bench's data set: the demo data of deploy/local/demo, then N
// documents in each collection the measured paths touch (trading wallets, service requests,
// the gateway's request identifiers).
package data

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"golang.org/x/sync/errgroup"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/canonical"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/services/servicedesk"
	servicedeskstore "github.com/zcustody/suite/services/servicedesk/store"
	"github.com/zcustody/suite/services/trading"
)

// The data the scenarios use.
const (
	Company     = demo.CompanyZTEST
	CompanyName = "Zodia Test Ltd"
	// ReadVenue is the venue the read's filter names: every tenth bulk wallet is there.
	ReadVenue = "BENCH"
	// WriteService is the catalog service the write creates requests for.
	WriteService = "0x0013-001"
	// WritePayload is the write's payload (one BTC custody wallet).
	WritePayload = `{"name":["x"],"currency":["BTC"],"currencyId":["btc-btc"]}`
)

// ReadPage is the page size of the read.
const ReadPage = 10

// ReadFilter is what the trading service builds from the read's request (server.walletFilter):
// the caller's company, the venue, the first page sorted by id.
func ReadFilter() trading.WalletFilter {
	f := trading.WalletFilter{CompanyID: Company, VenueIDs: []string{ReadVenue}}
	f.Page.Limit, f.Page.SortBy = ReadPage, "id"
	return f
}

// Viewer and Maker are the demo users that sign the read and the write; Checker approves
// the delivery scenario's webhook subscription.
var (
	Viewer  = demo.UserEmail("ztest", "viewer")
	Maker   = demo.UserEmail("ztest", "maker")
	Checker = demo.UserEmail("ztest", "checker")
)

// writers bounds the concurrent writes of the load (the embedded database runs one command
// at a time anyway; a few in flight hide the round trips).
const writers = 8

// Counts says how many documents each collection got.
type Counts struct {
	Wallets, Requests, RequestIDs int
	Took                          time.Duration
}

// Load writes the demo data and n documents per measured collection into the database at uri.
func Load(ctx context.Context, uri string, n int) (Counts, error) {
	start := time.Now()
	client, err := mongodb.Connect(ctx, uri)
	if err != nil {
		return Counts{}, err
	}
	defer client.Disconnect(context.WithoutCancel(ctx))
	if err := demo.Load(ctx, client); err != nil {
		return Counts{}, fmt.Errorf("load demo data: %w", err)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return loadWallets(gctx, client.Database("trading"), n) })
	g.Go(func() error { return loadRequests(gctx, servicedeskstore.New(client.Database("servicedesk")), n) })
	g.Go(func() error { return loadRequestIDs(gctx, client.Database("gateway").Collection("request_ids"), n) })
	if err := g.Wait(); err != nil {
		return Counts{}, err
	}
	if err := forgetEvents(ctx, client); err != nil {
		return Counts{}, err
	}
	return Counts{Wallets: n, Requests: n, RequestIDs: n, Took: time.Since(start)}, nil
}

// emptyOutboxes empties the outboxes of col's documents, a hundred at a time (an update of
// a thousand documents outlasts the client's timeout on the embedded database).
func emptyOutboxes(ctx context.Context, col *mongo.Collection) error {
	for {
		cur, err := col.Find(ctx, bson.D{{Key: fieldPending, Value: true}}, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}).SetLimit(100))
		if err != nil {
			return err
		}
		var ids []struct {
			ID any `bson:"_id"`
		}
		if err := cur.All(ctx, &ids); err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		in := make(bson.A, len(ids))
		for i, d := range ids {
			in[i] = d.ID
		}
		_, err = col.UpdateMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: in}}}},
			bson.D{{Key: "$set", Value: bson.D{{Key: fieldOutbox, Value: bson.A{}}}}, {Key: "$unset", Value: bson.D{{Key: fieldPending, Value: ""}}}})
		if err != nil {
			return err
		}
	}
}

// Services are the databases whose documents carry outboxes.
var Services = []string{"servicedesk", "trading", "interchange", "custody", "compliance"}

// The outbox fields of a service's documents (services/internal/outbox, internal to the
// services module).
const (
	fieldOutbox  = "outbox"
	fieldPending = "hasPending"
)

// forgetEvents empties the outboxes of what was loaded. The loaded data stands for history
// whose events were delivered long before the run; relaying thousands of them when the
// services start would measure that backlog (minutes on the embedded database) instead of
// the scenarios, and hold up the delivery scenario's events behind it.
func forgetEvents(ctx context.Context, client *mongo.Client) error {
	for _, name := range Services {
		db := client.Database(name)
		cols, err := db.ListCollectionNames(ctx, bson.D{})
		if err != nil {
			return fmt.Errorf("list %s collections: %w", name, err)
		}
		for _, c := range cols {
			if err := emptyOutboxes(ctx, db.Collection(c)); err != nil {
				return fmt.Errorf("empty the outboxes of %s.%s: %w", name, c, err)
			}
		}
	}
	return nil
}

// BenchWallet is bulk wallet i: one in ten is at ReadVenue, the others spread over nine
// venues; names and currencies vary, balances are zero (no journal entries are loaded).
func BenchWallet(i int) trading.Wallet {
	venue := ReadVenue
	if i%10 != 0 {
		venue = fmt.Sprintf("VENUE-%d", i%10)
	}
	currencies := []string{"BTC", "ETH", "XLM", "XRP", "USDC"}
	currency := currencies[i%len(currencies)]
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	balance := trading.ZeroBalance(currency)
	return trading.Wallet{ID: fmt.Sprintf("%s-TW-BN%08d", Company, i), VenueID: venue, Name: fmt.Sprintf("Bench wallet %d", i),
		Status: trading.StatusActive, CompanyID: Company, Currency: currency, Balances: []trading.Balance{balance},
		CustomProperties: `{"accountUuid":"5f0c8a52-3c1e-4d2b-9a47-1e6b2f7d9c01"}`, CreatedBy: Maker,
		CreatedAt: created, UpdatedAt: created, Version: 1, RequestID: "BENCH"}
}

func loadRequests(ctx context.Context, st *servicedeskstore.Store, n int) error {
	svc, err := WriteCatalogService()
	if err != nil {
		return err
	}
	maker := servicedesk.Maker{Email: Maker, CompanyID: Company, CompanyName: CompanyName}
	return each(ctx, n, func(ctx context.Context, i int) error {
		payload := fmt.Sprintf(`{"currency":["BTC"],"currencyId":["btc-btc"],"name":["Bench wallet %d"]}`, i)
		endToEnd := uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "bench-request-%d", i)).String()
		r := servicedesk.NewRequest(fmt.Sprintf("SERV-REQ-BN%08d", i), maker, svc, endToEnd, payload, BodyHash(svc.ID, payload), time.Now())
		if err := st.InsertRequest(ctx, r); err != nil && !errors.Is(err, apperr.ErrExists) {
			return err
		}
		return nil
	})
}

// loadRequestIDs fills the gateway's replay collection with n identifiers inside the window.
func loadRequestIDs(ctx context.Context, col *mongo.Collection, n int) error {
	expires := time.Now().Add(10 * time.Minute)
	for done := 0; done < n; {
		batch := make([]any, 0, min(1000, n-done))
		for range cap(batch) {
			batch = append(batch, bson.D{{Key: "_id", Value: Company + ":" + uuid.NewString()}, {Key: "expiresAt", Value: expires}})
		}
		if _, err := col.InsertMany(ctx, batch, options.InsertMany().SetOrdered(false)); err != nil {
			return fmt.Errorf("load request identifiers: %w", err)
		}
		done += len(batch)
	}
	return nil
}

// each runs fn for 0..n-1, a few at a time.
func each(ctx context.Context, n int, fn func(context.Context, int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(writers)
	for i := range n {
		g.Go(func() error { return fn(gctx, i) })
	}
	return g.Wait()
}

// WriteCatalogService is the catalog entry of WriteService.
func WriteCatalogService() (servicedesk.Service, error) {
	for _, s := range servicedesk.Catalog() {
		if s.ID == WriteService {
			return s, nil
		}
	}
	return servicedesk.Service{}, fmt.Errorf("catalog has no %s", WriteService)
}

// CanonicalPayload is the canonical JSON of a payload, as the service desk stores it.
func CanonicalPayload(payload string) (string, error) {
	c, err := canonical.FromJSON([]byte(payload))
	return string(c), err
}

// BodyHash is the service desk's body hash: SHA-256 over the service id and the canonical payload.
func BodyHash(serviceID, payload string) string {
	sum := sha256.Sum256([]byte(serviceID + "\n" + payload))
	return hex.EncodeToString(sum[:])
}
