package scenario

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/deploy/bench/internal/data"
	"github.com/zcustody/suite/platform/apperr"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/servicedesk"
)

// WritePath is endpoint 5, the service request create.
const WritePath = "/v3/api/servicedesk/create"

// writeBody is the create's body with a fresh endToEndId, so every call creates a request.
func writeBody() []byte {
	return fmt.Appendf(nil, `{"serviceId":%q,"endToEndId":%q,"payload":%s}`, data.WriteService, uuid.NewString(), data.WritePayload)
}

// Write creates one custody-wallet request per call through each layer.
func (e *Env) Write() (Scenario, error) {
	direct, err := e.directWrite()
	if err != nil {
		return Scenario{}, err
	}
	raw, err := e.rawWrite()
	if err != nil {
		return Scenario{}, err
	}
	signed := &signedTargets{client: e.signingClient(data.Maker), path: WritePath, body: writeBody}
	return Scenario{Name: "write", Title: "service request create (endpoint 5): " + data.WriteService + ", a new endToEndId per call",
		Layers: []Layer{
			{Name: LayerGateway, Targets: signed.Targeter, starved: &signed.Starved},
			{Name: LayerDirect, Targets: staticTargets("direct-write"), Client: callClient(direct)},
			{Name: LayerRaw, Targets: staticTargets("raw-write"), Client: callClient(raw)},
		}, Reset: e.deleteCreated}, nil
}

// deleteCreated deletes the requests created since a time (the bulk requests are older).
func (e *Env) deleteCreated(ctx context.Context, since time.Time) error {
	_, err := e.mongo.Database("servicedesk").Collection("requests").DeleteMany(ctx,
		bson.D{{Key: "companyId", Value: data.Company}, {Key: "createdAt", Value: bson.D{{Key: "$gte", Value: since}}}})
	if err != nil {
		return fmt.Errorf("delete the created requests: %w", err)
	}
	return nil
}

// directWrite calls ServicedeskService.CreateRequest as the maker: the service checks the
// catalog, looks the endToEndId up, asks custody's plugin to validate, and inserts.
func (e *Env) directWrite() (Call, error) {
	create, err := e.directCreate()
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		_, err := create(ctx)
		return err
	}, nil
}

// directCreate is directWrite answering the created request's id.
func (e *Env) directCreate() (func(context.Context) (string, error), error) {
	payload := &structpb.Struct{}
	if err := protojson.Unmarshal([]byte(data.WritePayload), payload); err != nil {
		return nil, fmt.Errorf("write payload: %w", err)
	}
	return func(ctx context.Context) (string, error) {
		ctx, err := e.tokens[data.Maker].outgoing(ctx)
		if err != nil {
			return "", err
		}
		resp, err := e.servicedesk.CreateRequest(ctx, &servicedeskv1.CreateRequestRequest{ServiceId: data.WriteService,
			EndToEndId: uuid.NewString(), Payload: payload})
		return resp.GetRequestId(), err
	}, nil
}

// rawWrite issues the driver operations the service desk's create issues on its own database,
// through its store: the catalog find, the endToEndId look-up (not found) and the insert of
// the new request with its first audit version.
func (e *Env) rawWrite() (Call, error) {
	svc, err := data.WriteCatalogService()
	if err != nil {
		return nil, err
	}
	payload, err := data.CanonicalPayload(data.WritePayload)
	if err != nil {
		return nil, err
	}
	hash := data.BodyHash(svc.ID, payload)
	maker := servicedesk.Maker{Email: data.Maker, CompanyID: data.Company, CompanyName: data.CompanyName}
	return func(ctx context.Context) error {
		found, err := e.requests.FindCatalog(ctx, servicedesk.CatalogFilter{Entitled: []string{svc.ID}})
		if err != nil || len(found) != 1 {
			return errors.Join(err, errors.New("catalog entry missing"))
		}
		endToEnd := uuid.NewString()
		if _, err := e.requests.RequestByEndToEnd(ctx, data.Company, endToEnd); !errors.Is(err, apperr.ErrNotFound) {
			return fmt.Errorf("look-up of a fresh endToEndId: %w", err)
		}
		r := servicedesk.NewRequest(requestID(), maker, found[0], endToEnd, payload, hash, time.Now())
		return e.requests.InsertRequest(ctx, r)
	}, nil
}

// requestID is a new service-request id shaped like the service desk's (SERV-REQ- + 10).
func requestID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b [10]byte
	_, _ = rand.Read(b[:])
	var s strings.Builder
	s.WriteString("SERV-REQ-")
	for _, c := range b {
		s.WriteByte(alphabet[int(c)%len(alphabet)])
	}
	return s.String()
}

// CheckWrite creates one request through each of the gateway and the direct layer and fails
// unless both answer a request id.
func (e *Env) CheckWrite(ctx context.Context) error {
	status, body, err := e.signingClient(data.Maker).Do(http.MethodPost, WritePath, writeBody())
	if err != nil {
		return err
	}
	var resp struct {
		RequestID string `json:"requestId"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &resp) != nil || resp.RequestID == "" {
		return fmt.Errorf("gateway write: HTTP %d: %s", status, body)
	}
	direct, err := e.directWrite()
	if err != nil {
		return err
	}
	if err := direct(ctx); err != nil {
		return fmt.Errorf("direct write: %w", err)
	}
	return nil
}
