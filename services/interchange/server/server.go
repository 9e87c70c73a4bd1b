// Package server is the interchange service's gRPC edge. Its methods answer Unimplemented, in the
// contract's error body through the gateway, until the issue that owns them lands.
package server

import (
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
)

// Server implements interchangev1.InterchangeServiceServer.
type Server struct {
	interchangev1.UnimplementedInterchangeServiceServer
}

var _ interchangev1.InterchangeServiceServer = (*Server)(nil)

// New returns the server.
func New() *Server { return &Server{} }
