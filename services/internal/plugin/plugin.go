// Package plugin is what every owning service shares to serve the service desk's plugin API
// (proto plugin.v1): the caller check, the not-yet-available answer, and the execution ledger
// that makes Execute idempotent by request id.
package plugin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/internal/catalog"
)

// ServicedeskSystem is the system name of the service desk's principal.
const ServicedeskSystem = catalog.Servicedesk

// NotAvailable answers a catalog service the owner cannot carry out yet: the create fails
// at once with a clear error rather than after approval.
func NotAvailable(serviceID string) error {
	return apperr.Unimplemented("serviceId", "service %s cannot be requested yet", serviceID)
}

// Ledger records executed requests in the owner's `plugin_executions` collection.
type Ledger struct {
	col *mongo.Collection
	now func() time.Time
}

// NewLedger returns the ledger on db.
func NewLedger(db *mongo.Database) *Ledger {
	return &Ledger{col: db.Collection("plugin_executions"), now: time.Now}
}

type executionDoc struct {
	ID       string    `bson:"_id"` // request id
	Response string    `bson:"response"`
	At       time.Time `bson:"at"`
}

// Once runs execute for requestID unless it already ran, and returns the first run's result.
// execute must itself be safe to repeat (insert by the reserved id, conditional updates): a
// process that dies after execute and before the record is written runs it again.
func (l *Ledger) Once(ctx context.Context, requestID string, execute func(context.Context) (*pluginv1.ExecuteResponse, error)) (*pluginv1.ExecuteResponse, error) {
	if resp, err := l.find(ctx, requestID); err == nil || !errors.Is(err, mongo.ErrNoDocuments) {
		return resp, err
	}
	resp, err := execute(ctx)
	if err != nil {
		return nil, err
	}
	body, err := protojson.Marshal(resp)
	if err != nil {
		return nil, fmt.Errorf("encode execution %s: %w", requestID, err)
	}
	_, err = l.col.InsertOne(ctx, executionDoc{ID: requestID, Response: string(body), At: l.now().UTC()})
	if mongo.IsDuplicateKeyError(err) {
		return l.find(ctx, requestID)
	}
	if err != nil {
		return nil, fmt.Errorf("record execution %s: %w", requestID, err)
	}
	return resp, nil
}

func (l *Ledger) find(ctx context.Context, requestID string) (*pluginv1.ExecuteResponse, error) {
	var doc executionDoc
	if err := l.col.FindOne(ctx, bson.D{{Key: "_id", Value: requestID}}).Decode(&doc); err != nil {
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, err
		}
		return nil, fmt.Errorf("find execution %s: %w", requestID, err)
	}
	resp := &pluginv1.ExecuteResponse{}
	if err := protojson.Unmarshal([]byte(doc.Response), resp); err != nil {
		return nil, fmt.Errorf("decode execution %s: %w", requestID, err)
	}
	return resp, nil
}
