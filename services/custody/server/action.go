package server

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/canonical"
	"github.com/zcustody/suite/platform/principal"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/custody"
)

// ActOnLegacyWallet serves endpoint 4: a CHECKER of the wallet's company approves or rejects
// a proposed v2 wallet with a request signed by their registered approval key. The wallet
// must be the calling company's (ER-102); the author is looked up in the service desk by id;
// the decision is one conditional update on the status and version read, so an intent is
// used once (a replay or a racing second action is a 409).
func (s *Server) ActOnLegacyWallet(ctx context.Context, req *custodyv1.ActOnLegacyWalletRequest) (*custodyv1.ActOnLegacyWalletResponse, error) {
	p, err := principal.Company(ctx)
	if err != nil {
		return nil, err
	}
	a, err := actionOf(req)
	if err != nil {
		return nil, err
	}
	if s.authors == nil {
		return nil, &apperr.Error{Status: codes.Unavailable, Code: apperr.CodeUnavailable, Message: "wallet approvals are unavailable: no user directory is configured"}
	}
	w, err := s.wallet(ctx, p.CompanyID, req.GetWalletId())
	if err != nil {
		return nil, err
	}
	author, err := s.signedBy(ctx, p, req, a)
	if err != nil {
		return nil, err
	}
	if err := custody.Authorize(w, author, a); err != nil {
		return nil, err
	}
	if err := custody.CheckPending(w, a); err != nil {
		return nil, err
	}
	d := custody.Decision{Type: a.Type, AuthorID: author.ID, AuthorEmail: author.Email, At: s.now()}
	_, err = s.store.Decide(ctx, w, d)
	if errors.Is(err, apperr.ErrConflict) {
		return nil, apperr.Conflict(apperr.CodeConflict, "wallet %s was acted on concurrently: intent %s is used", w.ID, a.IntentID)
	}
	if err != nil {
		return nil, err
	}
	return &custodyv1.ActOnLegacyWalletResponse{Id: w.ID}, nil
}

// actionOf reads the mandatory parts of the request.
func actionOf(req *custodyv1.ActOnLegacyWalletRequest) (custody.Action, error) {
	r := req.GetRequest()
	switch {
	case r == nil:
		return custody.Action{}, apperr.Missing("request")
	case req.GetSignature() == "":
		return custody.Action{}, apperr.Missing("signature")
	}
	a := custody.Action{AuthorID: r.GetAuthor().GetId(), AuthorDomainID: r.GetAuthor().GetDomainId(), TargetDomainID: r.GetTargetDomainId(),
		IntentID: r.GetIntentId(), ProposalSignature: r.GetProposalSignature(), Type: r.GetType()}
	return a, a.Check()
}

// signedBy returns the author after checking that they signed the request. An unknown author
// answers as one of another company (ER-114), so ids of other companies' users do not leak;
// a submitter other than the author is refused.
func (s *Server) signedBy(ctx context.Context, p principal.Principal, req *custodyv1.ActOnLegacyWalletRequest, a custody.Action) (custody.Author, error) {
	author, err := s.authors.Author(ctx, a.AuthorID)
	if errors.Is(err, apperr.ErrNotFound) {
		return author, apperr.Invalid(apperr.CodeOtherCompany, "request.author.id", "the author is not a user of the wallet's company")
	}
	if err != nil {
		return author, err
	}
	if p.Kind == principal.KindUser && p.UserEmail != author.Email {
		return author, apperr.Forbidden("submitter-id must be the author of the action")
	}
	signed, err := protojson.Marshal(req.GetRequest())
	if err != nil {
		return author, fmt.Errorf("encode request object: %w", err)
	}
	return author, custody.VerifySignature(author, signed, req.GetSignature())
}

// GetLegacyWalletProposal returns a pending wallet of the caller's company and the approval
// object the calling CHECKER signs for endpoint 4 (extension): the caller as author, the
// company's domain, the wallet's intent and proposal signature. The checks of endpoint 4 that
// depend on the caller run here already, so a proposer or a non-CHECKER learns at once.
func (s *Server) GetLegacyWalletProposal(ctx context.Context, req *custodyv1.GetLegacyWalletProposalRequest) (*custodyv1.GetLegacyWalletProposalResponse, error) {
	// The approval object names its author: the calling user (submitter-id).
	p, err := principal.User(ctx)
	if err != nil {
		return nil, err
	}
	if s.authors == nil {
		return nil, &apperr.Error{Status: codes.Unavailable, Code: apperr.CodeUnavailable, Message: "wallet approvals are unavailable: no user directory is configured"}
	}
	w, err := s.wallet(ctx, p.CompanyID, req.GetWalletId())
	if err != nil {
		return nil, err
	}
	if w.Status != custody.StatusPendingAuth || w.Intent == nil || w.Intent.Decision != nil {
		return nil, apperr.Precondition(apperr.CodeConflict, "walletId", "wallet %s is %s: it awaits no approval", w.ID, w.Status)
	}
	author, err := s.authors.AuthorByEmail(ctx, p.CompanyID, p.UserEmail)
	if errors.Is(err, apperr.ErrNotFound) {
		return nil, apperr.Forbidden("submitter-id is not a user of the company")
	}
	if err != nil {
		return nil, err
	}
	a := custody.Action{AuthorID: author.ID, AuthorDomainID: author.DomainID, TargetDomainID: author.DomainID,
		IntentID: w.Intent.ID, ProposalSignature: w.Intent.ProposalSignature, Type: custody.ActionApprove}
	if err := custody.Authorize(w, author, a); err != nil {
		return nil, err
	}
	request := &custodyv1.WalletActionRequest{
		Author:         &custodyv1.Author{Id: a.AuthorID, DomainId: a.AuthorDomainID},
		TargetDomainId: a.TargetDomainID, IntentId: a.IntentID, ProposalSignature: a.ProposalSignature, Type: a.Type,
	}
	raw, err := protojson.Marshal(request)
	if err != nil {
		return nil, fmt.Errorf("encode request object: %w", err)
	}
	signingInput, err := canonical.FromJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("canonical request object: %w", err)
	}
	return &custodyv1.GetLegacyWalletProposalResponse{
		WalletId: w.ID, WalletName: w.Name, CurrencyId: w.CurrencyID, CreatedBy: w.CreatedBy,
		CreatedAt: apitime.Format(w.CreatedAt), Status: w.Status, Request: request, SigningInput: string(signingInput),
	}, nil
}
