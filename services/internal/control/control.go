// Package control runs a service's detective controls (its ledger reconciliations) on a
// schedule, while the suite runs: each pass under a lease, so that at most one replica runs
// it; what it finds becomes metrics (differences, last clean run), a log line naming the
// accounts and entries, and a `ledger.reconciliation.failed` event to the custodian's
// operators (docs/operations.md says what they do then).
//
// A control's state is one document in the service's `controls` collection, under the
// control's name: the lease, the last pass's outcome, and the outbox of its events (the
// service's relay hands them to the events service like any other).
package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/apitime"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	"github.com/zcustody/suite/services/internal/app"
	"github.com/zcustody/suite/services/internal/ids"
	"github.com/zcustody/suite/services/internal/outbox"
)

// Collection holds the controls' documents in a service's database.
const Collection = "controls"

// EventFailed is the type of the event of a pass that found differences.
const EventFailed = "ledger.reconciliation.failed"

// MaxSamples bounds the differences a pass keeps, logs and sends.
const MaxSamples = 20

// Check is one pass of a control: every difference it finds, each naming the accounts and
// entries concerned. An error means the pass could not finish (it is retried next time).
type Check func(ctx context.Context) (differences []string, err error)

// Config configures a control.
type Config struct {
	DB *mongo.Database
	// Name names the control (trading.journal, custody.journal, interchange.transit).
	Name string
	// Entity is the entity type of its events (catalog.Entity…Reconciliation).
	Entity string
	Check  Check
	// Interval is how often a pass runs (one replica's); Timeout bounds one pass (its
	// lease; default 10 minutes).
	Interval, Timeout time.Duration
	// Custodian is the company of the custodian's operators: the audience of the events.
	Custodian string
	Logger    *slog.Logger
	// Metrics, when set, registers the control's gauges.
	Metrics prometheus.Registerer
	Now     func() time.Time
}

// Control is one scheduled control.
type Control struct {
	cfg  Config
	coll *mongo.Collection
	// gauges of the control's state as its document says (every replica shows the same)
	differences, lastClean, lastRun prometheus.Gauge
}

// Metric names.
const (
	MetricDifferences = "ledger_reconciliation_differences"
	MetricLastClean   = "ledger_reconciliation_last_clean_timestamp_seconds"
	MetricLastRun     = "ledger_reconciliation_last_run_timestamp_seconds"
)

// New returns the control cfg describes.
func New(cfg Config) (*Control, error) {
	if cfg.Name == "" || cfg.Entity == "" || cfg.Check == nil || cfg.Interval <= 0 || cfg.Custodian == "" {
		return nil, fmt.Errorf("control: a name, an entity type, a check, an interval and the custodian's company are required")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	labels := prometheus.Labels{"control": cfg.Name}
	c := &Control{cfg: cfg, coll: cfg.DB.Collection(Collection),
		differences: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricDifferences, ConstLabels: labels,
			Help: "Differences the last pass of the ledger reconciliation found (0: the books agree)."}),
		lastClean: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricLastClean, ConstLabels: labels,
			Help: "Unix time of the last pass of the ledger reconciliation that found no difference."}),
		lastRun: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricLastRun, ConstLabels: labels,
			Help: "Unix time of the last pass of the ledger reconciliation, clean or not."}),
	}
	if cfg.Metrics != nil {
		for _, g := range []prometheus.Collector{c.differences, c.lastClean, c.lastRun} {
			if err := cfg.Metrics.Register(g); err != nil {
				return nil, fmt.Errorf("control %s: %w", cfg.Name, err)
			}
		}
	}
	return c, nil
}

// Outbox is the collection whose documents carry the controls' events, for the relay.
func (c *Control) Outbox() *mongo.Collection { return c.coll }

// doc is a control's document.
type doc struct {
	ID         string    `bson:"_id"`
	LeaseUntil time.Time `bson:"leaseUntil"`
	Runner     string    `bson:"runner,omitempty"`
	LastRunAt  time.Time `bson:"lastRunAt,omitempty"`
	LastClean  time.Time `bson:"lastCleanAt,omitempty"`
	// Differences of the last pass, and the first of them.
	Differences int      `bson:"differences"`
	Samples     []string `bson:"samples,omitempty"`
	EventSeq    int64    `bson:"eventSeq"`
}

// Outcome is what Pass did.
type Outcome struct {
	// Ran is false when another replica holds the pass (or ran it less than an interval ago).
	Ran         bool
	Differences []string
}

// Pass runs the control once if no replica ran it within the last interval: it takes the
// lease, runs the check, and records the outcome (staging the event of a pass that found
// differences in the same update). Either way the gauges show the document's last outcome.
func (c *Control) Pass(ctx context.Context) (Outcome, error) {
	now := c.now()
	if _, err := c.coll.InsertOne(ctx, doc{ID: c.cfg.Name, LeaseUntil: time.Unix(0, 0).UTC()}); err != nil && !mongo.IsDuplicateKeyError(err) {
		return Outcome{}, fmt.Errorf("control %s: %w", c.cfg.Name, err)
	}
	token := ids.Random(16)
	res, err := c.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: c.cfg.Name}, {Key: "leaseUntil", Value: bson.D{{Key: "$lte", Value: now}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "leaseUntil", Value: now.Add(c.cfg.Timeout)}, {Key: "runner", Value: token}}}})
	if err != nil {
		return Outcome{}, fmt.Errorf("control %s: take the pass: %w", c.cfg.Name, err)
	}
	if res.MatchedCount == 0 {
		return Outcome{}, c.show(ctx)
	}
	var d doc
	if err := c.coll.FindOne(ctx, bson.D{{Key: "_id", Value: c.cfg.Name}}).Decode(&d); err != nil {
		return Outcome{}, fmt.Errorf("control %s: %w", c.cfg.Name, err)
	}
	checkCtx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	found, err := c.cfg.Check(checkCtx)
	cancel()
	if err != nil {
		c.release(ctx, token, now)
		return Outcome{}, fmt.Errorf("control %s: %w", c.cfg.Name, err)
	}
	if err := c.record(ctx, d, token, now, found); err != nil {
		return Outcome{}, err
	}
	return Outcome{Ran: true, Differences: found}, c.show(ctx)
}

// record stores a pass's outcome, and stages its event when it found differences; the next
// pass may start an interval after this one did.
func (c *Control) record(ctx context.Context, d doc, token string, at time.Time, found []string) error {
	samples := found[:min(len(found), MaxSamples)]
	set := bson.D{{Key: "leaseUntil", Value: at.Add(c.cfg.Interval * 9 / 10)}, {Key: "lastRunAt", Value: at},
		{Key: "differences", Value: len(found)}, {Key: "samples", Value: samples}}
	if len(found) == 0 {
		set = append(set, bson.E{Key: "lastCleanAt", Value: at})
	}
	update := bson.D{}
	if len(found) > 0 {
		data := &eventsv1.LedgerReconciliationEventData{Control: c.cfg.Name, Differences: int32(len(found)), Samples: samples,
			CheckedAt: apitime.Format(at)}
		if !d.LastClean.IsZero() {
			last := apitime.Format(d.LastClean)
			data.LastCleanAt = &last
		}
		evSet, push, _, err := outbox.Stage(d.EventSeq, at, outbox.Draft{Type: EventFailed, CompanyID: c.cfg.Custodian,
			EntityType: c.cfg.Entity, EntityID: c.cfg.Name, Data: data})
		if err != nil {
			return fmt.Errorf("control %s: %w", c.cfg.Name, err)
		}
		set = append(set, evSet...)
		update = append(update, bson.E{Key: "$push", Value: push})
		c.cfg.Logger.ErrorContext(ctx, "ledger reconciliation found differences", "control", c.cfg.Name, "differences", len(found),
			"samples", samples)
	} else {
		c.cfg.Logger.DebugContext(ctx, "ledger reconciliation clean", "control", c.cfg.Name)
	}
	update = append(bson.D{{Key: "$set", Value: set}}, update...)
	res, err := c.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: c.cfg.Name}, {Key: "runner", Value: token}, {Key: "eventSeq", Value: d.EventSeq}}, update)
	if err != nil {
		return fmt.Errorf("control %s: record the pass: %w", c.cfg.Name, err)
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("control %s: the pass outlived its lease (%s); raise its timeout", c.cfg.Name, c.cfg.Timeout)
	}
	return nil
}

// release lets the next pass run at once after one that could not finish.
func (c *Control) release(ctx context.Context, token string, at time.Time) {
	_, _ = c.coll.UpdateOne(context.WithoutCancel(ctx), bson.D{{Key: "_id", Value: c.cfg.Name}, {Key: "runner", Value: token}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "leaseUntil", Value: at}}}})
}

// show sets the gauges from the control's document.
func (c *Control) show(ctx context.Context) error {
	var d doc
	err := c.coll.FindOne(ctx, bson.D{{Key: "_id", Value: c.cfg.Name}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("control %s: %w", c.cfg.Name, err)
	}
	if d.LastRunAt.IsZero() {
		return nil
	}
	c.differences.Set(float64(d.Differences))
	c.lastRun.Set(float64(d.LastRunAt.Unix()))
	if !d.LastClean.IsZero() {
		c.lastClean.Set(float64(d.LastClean.Unix()))
	}
	return nil
}

func (c *Control) now() time.Time { return c.cfg.Now().UTC().Truncate(time.Millisecond) }

// Loop returns the control's pass for a service's background loop: a failure is a warning
// (the next pass tries again).
func (c *Control) Loop() func(context.Context) {
	return func(ctx context.Context) {
		if _, err := c.Pass(ctx); err != nil && ctx.Err() == nil {
			c.cfg.Logger.WarnContext(ctx, "ledger reconciliation", "control", c.cfg.Name, "error", err.Error())
		}
	}
}

// Settings are a service's settings of its scheduled reconciliation.
type Settings struct {
	// Interval is how often the reconciliation runs (one replica's pass per interval);
	// Timeout bounds one pass.
	Interval time.Duration `env:"RECONCILE_INTERVAL, default=5m"`
	Timeout  time.Duration `env:"RECONCILE_TIMEOUT, default=10m"`
	// Custodian is the company of the custodian's operators, who receive the events of a
	// reconciliation that found differences.
	Custodian string `env:"CUSTODIAN_COMPANY, default=ZCUSTODY"`
}

// Defaults of Settings (those of the environment).
const (
	DefaultInterval  = 5 * time.Minute
	DefaultTimeout   = 10 * time.Minute
	DefaultCustodian = "ZCUSTODY"
)

// withDefaults fills what a configuration built in code leaves zero.
func (s Settings) withDefaults() Settings {
	if s.Interval == 0 {
		s.Interval = DefaultInterval
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.Custodian == "" {
		s.Custodian = DefaultCustodian
	}
	return s
}

// Schedule registers the control named name (its events of entity type entity) with check on
// a service's background loops and returns its outbox for the service's relay.
func Schedule(deps *app.Deps, s Settings, name, entity string, check Check) (*mongo.Collection, error) {
	if s.Interval < 0 || s.Timeout < 0 {
		return nil, errors.New("config: RECONCILE_INTERVAL and RECONCILE_TIMEOUT must be positive")
	}
	s = s.withDefaults()
	c, err := New(Config{DB: deps.DB, Name: name, Entity: entity, Check: check, Interval: s.Interval, Timeout: s.Timeout,
		Custodian: s.Custodian, Logger: deps.Logger, Metrics: deps.Server.Metrics()})
	if err != nil {
		return nil, err
	}
	// The loop looks every tenth of the interval: the replica whose turn it is runs the pass,
	// the others only show its outcome.
	deps.Every("ledger reconciliation "+name, max(s.Interval/10, time.Second), c.Loop())
	return c.Outbox(), nil
}
