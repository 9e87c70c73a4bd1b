// Command servicedesk runs the servicedesk gRPC service.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/logging"
	"github.com/zcustody/suite/services/servicedesk/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := logging.New(os.Stdout, os.Getenv("LOG_LEVEL"), app.Name)
	var cfg app.Config
	err := config.Load(ctx, &cfg)
	if err == nil {
		err = app.Run(ctx, cfg, logger)
	}
	if err != nil {
		logger.Error("exit", "error", err.Error())
		stop()
		os.Exit(1)
	}
}
