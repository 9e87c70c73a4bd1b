// Package embeddb runs FerretDB v1 with its SQLite backend inside the current process,
// so that local runs and tests get a real MongoDB wire-protocol server without installing one.
package embeddb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// readyTimeout bounds how long Start waits for the server to answer a ping.
const readyTimeout = 30 * time.Second

// newMu serialises ferretdb.New: it writes FerretDB's process-wide version info,
// which would be a data race when parallel tests start servers at the same time.
var newMu sync.Mutex

// Config says where the embedded server keeps its data and where it listens.
type Config struct {
	// Dir is the SQLite data folder; it is created if missing.
	Dir string
	// Addr is the TCP listen address; "127.0.0.1:0" (the default when empty) picks a free port.
	Addr string
	// Logger receives FerretDB's warnings and errors; nil means slog.Default().
	Logger *slog.Logger
	// Profile, when set, receives one line per command the relay passed on: the command,
	// its collection and how long FerretDB took, in microseconds (see Profile).
	Profile io.Writer
}

// DB is a running embedded FerretDB server.
type DB struct {
	uri    string
	relay  *serializer
	cancel context.CancelFunc
	done   chan error
}

// Start starts FerretDB and returns once it accepts connections.
// The server stops when Close is called (not when ctx ends; ctx bounds the start only).
//
// Clients connect through a relay that passes one command at a time to FerretDB,
// which makes each single-document write atomic as on MongoDB (see serializer).
func Start(ctx context.Context, cfg Config) (*DB, error) {
	f, err := newFerretDB(cfg)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	db := &DB{cancel: cancel, done: make(chan error, 1)}
	go func() { db.done <- f.Run(runCtx) }()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	backend, err := url.Parse(f.MongoDBURI())
	if err == nil {
		db.relay, err = newSerializer(cfg.Addr, backend.Host, cfg.Profile)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start ferretdb: %w", err), db.Close())
	}
	db.uri = "mongodb://" + db.relay.addr() + "/"
	if err := ping(ctx, db.uri); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return db, nil
}

func newFerretDB(cfg Config) (*ferretdb.FerretDB, error) {
	sqliteURL, err := sqliteURL(cfg.Dir)
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	newMu.Lock()
	defer newMu.Unlock()
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: "127.0.0.1:0"},
		Logger:    slog.New(quietHandler{logger.Handler()}).With("component", "ferretdb"),
		Handler:   "sqlite",
		SQLiteURL: sqliteURL,
	})
	if err != nil {
		return nil, fmt.Errorf("start ferretdb: %w", err)
	}
	return f, nil
}

// URI returns the mongodb:// URI of the server.
func (db *DB) URI() string { return db.uri }

// Close drops client connections, stops the server and waits until it has closed its database.
func (db *DB) Close() error {
	if db.relay != nil {
		db.relay.close()
	}
	db.cancel()
	return <-db.done
}

func sqliteURL(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("embeddb: Dir is empty")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("data folder: %w", err)
	}
	if err := os.MkdirAll(abs, 0o750); err != nil {
		return "", fmt.Errorf("data folder: %w", err)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs) + "/", OmitHost: true}
	return u.String(), nil
}

func ping(ctx context.Context, uri string) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return fmt.Errorf("connect to ferretdb: %w", err)
	}
	defer client.Disconnect(context.WithoutCancel(ctx)) //nolint:errcheck // ping result matters
	if err := client.Ping(ctx, nil); err != nil {
		return fmt.Errorf("ping ferretdb: %w", err)
	}
	return nil
}

// quietHandler passes on FerretDB's warnings and errors, except its dumps of failed
// commands (a duplicate key, the driver's unsupported endSessions), which the client
// sees as errors anyway and which would flood the output.
type quietHandler struct{ slog.Handler }

func (h quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h quietHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelError && strings.HasPrefix(r.Message, "Response ") {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h quietHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return quietHandler{h.Handler.WithAttrs(attrs)}
}

func (h quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{h.Handler.WithGroup(name)}
}
