// Package server is the custody service's gRPC edge. Its methods answer Unimplemented, in the
// contract's error body through the gateway, until the issue that owns them lands.
package server

import (
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
)

// Server implements custodyv1.CustodyServiceServer.
type Server struct {
	custodyv1.UnimplementedCustodyServiceServer
}

var _ custodyv1.CustodyServiceServer = (*Server)(nil)

// New returns the server.
func New() *Server { return &Server{} }
