// Package app holds the start-up every service shares: connect the database, build the gRPC
// server with its interceptors, and run until the context ends.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/logging"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/services/internal/authz"
	"github.com/zcustody/suite/services/internal/grpcserver"
)

// Deps is what a service's wiring needs.
type Deps struct {
	Logger *slog.Logger
	Client *mongo.Client
	DB     *mongo.Database
	Server *grpcserver.Server
	cfg    config.Common
}

// Setup validates cfg, connects the database and builds the gRPC server.
// policy is the service's authorization table (authz).
func Setup(ctx context.Context, cfg config.Common, service string, logger *slog.Logger, policy authz.Policy) (*Deps, error) {
	logger = logging.WithRequests(logger)
	if err := cfg.Validate(service); err != nil {
		return nil, err
	}
	if err := cfg.RefuseDemoKeys(); err != nil {
		return nil, err
	}
	issuers, err := cfg.TrustedIssuers()
	if err != nil {
		return nil, err
	}
	reflect, err := cfg.Reflection()
	if err != nil {
		return nil, err
	}
	client, err := mongodb.Connect(ctx, cfg.MongoURI)
	if err != nil {
		return nil, err
	}
	srv := grpcserver.New(logger, principal.NewVerifier(issuers), policy)
	if reflect {
		srv.EnableReflection()
	}
	return &Deps{Logger: logger, Client: client, DB: client.Database(cfg.Database), Server: srv, cfg: cfg}, nil
}

// Run serves until ctx ends, then closes the database connection.
func (d *Deps) Run(ctx context.Context) error {
	defer func() {
		// A database that went away must not hold up the exit.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if err := d.Client.Disconnect(dctx); err != nil {
			d.Logger.Warn("disconnect mongodb", "error", err.Error())
		}
	}()
	ping := func(ctx context.Context) error { return d.Client.Ping(ctx, nil) }
	if err := d.Server.Run(ctx, d.cfg, ping); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// Every calls f every interval until ctx ends (a service's background sweep).
func Every(ctx context.Context, interval time.Duration, f func(context.Context)) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			f(ctx)
		}
	}
}
