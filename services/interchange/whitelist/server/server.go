// Package server is the gRPC edge of interchange's address side: endpoints 8 and 9, and the
// plugin handlers of 0x0007-007 and 0x0007-008. It maps proto to the domain (package address)
// and back; the work is the domain's (address.Book).
package server

import (
	"context"

	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
)

// Server serves endpoints 8 and 9 over the book.
type Server struct {
	book *address.Book
}

// New returns the server of book.
func New(book *address.Book) *Server { return &Server{book: book} }

// companyOf returns the caller's company; every query is scoped to it.
func companyOf(ctx context.Context) (string, error) {
	p, err := principal.Company(ctx)
	return p.CompanyID, err
}
