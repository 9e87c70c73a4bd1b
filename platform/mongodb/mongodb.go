// Package mongodb opens the service's MongoDB connection with production options.
package mongodb

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// ClientOptions are the options every service uses: majority reads and journaled majority
// writes, bounded selection and connect time (tunable in the URI), and a pool that is reused
// across calls.
func ClientOptions(uri string) *options.ClientOptions {
	// Timeouts and pool size are defaults the URI may tune (e.g. serverSelectionTimeoutMS);
	// the durability settings come after it and cannot be weakened by it.
	return options.Client().
		SetServerSelectionTimeout(5 * time.Second).
		SetConnectTimeout(5 * time.Second).
		SetTimeout(10 * time.Second).
		SetMaxPoolSize(64).
		SetAppName("custody-suite").
		ApplyURI(uri).
		SetWriteConcern(&writeconcern.WriteConcern{W: "majority", Journal: ptr(true)}).
		SetReadConcern(readconcern.Majority())
}

// Connect opens a client with ClientOptions and checks the server answers.
func Connect(ctx context.Context, uri string) (*mongo.Client, error) {
	return ConnectWith(ctx, ClientOptions(uri))
}

// ConnectWith opens a client with opts (ClientOptions, perhaps completed, e.g. with a
// command monitor) and checks the server answers.
func ConnectWith(ctx context.Context, opts *options.ClientOptions) (*mongo.Client, error) {
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, fmt.Errorf("connect mongodb: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := client.Ping(pingCtx, nil); err != nil {
		_ = client.Disconnect(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("ping mongodb: %w", err)
	}
	return client, nil
}

func ptr[T any](v T) *T { return &v }
