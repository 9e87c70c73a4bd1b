// Package server is the events service's gRPC edge: the relays' intake, the company's event
// search and the stream for internal systems.
package server

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/apperr"
	pevents "github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/principal"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	"github.com/zcustody/suite/services/events"
	"github.com/zcustody/suite/services/events/store"
	"github.com/zcustody/suite/services/internal/outbox"
	"github.com/zcustody/suite/services/internal/validation"
)

// Log is what the handlers need from the store.
type Log interface {
	Append(ctx context.Context, evs []pevents.Event) (int, error)
	Head(ctx context.Context, company string) (store.Head, error)
	Read(ctx context.Context, q store.Query) ([]store.Logged, bool, error)
}

// MaxAppend bounds the events of one AppendEvents call: a relay's chunk.
const MaxAppend = outbox.MaxAppend

// DefaultLimit is a search page's size when the request names none.
const DefaultLimit = 100

// Options tune the stream.
type Options struct {
	// Poll is how often a stream looks for new events; Heartbeat how long it stays silent at
	// most.
	Poll, Heartbeat time.Duration
	Now             func() time.Time
	// Appended, if set, is called after the intake took events (the sequencer's wake).
	Appended func()
}

// Server implements eventsv1.EventsServiceServer and eventsv1.EventLogServiceServer.
type Server struct {
	eventsv1.UnimplementedEventsServiceServer
	eventsv1.UnimplementedEventLogServiceServer
	log  Log
	opts Options
}

var (
	_ eventsv1.EventsServiceServer   = (*Server)(nil)
	_ eventsv1.EventLogServiceServer = (*Server)(nil)
)

// New returns the server.
func New(log Log, opts Options) *Server {
	if opts.Poll <= 0 {
		opts.Poll = 250 * time.Millisecond
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 10 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Server{log: log, opts: opts}
}

var (
	typePattern = regexp.MustCompile(`^[a-z0-9_]+(\.[a-z0-9_]+)+$`)
	idPattern   = regexp.MustCompile(`^evt_[0-9a-f-]{36}$`)
)

// AppendEvents keeps the events a relay hands over (the policy admits the suite's services
// only). A malformed event refuses the whole call, so a relay never half-delivers a batch.
func (s *Server) AppendEvents(ctx context.Context, req *eventsv1.AppendEventsRequest) (*eventsv1.AppendEventsResponse, error) {
	if len(req.GetEvents()) > MaxAppend {
		return nil, apperr.Invalid(apperr.CodeLength, "events", "at most %d events per call", MaxAppend)
	}
	// The verifier admits a system's token only from that system's own key, so System names
	// the service that signed.
	caller, _ := principal.FromContext(ctx)
	owned := EntityOwners[caller.System]
	evs := make([]pevents.Event, 0, len(req.GetEvents()))
	for _, e := range req.GetEvents() {
		ev, err := fromStaged(e)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(owned, ev.Entity.Type) {
			return nil, apperr.ForbiddenField("entity_type", "%s does not own %s entities", caller.System, ev.Entity.Type)
		}
		evs = append(evs, ev)
	}
	n, err := s.log.Append(ctx, evs)
	if err != nil {
		return nil, err
	}
	if n > 0 && s.opts.Appended != nil {
		s.opts.Appended()
	}
	return &eventsv1.AppendEventsResponse{Accepted: int32(n)}, nil
}

func fromStaged(e *eventsv1.StagedEvent) (pevents.Event, error) {
	bad := func(field, format string, args ...any) (pevents.Event, error) {
		return pevents.Event{}, apperr.Invalid(apperr.CodeFormat, field, format, args...)
	}
	switch {
	case !idPattern.MatchString(e.GetId()):
		return bad("id", "event id %q is not evt_ and a UUID", e.GetId())
	case !typePattern.MatchString(e.GetType()) || len(e.GetType()) > 128:
		return bad("type", "event type %q: want lowercase dotted words", e.GetType())
	case e.GetCompanyId() == "" || len(e.GetCompanyId()) > 64:
		return bad("company_id", "event %s needs a company", e.GetId())
	case e.GetEntityType() == "" || e.GetEntityId() == "" || len(e.GetEntityType()) > 64 || len(e.GetEntityId()) > 256:
		return bad("entity", "event %s needs an entity type and id", e.GetId())
	case e.GetEntityVersion() < 1:
		return bad("entity_version", "event %s: entity versions start at 1", e.GetId())
	case len(e.GetDataJson()) > outbox.MaxDataBytes:
		return bad("data_json", "event %s data is over %d bytes", e.GetId(), outbox.MaxDataBytes)
	case len(e.GetRequest()) > 128:
		return bad("request", "event %s request id is too long", e.GetId())
	}
	at, err := time.Parse(time.RFC3339Nano, e.GetTimestamp())
	if err != nil {
		return bad("timestamp", "event %s timestamp %q is not RFC 3339", e.GetId(), e.GetTimestamp())
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(e.GetDataJson()), &obj); err != nil || obj == nil {
		return bad("data_json", "event %s data is not a JSON object", e.GetId())
	}
	return pevents.Event{ID: e.GetId(), Type: e.GetType(), Timestamp: at.UTC(), CompanyID: e.GetCompanyId(),
		Entity: pevents.Entity{Type: e.GetEntityType(), ID: e.GetEntityId(), Version: e.GetEntityVersion()},
		Data:   json.RawMessage(e.GetDataJson()), RequestID: e.GetRequest(), SchemaVersion: int(e.GetSchemaVersion())}, nil
}

// SearchEvents lists the caller's company's events after a token, oldest first.
func (s *Server) SearchEvents(ctx context.Context, req *eventsv1.SearchEventsRequest) (*eventsv1.SearchEventsResponse, error) {
	p, err := principal.Company(ctx)
	if err != nil {
		return nil, err
	}
	if req.GetEntityId() != "" && req.GetEntityType() == "" {
		return nil, apperr.Missing("entityType")
	}
	head, err := s.log.Head(ctx, p.CompanyID)
	if err != nil {
		return nil, err
	}
	pos, err := position(head, "after", req.GetAfter(), p.CompanyID, head.Floor-1)
	if err != nil {
		return nil, err
	}
	limit := DefaultLimit
	if req.Limit != nil {
		limit = int(req.GetLimit())
	}
	q := store.Query{CompanyID: p.CompanyID, After: pos, Below: head.Next, Types: req.GetTypes(), EntityType: req.GetEntityType(), EntityID: req.GetEntityId(), Limit: limit}
	page, more, err := s.log.Read(ctx, q)
	if err != nil {
		return nil, err
	}
	resp := &eventsv1.SearchEventsResponse{HasMore: more, Items: make([]*eventsv1.Event, 0, len(page))}
	for _, e := range page {
		pe, err := toProto(e)
		if err != nil {
			return nil, err
		}
		resp.Items = append(resp.Items, pe)
		pos = e.Seq
	}
	if !more && filtered(q) {
		// Everything below the watermark was considered: the events left out by the
		// filters need not be looked at again.
		pos = max(pos, head.Next-1)
	}
	resp.NextToken = events.Token(p.CompanyID, pos)
	return resp, nil
}

func filtered(q store.Query) bool { return len(q.Types) > 0 || q.EntityType != "" }

// position reads a client's token against the company's head: empty is start, a token
// before the oldest event kept is too old, and one beyond the watermark was never issued.
func position(head store.Head, field, token, company string, start int64) (int64, error) {
	if token == "" {
		return start, nil
	}
	pos, err := events.ParseToken(field, token, company)
	if err != nil {
		return 0, err
	}
	if pos < head.Floor-1 {
		return 0, events.TooOld(field)
	}
	if pos > head.Next-1 {
		return 0, apperr.Invalid(apperr.CodeFormat, field, "%s is not a token this API issued", field)
	}
	return pos, nil
}

func toProto(e store.Logged) (*eventsv1.Event, error) {
	var data map[string]any
	if err := json.Unmarshal(e.Data, &data); err != nil {
		return nil, apperr.ToStatus(err)
	}
	st, err := structpb.NewStruct(data)
	if err != nil {
		return nil, apperr.ToStatus(err)
	}
	return &eventsv1.Event{Id: e.ID, Type: e.Type, Timestamp: apitime.Format(e.Timestamp), CompanyId: e.CompanyID,
		Entity: &eventsv1.Entity{Type: e.Entity.Type, Id: e.Entity.ID, Version: e.Entity.Version},
		Data:   st, Request: e.RequestID, SchemaVersion: int32(e.SchemaVersion), Sequence: e.Seq}, nil
}

// watchPage is how many events a stream reads at a time.
const watchPage = 100

// WatchEvents streams a company's events from a resume token (empty: from now), each with
// the token that resumes after it, and a heartbeat with the latest token while nothing
// happens. It reads only below the watermark, so an event committed late is never skipped.
func (s *Server) WatchEvents(req *eventsv1.WatchEventsRequest, stream grpc.ServerStreamingServer[eventsv1.WatchEventsResponse]) error {
	ctx := stream.Context()
	if err := validation.Check(req); err != nil {
		return err
	}
	company, err := watchedCompany(ctx, req.GetCompanyId())
	if err != nil {
		return err
	}
	head, err := s.log.Head(ctx, company)
	if err != nil {
		return err
	}
	pos, err := position(head, "resumeToken", req.GetResumeToken(), company, head.Next-1)
	if err != nil {
		return err
	}
	q := store.Query{CompanyID: company, Types: req.GetTypes(), Limit: watchPage}
	quietSince := s.opts.Now()
	for {
		head, err := s.log.Head(ctx, company)
		if err != nil {
			return err
		}
		if pos < head.Floor-1 {
			// The stream fell so far behind that retention deleted what it had not read.
			return events.TooOld("resumeToken")
		}
		q.After, q.Below = pos, head.Next
		page, more, err := s.log.Read(ctx, q)
		if err != nil {
			return err
		}
		for _, e := range page {
			pe, err := toProto(e)
			if err != nil {
				return err
			}
			if err := stream.Send(&eventsv1.WatchEventsResponse{Kind: &eventsv1.WatchEventsResponse_Event{Event: pe}, ResumeToken: events.Token(company, e.Seq)}); err != nil {
				return err
			}
			pos = e.Seq
			quietSince = s.opts.Now()
		}
		if more {
			continue
		}
		pos = max(pos, head.Next-1)
		if s.opts.Now().Sub(quietSince) >= s.opts.Heartbeat {
			beat := &eventsv1.WatchEventsResponse{Kind: &eventsv1.WatchEventsResponse_Heartbeat{Heartbeat: &eventsv1.Heartbeat{Timestamp: apitime.Format(s.opts.Now())}},
				ResumeToken: events.Token(company, pos)}
			if err := stream.Send(beat); err != nil {
				return err
			}
			quietSince = s.opts.Now()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(s.opts.Poll):
		}
	}
}

// watchedCompany is the company a stream reads: a company's caller reads its own (naming
// another is refused), an internal system names one.
func watchedCompany(ctx context.Context, named string) (string, error) {
	p, ok := principal.FromContext(ctx)
	if !ok {
		return "", apperr.Unauthenticated("missing caller credentials")
	}
	if p.Kind == principal.KindSystem && p.CompanyID == "" {
		if named == "" {
			return "", apperr.Missing("companyId")
		}
		return named, nil
	}
	if p.CompanyID == "" {
		return "", apperr.Forbidden("this operation needs a company caller")
	}
	if named != "" && named != p.CompanyID {
		return "", apperr.NotFound("companyId", named)
	}
	return p.CompanyID, nil
}
