package app_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	"github.com/zcustody/suite/services/events/app"
	"github.com/zcustody/suite/services/events/server"
	"github.com/zcustody/suite/services/events/store"
	internalapp "github.com/zcustody/suite/services/internal/app"
	"github.com/zcustody/suite/services/internal/chaintest"
)

// testKeys is the test keyring's configuration: one 32-byte key.
const testKeys = "k1=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

// config is the service's configuration in the tests: quick streams, a keyring, and
// subscriptions to local http receivers allowed.
func config() app.Config {
	return app.Config{SequenceInterval: 10 * time.Millisecond, SequencerLease: time.Second, Retention: time.Hour,
		WatchPoll: 5 * time.Millisecond, WatchHeartbeat: 20 * time.Millisecond,
		Webhooks: app.WebhookConfig{Keys: testKeys, KeyCurrent: "k1", AllowHTTP: true, AllowPrivate: true}}
}

// TestChain serves the events service as its binary does and checks its policy through the
// real interceptor chain, method by method.
func TestChain(t *testing.T) {
	c := chaintest.Start(t, server.Policy("settlement-engine"), app.Register, config())
	t.Run("policy", func(t *testing.T) { c.CheckPolicy(t) })
	t.Run("the intake is the services' only", func(t *testing.T) {
		m := eventsv1.EventLogService_AppendEvents_FullMethodName
		c.Refused(t, m, "a company", chaintest.Company(chaintest.ClientCompany))
		c.Refused(t, m, "the gateway", chaintest.System("gateway"))
		c.Admitted(t, m, "custody", chaintest.System("custody"))
	})
	t.Run("a service appends only its own entities' events", func(t *testing.T) {
		log := eventsv1.NewEventLogServiceClient(c.Conn())
		settlement := staged(chaintest.ClientCompany, "S-1", 1, "settlement.created")
		_, err := log.AppendEvents(c.AsCaller(t, context.Background(), chaintest.System("custody")), &eventsv1.AppendEventsRequest{Events: []*eventsv1.StagedEvent{settlement}})
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("custody appending a settlement event = %v, want PermissionDenied", err)
		}
		forged := metadata.AppendToOutgoingContext(context.Background(), principal.MetadataKey, c.TokenOf(t, "custody", chaintest.System("interchange")))
		// The verifier refuses it: a system signs for itself only.
		if _, err := log.AppendEvents(forged, &eventsv1.AppendEventsRequest{Events: []*eventsv1.StagedEvent{settlement}}); status.Code(err) != codes.Unauthenticated {
			t.Errorf("custody's key speaking for interchange = %v, want Unauthenticated", err)
		}
		if _, err := log.AppendEvents(c.AsCaller(t, context.Background(), chaintest.System("interchange")), &eventsv1.AppendEventsRequest{Events: []*eventsv1.StagedEvent{settlement}}); err != nil {
			t.Errorf("interchange appending its settlement event = %v", err)
		}
	})
}

// suite is the events service through the chain, with its store for driving the sequencer
// (the loops of Register do not run on test Deps).
type suite struct {
	c      *chaintest.Chain
	st     *store.Store
	log    eventsv1.EventLogServiceClient
	events eventsv1.EventsServiceClient
}

func start(t *testing.T) *suite {
	t.Helper()
	s := &suite{}
	s.c = chaintest.Start(t, server.Policy("settlement-engine"), func(ctx context.Context, deps *internalapp.Deps, cfg app.Config) error {
		s.st = store.New(deps.DB, "test", cfg.SequencerLease, nil)
		return app.Register(ctx, deps, cfg)
	}, config())
	s.log = eventsv1.NewEventLogServiceClient(s.c.Conn())
	s.events = eventsv1.NewEventsServiceClient(s.c.Conn())
	return s
}

// staged is an event of company about settlement entity at version, as a relay sends it.
func staged(company, entity string, version int64, typ string) *eventsv1.StagedEvent {
	return &eventsv1.StagedEvent{Id: "evt_" + uuid.Must(uuid.NewV7()).String(), Type: typ, Timestamp: time.Now().UTC().Format(time.RFC3339Nano),
		CompanyId: company, EntityType: "settlement", EntityId: entity, EntityVersion: version,
		DataJson: fmt.Sprintf(`{"settlementId":%q,"amount":"10.5"}`, entity), Request: "req-1", SchemaVersion: 1}
}

// append hands evs over as interchange's relay and sequences them.
func (s *suite) append(t *testing.T, evs ...*eventsv1.StagedEvent) {
	t.Helper()
	ctx := s.c.AsCaller(t, context.Background(), chaintest.System("interchange"))
	if _, err := s.log.AppendEvents(ctx, &eventsv1.AppendEventsRequest{Events: evs}); err != nil {
		t.Fatalf("AppendEvents: %v", err)
	}
	if _, err := s.st.Sequence(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func (s *suite) search(t *testing.T, p principal.Principal, req *eventsv1.SearchEventsRequest) (*eventsv1.SearchEventsResponse, error) {
	t.Helper()
	return s.events.SearchEvents(s.c.AsCaller(t, context.Background(), p), req)
}

func code(err error) string {
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		if m, ok := d.(interface{ GetReason() string }); ok {
			return m.GetReason()
		}
	}
	return st.Code().String()
}

func TestSearchPagesInOrderAndOnlyTheCompanysOwn(t *testing.T) {
	t.Parallel()
	s := start(t)
	client, other := chaintest.User(chaintest.ClientCompany, principal.RoleViewer), chaintest.Company(chaintest.OperatorCompany)
	var sent []string
	for i := range 5 {
		e := staged(chaintest.ClientCompany, "S-1", int64(i+1), "settlement.updated")
		sent = append(sent, e.Id)
		s.append(t, e, staged(chaintest.OperatorCompany, fmt.Sprintf("S-%d@op", i), 1, "settlement.created"))
	}
	limit := int32(2)
	var got []string
	after := ""
	for range 10 {
		page, err := s.search(t, client, &eventsv1.SearchEventsRequest{After: after, Limit: &limit})
		if err != nil {
			t.Fatalf("SearchEvents: %v", err)
		}
		for _, e := range page.GetItems() {
			if e.GetCompanyId() != chaintest.ClientCompany {
				t.Fatalf("the client reads an event of %s", e.GetCompanyId())
			}
			if e.GetSequence() != int64(len(got)+1) {
				t.Fatalf("event %s at position %d, want %d", e.GetId(), e.GetSequence(), len(got)+1)
			}
			if e.GetData().GetFields()["amount"].GetStringValue() != "10.5" || e.GetRequest() != "req-1" {
				t.Fatalf("event data = %v request %q, want the staged JSON and request", e.GetData(), e.GetRequest())
			}
			got = append(got, e.GetId())
		}
		if page.GetNextToken() == after {
			break
		}
		after = page.GetNextToken()
	}
	if fmt.Sprint(got) != fmt.Sprint(sent) {
		t.Fatalf("paged events = %v, want %v", got, sent)
	}
	// The operator's token is refused to the client: tokens name a company.
	opPage, err := s.search(t, other, &eventsv1.SearchEventsRequest{})
	if err != nil || len(opPage.GetItems()) != 5 {
		t.Fatalf("operator search = %d events, %v; want its 5", len(opPage.GetItems()), err)
	}
	if _, err := s.search(t, client, &eventsv1.SearchEventsRequest{After: opPage.GetNextToken()}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("the client with the operator's token = %v, want InvalidArgument", err)
	}
	if _, err := s.search(t, client, &eventsv1.SearchEventsRequest{After: "not-a-token"}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a garbage token = %v, want InvalidArgument", err)
	}
	// A filter by type skips the rest but the token moves past them.
	page, err := s.search(t, client, &eventsv1.SearchEventsRequest{Types: []string{"settlement.created"}})
	if err != nil || len(page.GetItems()) != 0 {
		t.Fatalf("filtered search = %v, %v; want no events", page, err)
	}
	if page, err := s.search(t, client, &eventsv1.SearchEventsRequest{After: page.GetNextToken()}); err != nil || len(page.GetItems()) != 0 {
		t.Fatalf("search after the filtered token = %v, %v; want nothing left", page, err)
	}
}

func TestAppendRefusesAMalformedBatchWhole(t *testing.T) {
	t.Parallel()
	s := start(t)
	ctx := s.c.AsCaller(t, context.Background(), chaintest.System("interchange"))
	good := staged(chaintest.ClientCompany, "S-1", 1, "settlement.created")
	for name, bad := range map[string]func(*eventsv1.StagedEvent){
		"an id not ours":   func(e *eventsv1.StagedEvent) { e.Id = "x" },
		"an upper type":    func(e *eventsv1.StagedEvent) { e.Type = "Settlement.Created" },
		"no company":       func(e *eventsv1.StagedEvent) { e.CompanyId = "" },
		"version 0":        func(e *eventsv1.StagedEvent) { e.EntityVersion = 0 },
		"data not object":  func(e *eventsv1.StagedEvent) { e.DataJson = "[1]" },
		"a bad timestamp":  func(e *eventsv1.StagedEvent) { e.Timestamp = "yesterday" },
		"data over 20 KiB": func(e *eventsv1.StagedEvent) { e.DataJson = `{"x":"` + string(make([]byte, 21<<10)) + `"}` },
	} {
		e := staged(chaintest.ClientCompany, "S-2", 1, "settlement.created")
		bad(e)
		if _, err := s.log.AppendEvents(ctx, &eventsv1.AppendEventsRequest{Events: []*eventsv1.StagedEvent{good, e}}); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: AppendEvents = %v, want InvalidArgument", name, err)
		}
	}
	if _, err := s.st.Sequence(context.Background()); err != nil {
		t.Fatal(err)
	}
	page, err := s.search(t, chaintest.Company(chaintest.ClientCompany), &eventsv1.SearchEventsRequest{})
	if err != nil || len(page.GetItems()) != 0 {
		t.Fatalf("after refused batches the log holds %d events, %v; want none", len(page.GetItems()), err)
	}
}

func TestWatchResumesFromATokenWithHeartbeats(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.append(t, staged(chaintest.ClientCompany, "S-1", 1, "settlement.created"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	first, err := s.search(t, chaintest.Company(chaintest.ClientCompany), &eventsv1.SearchEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := s.events.WatchEvents(s.c.AsCaller(t, ctx, chaintest.System("settlement-engine")),
		&eventsv1.WatchEventsRequest{ResumeToken: first.GetNextToken(), CompanyId: chaintest.ClientCompany})
	if err != nil {
		t.Fatal(err)
	}
	// Nothing new: a heartbeat carrying the same position.
	msg, err := stream.Recv()
	if err != nil || msg.GetHeartbeat() == nil || msg.GetResumeToken() != first.GetNextToken() {
		t.Fatalf("first message = %v, %v; want a heartbeat with the resume token", msg, err)
	}
	s.append(t, staged(chaintest.ClientCompany, "S-1", 2, "settlement.settled"), staged(chaintest.OperatorCompany, "S-1@op", 1, "settlement.settled"))
	var ev *eventsv1.WatchEventsResponse
	for ev == nil || ev.GetEvent() == nil {
		if ev, err = stream.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	if ev.GetEvent().GetCompanyId() != chaintest.ClientCompany || ev.GetEvent().GetEntity().GetVersion() != 2 || ev.GetEvent().GetSequence() != 2 {
		t.Fatalf("streamed %v, want the client's event at position 2", ev.GetEvent())
	}
	cancel()
	if _, err := stream.Recv(); err != nil && err != io.EOF && status.Code(err) != codes.Canceled {
		t.Fatalf("after cancel: %v", err)
	}
	// A company's caller may not watch another company.
	other, err := s.events.WatchEvents(s.c.AsCaller(t, context.Background(), chaintest.Company(chaintest.OperatorCompany)), &eventsv1.WatchEventsRequest{CompanyId: chaintest.ClientCompany})
	if err == nil {
		_, err = other.Recv()
	}
	if status.Code(err) != codes.NotFound {
		t.Fatalf("watching another company = %v, want NotFound", err)
	}
	// An internal system not named in WATCH_SYSTEMS may not watch at all.
	relay, err := s.events.WatchEvents(s.c.AsCaller(t, context.Background(), chaintest.System("trading")), &eventsv1.WatchEventsRequest{CompanyId: chaintest.ClientCompany})
	if err == nil {
		_, err = relay.Recv()
	}
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("trading watching = %v, want PermissionDenied", err)
	}
}

func TestATokenOlderThanRetentionIsRefusedNotSkipped(t *testing.T) {
	t.Parallel()
	s := start(t)
	client := chaintest.Company(chaintest.ClientCompany)
	s.append(t, staged(chaintest.ClientCompany, "S-1", 1, "settlement.created"))
	start, err := s.search(t, client, &eventsv1.SearchEventsRequest{Limit: ptr(int32(1))})
	if err != nil {
		t.Fatal(err)
	}
	s.append(t, staged(chaintest.ClientCompany, "S-1", 2, "settlement.settled"))
	s.append(t, staged(chaintest.ClientCompany, "S-1", 3, "settlement.closed"))
	// Retention deletes every position: a reader at 1 would miss 2 and 3.
	if _, err := s.st.Prune(context.Background(), chaintest.ClientCompany, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	_, err = s.search(t, client, &eventsv1.SearchEventsRequest{After: start.GetNextToken()})
	if status.Code(err) != codes.OutOfRange || code(err) != apperr.CodeLength {
		t.Fatalf("search from a pruned position = %v (%s), want OutOfRange ER-103", err, code(err))
	}
	stream, err := s.events.WatchEvents(s.c.AsCaller(t, context.Background(), client), &eventsv1.WatchEventsRequest{ResumeToken: start.GetNextToken()})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.OutOfRange {
		t.Fatalf("watch from a pruned position = %v, want OutOfRange", err)
	}
	// Listing again from the start works.
	if page, err := s.search(t, client, &eventsv1.SearchEventsRequest{}); err != nil {
		t.Fatalf("search from the start = %v", err)
	} else if len(page.GetItems()) != 0 {
		t.Fatalf("after pruning everything the search lists %d events", len(page.GetItems()))
	}
}

func ptr[T any](v T) *T { return &v }
