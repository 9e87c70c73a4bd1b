package directory_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/custody/directory"
)

// identity is a service desk that knows one user and checks who asks.
type identity struct {
	servicedeskv1.IdentityServiceClient
	verifier *principal.Verifier
	err      error
	answer   *servicedeskv1.GetUserResponse
	asked    principal.Principal
}

func (i *identity) GetUser(ctx context.Context, in *servicedeskv1.GetUserRequest, _ ...grpc.CallOption) (*servicedeskv1.GetUserResponse, error) {
	md, _ := metadata.FromOutgoingContext(ctx)
	if tokens := md.Get(principal.MetadataKey); len(tokens) == 1 {
		i.asked, _ = i.verifier.Verify(tokens[0])
	}
	if i.err != nil {
		return nil, i.err
	}
	return i.answer, nil
}

const userID = "2b7e1516-28ae-4d2a-abf7-158809cf4f3c"

func newDirectory(t *testing.T, answer *servicedeskv1.GetUserResponse, err error) (*directory.Directory, *identity) {
	t.Helper()
	pub, priv, genErr := ed25519.GenerateKey(rand.Reader)
	if genErr != nil {
		t.Fatal(genErr)
	}
	fake := &identity{verifier: principal.NewVerifier(map[string]ed25519.PublicKey{"custody": pub}), answer: answer, err: err}
	return directory.New(fake, principal.NewSigner("custody", priv, time.Minute)), fake
}

func TestAuthor(t *testing.T) {
	t.Parallel()
	answer := &servicedeskv1.GetUserResponse{CompanyDomainId: "d0d0d0d0-0000-4000-8000-000000000001", User: &servicedeskv1.User{
		Id: userID, Email: "api-checker@ztest.example", CompanyId: "ZTEST", Roles: []string{"CHECKER"}, Active: true, PublicKey: "PEM"}}
	dir, fake := newDirectory(t, answer, nil)
	got, err := dir.Author(context.Background(), userID)
	if err != nil {
		t.Fatal(err)
	}
	want := custody.Author{ID: userID, Email: "api-checker@ztest.example", CompanyID: "ZTEST",
		DomainID: "d0d0d0d0-0000-4000-8000-000000000001", Roles: []string{"CHECKER"}, Active: true, PublicKey: "PEM"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Author() mismatch (-want +got):\n%s", diff)
	}
	if fake.asked.Kind != principal.KindSystem || fake.asked.System != directory.System || fake.asked.Issuer != "custody" {
		t.Errorf("the service desk was asked by %+v, want custody's system principal", fake.asked)
	}
}

func TestAuthorFailures(t *testing.T) {
	t.Parallel()
	other := &servicedeskv1.GetUserResponse{User: &servicedeskv1.User{Id: "someone-else"}}
	tests := []struct {
		name       string
		answer     *servicedeskv1.GetUserResponse
		err        error
		wantIs     error
		wantStatus codes.Code
	}{
		{name: "unknown user", err: status.Error(codes.NotFound, "no such user"), wantIs: apperr.ErrNotFound, wantStatus: codes.NotFound},
		{name: "service desk down", err: status.Error(codes.Unavailable, "dial tcp 10.0.0.1"), wantStatus: codes.Unavailable},
		{name: "service desk slow", err: status.Error(codes.DeadlineExceeded, "deadline"), wantStatus: codes.Unavailable},
		// Refused (custody not allowed to ask) is a deployment fault, not the client's: 500.
		{name: "refused", err: status.Error(codes.PermissionDenied, "reserved"), wantStatus: codes.Internal},
		{name: "answer about another user", answer: other, wantStatus: codes.Internal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, _ := newDirectory(t, tt.answer, tt.err)
			_, err := dir.Author(context.Background(), userID)
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("err = %v, want %v", err, tt.wantIs)
			}
			st := status.Convert(apperr.ToStatus(err))
			if st.Code() != tt.wantStatus {
				t.Errorf("status %s (%s), want %s", st.Code(), st.Message(), tt.wantStatus)
			}
			if tt.wantStatus != codes.NotFound && tt.wantStatus != codes.Internal && st.Message() != "the user directory is unavailable; retry later" {
				t.Errorf("message %q leaks the cause", st.Message())
			}
		})
	}
}

// caller is a service desk whose GetCaller knows one user of ZTEST.
type caller struct {
	servicedeskv1.IdentityServiceClient
	asked *servicedeskv1.GetCallerRequest
}

func (c *caller) GetCaller(_ context.Context, in *servicedeskv1.GetCallerRequest, _ ...grpc.CallOption) (*servicedeskv1.GetCallerResponse, error) {
	c.asked = in
	if in.GetCompanyId() != "ZTEST" {
		return nil, status.Error(codes.NotFound, "no such company")
	}
	resp := &servicedeskv1.GetCallerResponse{Company: &servicedeskv1.Company{Id: "ZTEST", DomainId: "d0d0d0d0-0000-4000-8000-000000000001"}}
	if in.GetUserEmail() == "api-checker@ztest.example" {
		resp.User = &servicedeskv1.User{Id: userID, Email: in.GetUserEmail(), CompanyId: "ZTEST", Roles: []string{"CHECKER"}, Active: true}
	}
	return resp, nil
}

func TestAuthorByEmail(t *testing.T) {
	t.Parallel()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	fake := &caller{}
	dir := directory.New(fake, principal.NewSigner("custody", priv, time.Minute))
	got, err := dir.AuthorByEmail(context.Background(), "ZTEST", "api-checker@ztest.example")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != userID || got.DomainID != "d0d0d0d0-0000-4000-8000-000000000001" || got.CompanyID != "ZTEST" {
		t.Errorf("AuthorByEmail = %+v, want the user with its company's domain", got)
	}
	// A company without that user, and an unknown company, are not found.
	for _, give := range [][2]string{{"ZTEST", "nobody@ztest.example"}, {"ZACME", "api-checker@ztest.example"}} {
		if _, err := dir.AuthorByEmail(context.Background(), give[0], give[1]); !errors.Is(err, apperr.ErrNotFound) {
			t.Errorf("AuthorByEmail(%s, %s) = %v, want not found", give[0], give[1], err)
		}
	}
}
