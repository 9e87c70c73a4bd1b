package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/principal"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
)

// completedRequest takes a new custody wallet request to COMPLETED and returns its id.
func completedRequest(t *testing.T) string {
	t.Helper()
	got := create(t, demo.CompanyZTEST, maker, createBody(t, "0x0013-001", custodyWalletPayload("Audited")))
	wantStatus(t, authorise(t, got.RequestID), "COMPLETED")
	return got.RequestID
}

func auditTrail(t *testing.T, companyID string, body any) []byte {
	t.Helper()
	r := do(t, newClient(companyID, viewer), http.MethodPost, auditPath, mustJSON(t, body))
	if r.status != http.StatusOK {
		t.Fatalf("audit trail: status %d, body %s", r.status, r.body)
	}
	return r.body
}

var (
	stampPattern = regexp.MustCompile(`"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z"`)
	// An approval signature differs at each run (ECDSA); ZTEST's policy version depends on
	// whether TestPolicyChangeNeedsTwoPeople ran before (it keeps the rule's name).
	signaturePattern     = regexp.MustCompile(`"signature":"[A-Za-z0-9+/=]+"`)
	policyVersionPattern = regexp.MustCompile(`"policyVersion":"\d+"`)
)

// TestAuditTrailShape pins the whole body for a completed request and an unknown id: a
// top-level array in the order asked, versions grouped by role.
func TestAuditTrailShape(t *testing.T) {
	t.Parallel()
	id := completedRequest(t)
	body := auditTrail(t, demo.CompanyZTEST, map[string]any{"requestIds": []string{"SERV-REQ-UNKNOWN000", id}})
	if !json.Valid(body) || body[0] != '[' {
		t.Fatalf("audit trail is not a top-level JSON array: %s", body)
	}
	normal := regexp.MustCompile(regexp.QuoteMeta(id)).ReplaceAll(body, []byte("SERV-REQ-XXXXXXXXXX"))
	normal = stampPattern.ReplaceAll(normal, []byte(`"TIMESTAMP"`))
	normal = signaturePattern.ReplaceAll(normal, []byte(`"signature":"SIGNATURE"`))
	normal = policyVersionPattern.ReplaceAll(normal, []byte(`"policyVersion":"VERSION"`))
	golden(t, "audit_trail.golden.json", normal)

	var trails []struct {
		Total int `json:"total"`
	}
	mustUnmarshal(t, body, &trails)
	if len(trails) != 2 || trails[0].Total != 0 || trails[1].Total != 4 {
		t.Errorf("totals %+v, want [0 4] (unknown id, then Created/Confirmed/Approved/Completed)", trails)
	}
	paged := auditTrail(t, demo.CompanyZTEST, map[string]any{"requestIds": []string{id}, "paginationLimit": 1, "paginationOffset": 3, "sort": map[string]string{"by": "id", "order": "ASC"}})
	var one []struct {
		Total int `json:"total"`
		Items []struct {
			VersionNumber int `json:"versionNumber"`
			VersionAction int `json:"versionAction"`
		} `json:"items"`
	}
	mustUnmarshal(t, paged, &one)
	if len(one) != 1 || one[0].Total != 4 || len(one[0].Items) != 1 || one[0].Items[0].VersionNumber != 4 || one[0].Items[0].VersionAction != 7 {
		t.Errorf("page of one from offset 3 = %s, want version 4 (action 7, completed) of 4", paged)
	}
	var other []struct {
		Total int `json:"total"`
	}
	mustUnmarshal(t, auditTrail(t, demo.CompanyZACME, map[string]any{"requestIds": []string{id}}), &other)
	if len(other) != 1 || other[0].Total != 0 {
		t.Errorf("ZACME reads ZTEST's audit trail: %+v", other)
	}
	wantError(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, auditPath, mustJSON(t, map[string]any{"requestIds": []string{}})), http.StatusBadRequest, "ER-112")
}

// TestAuditTrailTamperCheck edits a stored version behind the service's back and expects the
// internal check to find it.
func TestAuditTrailTamperCheck(t *testing.T) {
	t.Parallel()
	id := completedRequest(t)
	verify := auditVerifier(t)
	if got := verify(id); !got.GetIntact() || got.GetVersions() != 4 {
		t.Fatalf("untouched trail: %v, want intact with 4 versions", got)
	}
	client, err := mongodb.Connect(context.Background(), env.stack.MongoURI)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(context.Background())
	// Edit version 3's actor behind the service's back.
	if _, err := client.Database("servicedesk").Collection("requests").UpdateOne(context.Background(), bson.D{{Key: "_id", Value: id}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "versions.2.actor", Value: "api-maker@ztest.example"}}}}); err != nil {
		t.Fatal(err)
	}
	got := verify(id)
	if got.GetIntact() || got.GetBrokenAtVersion() != 3 {
		t.Errorf("after editing version 3: %v, want not intact, broken at version 3", got)
	}

	removed := completedRequest(t)
	requests := client.Database("servicedesk").Collection("requests")
	var doc struct {
		Versions []bson.Raw `bson:"versions"`
	}
	if err := requests.FindOne(context.Background(), bson.D{{Key: "_id", Value: removed}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	kept := append([]bson.Raw{doc.Versions[0]}, doc.Versions[2:]...) // drop version 2
	if _, err := requests.UpdateOne(context.Background(), bson.D{{Key: "_id", Value: removed}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "versions", Value: kept}}}}); err != nil {
		t.Fatal(err)
	}
	if got := verify(removed); got.GetIntact() || got.GetBrokenAtVersion() != 2 {
		t.Errorf("after removing version 2: %v, want not intact, broken at version 2", got)
	}
}

// auditVerifier calls the service desk's internal VerifyAuditTrail as an internal system.
func auditVerifier(t *testing.T) func(string) *servicedeskv1.VerifyAuditTrailResponse {
	t.Helper()
	key, err := principal.LoadPrivateKey(filepath.Join(env.dataDir, "keys", "settlement-engine.pem"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(env.stack.Services["servicedesk"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	signer := principal.NewSigner("settlement-engine", key, time.Minute)
	return func(id string) *servicedeskv1.VerifyAuditTrailResponse {
		ctx, err := signer.OutgoingContext(context.Background(), principal.Principal{Kind: principal.KindSystem, System: "settlement-engine"})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := servicedeskv1.NewServicedeskServiceClient(conn).VerifyAuditTrail(ctx, &servicedeskv1.VerifyAuditTrailRequest{RequestId: id})
		if err != nil {
			t.Fatalf("VerifyAuditTrail: %v", err)
		}
		return resp
	}
}
