// Package dispatch is the webhook dispatcher: it makes one delivery per (subscription,
// event) from each company's log, sends the due ones signed (Standard Webhooks) in order per
// entity under a lease, retries them on the schedule, records every attempt, and suspends a
// subscription after a 410 Gone or a sustained run of nothing but failures.
package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/webhook"
	"github.com/zcustody/suite/services/events"
	"github.com/zcustody/suite/services/events/store"
	"github.com/zcustody/suite/services/internal/wake"
)

// Defaults of Options.
const (
	DefaultSuspendAfter = 5 * 24 * time.Hour
	DefaultLease        = 30 * time.Second
	DefaultRetention    = 30 * 24 * time.Hour
	DefaultBatch        = 100
	DefaultWorkers      = 8
)

// Options configure a Dispatcher.
type Options struct {
	// Owner names this process in the delivery leases (unique per process).
	Owner    string
	Keyring  *webhook.Keyring
	Client   *webhook.Client
	Schedule webhook.Schedule
	// SuspendAfter is how long a run of nothing but failures lasts before the subscription is
	// suspended.
	SuspendAfter time.Duration
	// Lease is how long a claimed delivery stays this process's without a renewal; it is
	// renewed every third of it while the request runs.
	Lease time.Duration
	// Retention is how long attempts and finished deliveries are kept.
	Retention time.Duration
	// Batch bounds the events fanned out per subscription per pass; Workers the requests in
	// flight at once, PerSubscription those of one subscription (default: a quarter of
	// Workers, at least one) and PerCompany those of one company (default: half of Workers,
	// at least PerSubscription), so that slow endpoints never hold all the workers.
	Batch, Workers, PerSubscription, PerCompany int
	Now                                         func() time.Time
	Logger                                      *slog.Logger
}

// Dispatcher runs the passes; several may run over one database (replicas).
type Dispatcher struct {
	st   *store.Store
	opts Options

	mu         sync.Mutex
	inFlight   map[string]string // delivery id -> its entityKey
	perSub     map[string]int    // requests in flight per subscription
	perCompany map[string]int    // and per company
	turn       int               // rotates who goes first among equals
	tried      int               // attempts made since the last count
	errs       []error           // of the requests since the last Dispatch or Wait
	running    sync.WaitGroup
	freed      *wake.Signal
}

// New returns a dispatcher over st.
func New(st *store.Store, opts Options) *Dispatcher {
	if opts.SuspendAfter <= 0 {
		opts.SuspendAfter = DefaultSuspendAfter
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.Batch <= 0 {
		opts.Batch = DefaultBatch
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.PerSubscription <= 0 {
		opts.PerSubscription = max(1, opts.Workers/4)
	}
	if opts.PerCompany <= 0 {
		opts.PerCompany = max(opts.PerSubscription, opts.Workers/2)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if len(opts.Schedule.Delays) == 0 {
		opts.Schedule = webhook.DefaultSchedule
	}
	if opts.Client == nil {
		opts.Client = webhook.NewClient(webhook.ClientConfig{})
	}
	return &Dispatcher{st: st, opts: opts, inFlight: map[string]string{}, perSub: map[string]int{}, perCompany: map[string]int{},
		freed: wake.New()}
}

// maxKeptErrors bounds the request errors kept for Wait (each is logged as it happens).
const maxKeptErrors = 100

func (d *Dispatcher) now() time.Time { return d.opts.Now().UTC() }

// Dispatch runs one fan-out and starts the due deliveries that fit in the free workers; it
// does not wait for the requests, so a slow endpoint holds only its own workers, never the
// next pass. It returns how many deliveries it made and how many attempts ended since the
// last call (a start that was held or lost its claim is no work: an idle poller backs off).
// An error is logged by the caller and the next pass tries again (a database gone away never
// stops the dispatcher); a request's own error is logged when it ends.
func (d *Dispatcher) Dispatch(ctx context.Context) (int, error) {
	d.mu.Lock()
	d.errs = nil // logged already; only Pass and Deliver, which wait, return them
	d.mu.Unlock()
	// One read of the delivering subscriptions serves both halves of the pass.
	subs, err := d.st.DeliveringSubscriptions(ctx)
	if err != nil {
		return 0, err
	}
	made, ferr := d.fanOut(ctx, subs)
	_, derr := d.start(ctx, subs)
	return made + d.takeTried(), errors.Join(ferr, derr)
}

// Pass is Dispatch that waits for every request in flight and returns their errors too.
func (d *Dispatcher) Pass(ctx context.Context) (int, error) {
	n, err := d.Dispatch(ctx)
	err = errors.Join(err, d.Wait())
	return n + d.takeTried(), err
}

// takeTried returns the attempts made since the last call.
func (d *Dispatcher) takeTried() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.tried
	d.tried = 0
	return n
}

// Wait waits for the requests in flight and returns the errors of those that ended since the
// last Wait.
func (d *Dispatcher) Wait() error {
	d.running.Wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	err := errors.Join(d.errs...)
	d.errs = nil
	return err
}

// Freed returns a channel closed the next time a request ends (a worker is free): the poller
// starts the next due delivery at once instead of after its idle wait.
func (d *Dispatcher) Freed() <-chan struct{} { return d.freed.C() }

// FanOut makes the deliveries of the events logged after each delivering subscription's
// cursor (up to the watermark, at most Batch per subscription) and moves the cursor past
// them. It returns how many deliveries it made.
func (d *Dispatcher) FanOut(ctx context.Context) (int, error) {
	subs, err := d.st.DeliveringSubscriptions(ctx)
	if err != nil {
		return 0, err
	}
	return d.fanOut(ctx, subs)
}

func (d *Dispatcher) fanOut(ctx context.Context, subs []events.Subscription) (int, error) {
	made := 0
	var errs []error
	heads := map[string]store.Head{}
	for _, sub := range subs {
		head, ok := heads[sub.CompanyID]
		if !ok {
			var err error
			if head, err = d.st.Head(ctx, sub.CompanyID); err != nil {
				errs = append(errs, err)
				continue
			}
			heads[sub.CompanyID] = head
		}
		if sub.Cursor < head.Floor-1 {
			// Retention deleted positions this subscription never got (it was switched off or
			// suspended for longer than the log keeps events): say so on the subscription
			// instead of skipping them silently, and go on from what is kept.
			moved, err := d.st.SkipPruned(ctx, sub.ID, sub.Cursor, head.Floor, d.now())
			if err != nil || !moved {
				errs = append(errs, err)
				continue
			}
			d.opts.Logger.Warn("webhook subscription missed events deleted by retention", "subscription", sub.ID,
				"from", sub.Cursor+1, "to", head.Floor-1)
			sub.Cursor = head.Floor - 1
		}
		if sub.Cursor >= head.Next-1 {
			continue
		}
		logged, more, err := d.st.Read(ctx, store.Query{CompanyID: sub.CompanyID, After: sub.Cursor, Below: head.Next, Types: sub.Types, Limit: d.opts.Batch})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n, err := d.st.CreateDeliveries(ctx, sub, logged, d.now())
		made += n
		if err != nil {
			errs = append(errs, err)
			continue
		}
		to := head.Next - 1
		if more {
			to = logged[len(logged)-1].Seq
		}
		moved, err := d.st.AdvanceCursor(ctx, sub.ID, sub.Cursor, to)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !moved {
			// Another replica moved the cursor first (its deliveries are these same ones), or
			// the subscription is being deleted: then the deletion may have dropped its
			// waiting deliveries before these were made, and these would never be sent.
			if err := d.st.DropIfDeleting(ctx, sub.ID, logged); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return made, errors.Join(errs...)
}

// Deliver starts the due deliveries of the delivering subscriptions that fit in the free
// workers (fairShare), waits for every request in flight and returns the attempts made.
func (d *Dispatcher) Deliver(ctx context.Context) (int, error) {
	subs, err := d.st.DeliveringSubscriptions(ctx)
	if err != nil {
		return 0, err
	}
	_, err = d.start(ctx, subs)
	err = errors.Join(err, d.Wait())
	return d.takeTried(), err
}

// start picks due deliveries for the free workers, within each subscription's and each
// company's free share, and sends each in its own goroutine.
func (d *Dispatcher) start(ctx context.Context, subs []events.Subscription) (int, error) {
	d.mu.Lock()
	free := d.opts.Workers - len(d.inFlight)
	l := load{subRoom: make(map[string]int, len(subs)), companyRoom: map[string]int{}, busy: make(map[string]bool, len(d.inFlight)),
		perSub: maps.Clone(d.perSub), perCompany: maps.Clone(d.perCompany), turn: d.turn}
	d.turn++
	for _, sub := range subs {
		l.subRoom[sub.ID] = d.opts.PerSubscription - d.perSub[sub.ID]
		l.companyRoom[sub.CompanyID] = d.opts.PerCompany - d.perCompany[sub.CompanyID]
	}
	for _, k := range d.inFlight {
		l.busy[k] = true
	}
	d.mu.Unlock()
	if free <= 0 {
		return 0, nil
	}
	due, err := d.fairShare(ctx, subs, l, free)
	if err != nil || len(due) == 0 {
		return 0, err
	}
	bySub := make(map[string]events.Subscription, len(subs))
	for _, sub := range subs {
		bySub[sub.ID] = sub
	}
	started := 0
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, dl := range due {
		if ctx.Err() != nil || len(d.inFlight) >= d.opts.Workers {
			break
		}
		if _, ok := d.inFlight[dl.ID]; ok || d.perSub[dl.SubscriptionID] >= d.opts.PerSubscription ||
			d.perCompany[dl.CompanyID] >= d.opts.PerCompany {
			continue
		}
		d.inFlight[dl.ID] = entityKey(dl)
		d.perSub[dl.SubscriptionID]++
		d.perCompany[dl.CompanyID]++
		d.running.Add(1)
		started++
		go d.run(ctx, bySub[dl.SubscriptionID], dl)
	}
	return started, nil
}

// run sends dl and frees its worker.
func (d *Dispatcher) run(ctx context.Context, sub events.Subscription, dl events.Delivery) {
	defer d.freed.Notify()
	defer d.running.Done()
	tried, _, err := d.deliver(ctx, sub, dl)
	if err != nil && ctx.Err() == nil {
		d.opts.Logger.Warn("webhook delivery", "delivery", dl.ID, "error", err.Error())
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.inFlight, dl.ID)
	if d.perSub[dl.SubscriptionID]--; d.perSub[dl.SubscriptionID] <= 0 {
		delete(d.perSub, dl.SubscriptionID)
	}
	if d.perCompany[dl.CompanyID]--; d.perCompany[dl.CompanyID] <= 0 {
		delete(d.perCompany, dl.CompanyID)
	}
	if tried {
		d.tried++
	}
	if err != nil && len(d.errs) < maxKeptErrors {
		d.errs = append(d.errs, err)
	}
}

// load is what start knows of the requests in flight when it picks: the free room of each
// subscription and company, the entities being sent, and who has how many requests.
type load struct {
	subRoom, companyRoom map[string]int
	busy                 map[string]bool
	perSub, perCompany   map[string]int
	turn                 int
}

// fairShare picks up to limit deliveries so that no company, and no subscription of a
// company, takes the free workers from the others. Each subscription offers at most its room
// (its due deliveries in log order, one per entity and none of an entity being sent: a later
// event of an entity would only be held), each company at most its room; the companies with
// the fewest requests in flight go first, then the subscriptions with the fewest, taken
// round-robin, company by company, then subscription by subscription. Among equals the
// first place rotates from pass to pass, so a subscription late in id order is not always
// last when a single worker frees up.
func (d *Dispatcher) fairShare(ctx context.Context, subs []events.Subscription, l load, limit int) ([]events.Delivery, error) {
	order := make([]events.Subscription, 0, len(subs))
	if n := len(subs); n > 0 {
		k := l.turn % n
		order = append(append(order, subs[k:]...), subs[:k]...)
	}
	slices.SortStableFunc(order, func(a, b events.Subscription) int {
		if c := l.perCompany[a.CompanyID] - l.perCompany[b.CompanyID]; c != 0 {
			return c
		}
		return l.perSub[a.ID] - l.perSub[b.ID]
	})
	byCompany := map[string][][]events.Delivery{}
	var companies []string
	now := d.now()
	for _, sub := range order {
		room := min(l.subRoom[sub.ID], l.companyRoom[sub.CompanyID])
		if room <= 0 {
			continue
		}
		// Read a few more than the room: some may be of an entity already taken.
		due, err := d.st.DueDeliveries(ctx, []string{sub.ID}, now, max(room, min(4*room, d.opts.Batch)))
		if err != nil {
			return nil, err
		}
		taken := map[string]bool{}
		offer := due[:0]
		for _, dl := range due {
			if k := entityKey(dl); !l.busy[k] && !taken[k] && len(offer) < room {
				taken[k] = true
				offer = append(offer, dl)
			}
		}
		if len(offer) == 0 {
			continue
		}
		if _, seen := byCompany[sub.CompanyID]; !seen {
			companies = append(companies, sub.CompanyID)
		}
		byCompany[sub.CompanyID] = append(byCompany[sub.CompanyID], offer)
	}
	perCompany := make([][]events.Delivery, len(companies))
	for i, c := range companies {
		perCompany[i] = roundRobin(byCompany[c], l.companyRoom[c])
	}
	return roundRobin(perCompany, limit), nil
}

// entityKey names dl's subscription and entity: one request per key at a time.
func entityKey(dl events.Delivery) string {
	return dl.SubscriptionID + "\x00" + dl.Entity.Type + "\x00" + dl.Entity.ID
}

// roundRobin takes one from each list in turn until all are empty or limit are taken
// (limit < 0: no limit).
func roundRobin(lists [][]events.Delivery, limit int) []events.Delivery {
	var out []events.Delivery
	for i := 0; ; i++ {
		took := false
		for _, l := range lists {
			if i < len(l) {
				if limit >= 0 && len(out) == limit {
					return out
				}
				out = append(out, l[i])
				took = true
			}
		}
		if !took {
			return out
		}
	}
}

// deliver makes one attempt of dl if it is not held by an earlier event of its entity and
// this process can claim it. It reports whether it made an attempt and whether the
// subscription is suspended now.
func (d *Dispatcher) deliver(ctx context.Context, sub events.Subscription, dl events.Delivery) (tried, suspended bool, err error) {
	if earlier, ok, err := d.st.EarlierPending(ctx, dl); err != nil {
		return false, false, err
	} else if ok {
		// Wait for it; its end wakes this one.
		until := earlier.NextAt
		if now := d.now(); !until.After(now) {
			until = now.Add(d.opts.Lease)
		}
		return false, false, d.st.Hold(ctx, dl.ID, until)
	}
	start := d.now()
	dl, ok, err := d.st.Claim(ctx, dl.ID, d.opts.Owner, start, d.opts.Lease)
	if err != nil || !ok {
		return false, false, err
	}
	logged, err := d.st.LoggedEvent(ctx, dl.CompanyID, dl.EventID)
	if errors.Is(err, apperr.ErrNotFound) {
		// Retention took the event: nothing can be sent any more.
		return true, false, d.finish(ctx, sub, dl, start, webhook.Attempt{Outcome: webhook.OutcomeNoResponse, Detail: "the event is no longer kept"}, true)
	}
	if err != nil {
		return false, false, err
	}
	body := events.Envelope(logged.Event)
	keys, err := sub.SigningKeys(start, d.opts.Keyring)
	if err != nil {
		return false, false, fmt.Errorf("dispatch: keys of %s: %w", sub.ID, err)
	}
	headers, err := keys.Headers(dl.EventID, start, body)
	if err != nil {
		return false, false, fmt.Errorf("dispatch: sign %s: %w", dl.ID, err)
	}
	a := d.send(ctx, sub.URL, headers, body, dl.ID)
	if ctx.Err() != nil && a.Outcome != webhook.OutcomeDelivered {
		// Stopping: the lease lapses and this or another replica tries again.
		return false, false, nil
	}
	// The attempt is recorded even when the dispatcher is stopping: a 2xx that is not
	// recorded would be sent again.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	err = d.finish(fctx, sub, dl, start, a, false)
	return true, a.Gone || errors.Is(err, errSuspended), ignoreSuspended(err)
}

// send makes the request while renewing the lease every third of it.
func (d *Dispatcher) send(ctx context.Context, url string, headers map[string][]string, body []byte, id string) webhook.Attempt {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(d.opts.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := d.st.RenewLease(ctx, id, d.opts.Owner, d.now().Add(d.opts.Lease)); err != nil {
					d.opts.Logger.Warn("renew delivery lease", "delivery", id, "error", err.Error())
				}
			}
		}
	}()
	a := d.opts.Client.Deliver(ctx, url, headers, body)
	close(done)
	wg.Wait()
	return a
}

var errSuspended = errors.New("dispatch: subscription suspended")

// finishTimeout bounds the recording of an attempt once its request is over.
const finishTimeout = 10 * time.Second

func ignoreSuspended(err error) error {
	if errors.Is(err, errSuspended) {
		return nil
	}
	return err
}

// finish records attempt a of dl made at start and moves the delivery on: delivered, due
// again on the schedule, or failed for good (final: no retry whatever the schedule says).
// A 410 Gone, or a run of failures longer than SuspendAfter, suspends the subscription
// (errSuspended).
func (d *Dispatcher) finish(ctx context.Context, sub events.Subscription, dl events.Delivery, start time.Time, a webhook.Attempt, final bool) error {
	now := d.now()
	trigger := dl.Trigger
	if trigger == "" {
		trigger = events.TriggerScheduled
	}
	dl.Attempts++
	dl.Run++
	dl.LastAt, dl.LastOutcome, dl.LastStatus, dl.UpdatedAt = start, a.Outcome, a.Status, now
	dl.Trigger = events.TriggerScheduled
	rec := events.Attempt{Number: dl.Attempts, Trigger: trigger, At: start, Duration: a.Duration, Status: a.Status, Outcome: a.Outcome,
		Response: a.Response, Detail: a.Detail}
	var suspendReason string
	if a.Outcome == webhook.OutcomeDelivered {
		dl.Status, dl.LastFailedAt = events.DeliveryDelivered, time.Time{}
	} else {
		dl.LastFailedAt = start
		wait, err := d.opts.Schedule.Jittered(dl.Run, a.RetryAfter)
		if final || errors.Is(err, webhook.ErrExhausted) {
			dl.Status = events.DeliveryFailed
		} else {
			dl.NextAt = now.Add(wait)
			rec.NextAt = dl.NextAt
		}
		if a.Gone {
			suspendReason = "the endpoint answered 410 Gone"
		}
	}
	if _, err := d.st.FinishAttempt(ctx, d.opts.Owner, dl, rec); err != nil {
		return err
	}
	if a.Outcome == webhook.OutcomeDelivered {
		return d.st.Succeeded(ctx, sub.ID)
	}
	since, err := d.st.Failed(ctx, sub.ID, start)
	if err != nil {
		return err
	}
	if suspendReason == "" && !since.IsZero() && now.Sub(since) >= d.opts.SuspendAfter {
		suspendReason = fmt.Sprintf("no successful delivery since %s (%s of nothing but failures)", since.Format(time.RFC3339), d.opts.SuspendAfter)
	}
	if suspendReason == "" {
		return nil
	}
	ok, err := d.st.Suspend(ctx, sub.ID, suspendReason, now)
	if err != nil {
		return err
	}
	if ok {
		d.opts.Logger.Warn("webhook subscription suspended", "subscription", sub.ID, "company", sub.CompanyID, "reason", suspendReason)
	}
	return errSuspended
}

// Prune deletes the attempts and finished deliveries older than the retention, and finishes
// the subscription deletions that were cut short.
func (d *Dispatcher) Prune(ctx context.Context) (int64, error) {
	n, err := d.st.PruneDeliveries(ctx, d.now().Add(-d.opts.Retention))
	if err != nil {
		return n, err
	}
	if _, err := d.st.FinishDeletions(ctx); err != nil {
		return n, err
	}
	return n, nil
}

// Reseal seals every subscription's secrets and signing seed under the keyring's current key
// (after a key-encryption key rotation) and returns how many subscriptions it resealed and
// how many still hold a value sealed under another key (changed while the pass ran, or
// unreadable: logged). An old key may leave WEBHOOK_KEYS once a pass finds none left.
func (d *Dispatcher) Reseal(ctx context.Context) (resealed, left int, err error) {
	after := ""
	for {
		page, err := d.st.SubscriptionsAfter(ctx, after)
		if err != nil {
			return resealed, left, err
		}
		for _, sub := range page {
			changed, err := sub.Reseal(d.opts.Keyring)
			if err != nil {
				d.opts.Logger.Warn("reseal webhook subscription", "subscription", sub.ID, "error", err.Error())
				left++
				continue
			}
			if !changed {
				continue
			}
			ok, err := d.st.SaveSealed(ctx, sub)
			if err != nil {
				return resealed, left, err
			}
			if ok {
				resealed++
			} else {
				left++
			}
		}
		if len(page) == 0 {
			return resealed, left, nil
		}
		after = page[len(page)-1].ID
	}
}

// RelayStaged appends the suspension events a crash left staged.
func (d *Dispatcher) RelayStaged(ctx context.Context) (int, error) { return d.st.RelayStaged(ctx) }
