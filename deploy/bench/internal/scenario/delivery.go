package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/deploy/bench/internal/data"
	"github.com/zcustody/suite/platform/apitime"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
)

// DeliveryType is the event the delivery scenario counts: each write (a service request
// created through the service desk's gRPC API) causes one.
const DeliveryType = "service_request.created"

// Bounds of the delivery scenario.
const (
	deliveryWriters  = 16               // the capacity phase's closed loop
	deliveryDrain    = 90 * time.Second // the longest wait for a phase's last delivery
	deliveryQuiet    = 2 * time.Second  // no delivery for this long: the backlog is through
	deliveryBacklog  = 5 * time.Minute  // the longest wait for the earlier scenarios' events
	deliveryInFlight = 256              // writes of the latency phase in flight at most
)

// DeliveryResult is the delivery scenario's outcome: how many events per second travel from
// a state change to a subscriber's endpoint when writes come as fast as they can (the
// capacity), and how long each takes at half that rate.
type DeliveryResult struct {
	// Capacity is events per second from the first write to the last delivery, with
	// deliveryWriters writing without pause for the phase; CapacityEvents how many.
	Capacity       float64
	CapacityEvents int
	// Rate is the latency phase's offered rate (half the capacity), Events how many it wrote
	// and Delivered how many reached the receiver before the drain limit.
	Rate              float64
	Events, Delivered int
	// Latencies from the change (the event's timestamp, in milliseconds) to its arrival.
	P50, P99, Max time.Duration
	// Duplicates are deliveries of an event id received before (a retry or a second
	// dispatcher): at-least-once delivery allows them, a healthy run has none.
	Duplicates int
	Failed     int // writes that failed
}

func (r DeliveryResult) String() string {
	return fmt.Sprintf("delivery: capacity %.1f events/s (%d events); at %.1f events/s: %d of %d delivered, p50 %s, p99 %s, max %s, %d duplicates, %d failed writes",
		r.Capacity, r.CapacityEvents, r.Rate, r.Delivered, r.Events, r.P50.Round(time.Millisecond), r.P99.Round(time.Millisecond),
		r.Max.Round(time.Millisecond), r.Duplicates, r.Failed)
}

// receiver is the subscriber's endpoint: it answers 204 to every delivery and notes when
// each event arrived.
type receiver struct {
	mu      sync.Mutex
	arrived map[string]arrival // by entity id (the request id)
	seen    map[string]bool    // event ids
	dups    int
	last    time.Time
	server  *http.Server
	url     string
}

type arrival struct {
	at, changed time.Time
}

func newReceiver() (*receiver, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("delivery receiver: %w", err)
	}
	r := &receiver{arrived: map[string]arrival{}, seen: map[string]bool{}, url: "http://" + lis.Addr().String() + "/hook"}
	r.server = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.server.Serve(lis) }()
	return r, nil
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	var e struct {
		ID        string `json:"id"`
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		Entity    struct {
			ID string `json:"id"`
		} `json:"entity"`
	}
	if err != nil || json.Unmarshal(body, &e) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	changed, _ := apitime.Parse(e.Timestamp)
	r.mu.Lock()
	if r.seen[e.ID] {
		r.dups++
	}
	r.seen[e.ID], r.last = true, at
	if _, ok := r.arrived[e.Entity.ID]; !ok && e.Type == DeliveryType {
		r.arrived[e.Entity.ID] = arrival{at: at, changed: changed}
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) close() { _ = r.server.Close() }

// quietFor reports whether nothing arrived for d.
func (r *receiver) quietFor(d time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Since(r.last) >= d
}

// arrivals returns the arrivals of ids received so far.
func (r *receiver) arrivals(ids []string) []arrival {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]arrival, 0, len(ids))
	for _, id := range ids {
		if a, ok := r.arrived[id]; ok {
			out = append(out, a)
		}
	}
	return out
}

func (r *receiver) duplicates() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dups
}

// Deliveries measures delivery latency, state change → subscriber, through every part of
// the path: the service desk's write stages the event in its outbox, its relay hands it to
// the events service, the sequencer places it in the company's log, and the dispatcher (its
// own process) signs it and POSTs it to a receiver in this process. A subscription of the
// bench's company to DeliveryType is created by its maker and approved by its checker. The
// capacity phase writes without pause for d; the latency phase writes at half the capacity
// for d, each write at its time, and takes each event's latency from its timestamp (the
// change, in milliseconds) to its arrival.
func (e *Env) Deliveries(ctx context.Context, eventsAddr string, d time.Duration, say func(string, ...any)) (DeliveryResult, error) {
	rcv, err := newReceiver()
	if err != nil {
		return DeliveryResult{}, err
	}
	defer rcv.close()
	conn, err := e.dial(eventsAddr)
	if err != nil {
		return DeliveryResult{}, err
	}
	if err := e.subscribe(ctx, eventsv1.NewWebhookServiceClient(conn), rcv.url); err != nil {
		return DeliveryResult{}, err
	}
	// The writes of the scenarios before leave events on their way: let them through first.
	if err := waitFor(ctx, deliveryBacklog, func() bool { return e.pipelineIdle(ctx) && rcv.quietFor(deliveryQuiet) }); err != nil {
		return DeliveryResult{}, fmt.Errorf("delivery: the earlier scenarios' events are still on their way after %s", deliveryBacklog)
	}
	write, err := e.directCreate()
	if err != nil {
		return DeliveryResult{}, err
	}
	var res DeliveryResult
	start := time.Now()
	ids, failed := closedWrites(ctx, write, d)
	res.Failed += failed
	if err := waitFor(ctx, deliveryDrain, func() bool { return len(rcv.arrivals(ids)) == len(ids) }); err != nil {
		return res, fmt.Errorf("delivery: %d of the capacity phase's %d events arrived in %s", len(rcv.arrivals(ids)), len(ids), deliveryDrain)
	}
	last := start
	for _, a := range rcv.arrivals(ids) {
		if a.at.After(last) {
			last = a.at
		}
	}
	res.CapacityEvents = len(ids)
	res.Capacity = float64(len(ids)) / last.Sub(start).Seconds()
	say("delivery: capacity %.1f events/s (%d events written by %d writers in %s, the last delivered after %s)",
		res.Capacity, len(ids), deliveryWriters, d, last.Sub(start).Round(time.Millisecond))

	res.Rate = res.Capacity / 2
	ids, failed = pacedWrites(ctx, write, res.Rate, d)
	res.Failed += failed
	res.Events = len(ids)
	_ = waitFor(ctx, deliveryDrain, func() bool { return len(rcv.arrivals(ids)) == len(ids) })
	arrived := rcv.arrivals(ids)
	res.Delivered = len(arrived)
	lat := make([]time.Duration, 0, len(arrived))
	for _, a := range arrived {
		lat = append(lat, a.at.Sub(a.changed))
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		res.P50, res.P99, res.Max = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)], lat[len(lat)-1]
	}
	res.Duplicates = rcv.duplicates()
	return res, nil
}

// pipelineIdle reports whether no event of the service desk waits in an outbox or in the
// events service's inbox.
func (e *Env) pipelineIdle(ctx context.Context) bool {
	staged, err := e.mongo.Database("servicedesk").Collection("requests").CountDocuments(ctx, bson.D{{Key: "hasPending", Value: true}})
	if err != nil || staged > 0 {
		return false
	}
	arriving, err := e.mongo.Database("events").Collection("inbox").CountDocuments(ctx, bson.D{})
	return err == nil && arriving == 0
}

// subscribe has the bench company's maker subscribe url to DeliveryType and its checker
// approve it.
func (e *Env) subscribe(ctx context.Context, hooks eventsv1.WebhookServiceClient, url string) error {
	mctx, err := e.tokens[data.Maker].outgoing(ctx)
	if err != nil {
		return err
	}
	sub, err := hooks.CreateSubscription(mctx, &eventsv1.CreateSubscriptionRequest{Url: url, Types: []string{DeliveryType}})
	if err != nil {
		return fmt.Errorf("delivery: subscribe: %w", err)
	}
	cctx, err := e.tokens[data.Checker].outgoing(ctx)
	if err != nil {
		return err
	}
	approved, err := hooks.ApproveSubscriptionChange(cctx, &eventsv1.ApproveSubscriptionChangeRequest{SubscriptionId: sub.GetSubscription().GetSubscriptionId(),
		ProposedAt: sub.GetSubscription().GetPending().GetProposedAt()})
	if err != nil {
		return fmt.Errorf("delivery: approve the subscription: %w", err)
	}
	if s := approved.GetSubscription().GetStatus(); s != "ACTIVE" {
		return fmt.Errorf("delivery: the approved subscription is %s", s)
	}
	return nil
}

// closedWrites runs deliveryWriters writers without pause for d and returns the ids written.
func closedWrites(ctx context.Context, write func(context.Context) (string, error), d time.Duration) ([]string, int) {
	var mu sync.Mutex
	var ids []string
	failed := 0
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for range deliveryWriters {
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				id, err := write(ctx)
				mu.Lock()
				if err != nil {
					failed++
				} else {
					ids = append(ids, id)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return ids, failed
}

// pacedWrites starts one write every 1/rate for d (each in its own goroutine, at most
// deliveryInFlight at once) and returns the ids written.
func pacedWrites(ctx context.Context, write func(context.Context) (string, error), rate float64, d time.Duration) ([]string, int) {
	var mu sync.Mutex
	var ids []string
	failed := 0
	slots := make(chan struct{}, deliveryInFlight)
	interval := time.Duration(float64(time.Second) / max(rate, 0.1))
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; ctx.Err() == nil; i++ {
		at := start.Add(time.Duration(i) * interval)
		if at.Sub(start) >= d {
			break
		}
		time.Sleep(time.Until(at))
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			id, err := write(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				return
			}
			ids = append(ids, id)
		})
	}
	wg.Wait()
	return ids, failed
}

// waitFor polls cond every 50 ms for up to limit.
func waitFor(ctx context.Context, limit time.Duration, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}
