// Package server is the trading service's gRPC edge. Its methods answer Unimplemented, in the
// contract's error body through the gateway, until the issue that owns them lands.
package server

import (
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
)

// Server implements tradingv1.TradingServiceServer.
type Server struct {
	tradingv1.UnimplementedTradingServiceServer
}

var _ tradingv1.TradingServiceServer = (*Server)(nil)

// New returns the server.
func New() *Server { return &Server{} }
