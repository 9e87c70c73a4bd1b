// Command ferretdb runs the embedded FerretDB (SQLite backend) for local development.
//
// It prints one line "MONGODB_URI=<uri>" on stdout once the server accepts connections,
// then serves until SIGINT or SIGTERM. Logs go to stderr so stdout stays machine-readable.
//
// Configuration, flag over environment over default:
//
//	-dir  FERRETDB_DIR   SQLite data folder (default .data/ferretdb)
//	-addr FERRETDB_ADDR  listen address (default 127.0.0.1:27017)
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/zcustody/suite/deploy/local/embeddb"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, logger)
	stop()
	if err != nil {
		logger.Error("ferretdb stopped", "error", err)
		os.Exit(1)
	}
}

// config is the binary's configuration, named after its environment variables.
type config struct {
	Dir  string // FERRETDB_DIR
	Addr string // FERRETDB_ADDR
	// Profile, when set, is a file that receives one line per command: the command, its
	// collection and how long FerretDB took, in microseconds (FERRETDB_PROFILE).
	Profile string
}

func parseConfig(args []string, getenv func(string) string) (config, error) {
	fs := flag.NewFlagSet("ferretdb", flag.ContinueOnError)
	var cfg config
	fs.StringVar(&cfg.Dir, "dir", envOr(getenv, "FERRETDB_DIR", ".data/ferretdb"), "SQLite data folder")
	fs.StringVar(&cfg.Addr, "addr", envOr(getenv, "FERRETDB_ADDR", "127.0.0.1:27017"), "listen address")
	fs.StringVar(&cfg.Profile, "profile", getenv("FERRETDB_PROFILE"), "file of one line per command with its time (FERRETDB_PROFILE)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	return cfg, nil
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer, logger *slog.Logger) error {
	cfg, err := parseConfig(args, getenv)
	if err != nil {
		return err
	}
	var profile io.Writer
	if cfg.Profile != "" {
		f, err := os.Create(cfg.Profile)
		if err != nil {
			return fmt.Errorf("profile: %w", err)
		}
		defer f.Close()
		profile = f
	}
	db, err := embeddb.Start(ctx, embeddb.Config{Dir: cfg.Dir, Addr: cfg.Addr, Logger: logger, Profile: profile})
	if err != nil {
		return err
	}
	logger.Info("ferretdb ready", "uri", db.URI(), "dir", cfg.Dir)
	if _, err := fmt.Fprintf(stdout, "MONGODB_URI=%s\n", db.URI()); err != nil {
		return fmt.Errorf("print uri: %w", err)
	}
	<-ctx.Done()
	logger.Info("ferretdb stopping")
	return db.Close()
}
