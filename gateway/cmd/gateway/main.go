// Command gateway runs the REST gateway in front of the suite's gRPC services.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/sethvargo/go-envconfig"

	"github.com/zcustody/suite/gateway/app"
	"github.com/zcustody/suite/platform/logging"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := logging.New(os.Stdout, os.Getenv("LOG_LEVEL"), "gateway")
	var cfg app.Config
	err := envconfig.Process(ctx, &cfg)
	if err == nil {
		err = app.Run(ctx, cfg, logger, nil)
	}
	if err != nil {
		logger.Error("exit", "error", err.Error())
		stop()
		os.Exit(1)
	}
}
