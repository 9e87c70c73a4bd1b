package server_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/custody"
)

const walletID = "ZTEST-NOBENF-0000000001"

func renameRequest(t *testing.T, requestID, id, name string) *pluginv1.ServiceRequest {
	return request(t, requestID, custody.ServiceRenameWallet, map[string]any{"walletId": list(id), "name": list(name)})
}

func deactivateRequest(t *testing.T, requestID, id string) *pluginv1.ServiceRequest {
	return request(t, requestID, custody.ServiceDeactivateWallet, map[string]any{"walletId": id})
}

func TestRename(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.put(t, company, walletID, nil)
	sr := renameRequest(t, "SERV-REQ-R1", walletID, "New name")
	want := &pluginv1.ValidateResponse{EntityIds: []string{walletID},
		Details: []*structpb.Struct{detail(t, map[string]any{"walletId": walletID, "name": "New name", "status": "ACTIVE"})},
		Subject: &pluginv1.PolicySubject{WalletId: walletID, Currency: "BTC"}} // the wallet's btc-btc, as the policy names it
	validated, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: sr})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, validated, protocmp.Transform()); diff != "" {
		t.Errorf("Validate mismatch (-want +got):\n%s", diff)
	}
	if w, _ := f.store.Wallet(context.Background(), company, walletID); w.Name != "Old name" || w.Version != 1 {
		t.Errorf("Validate changed the wallet: %+v", w)
	}
	exec := &pluginv1.ExecuteRequest{Request: sr, EntityIds: validated.GetEntityIds()}
	for i := range 2 {
		got, err := f.plugin.Execute(servicedesk(), exec)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.GetDetails(), got.GetDetails(), protocmp.Transform()); diff != "" {
			t.Errorf("Execute %d details mismatch (-want +got):\n%s", i, diff)
		}
	}
	w, err := f.store.Wallet(context.Background(), company, walletID)
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "New name" || w.Version != 2 || w.Status != custody.StatusActive {
		t.Errorf("after two Executes wallet = %+v, want renamed once (version 2)", w)
	}
}

func TestDeactivate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.put(t, company, walletID, nil)
	sr := deactivateRequest(t, "SERV-REQ-D1", walletID)
	validated, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: sr})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&pluginv1.PolicySubject{WalletId: walletID, Currency: "BTC"}, validated.GetSubject(), protocmp.Transform()); diff != "" {
		t.Errorf("Validate's policy subject mismatch (-want +got):\n%s", diff)
	}
	want := &pluginv1.ExecuteResponse{EntityIds: []string{walletID},
		Details: []*structpb.Struct{detail(t, map[string]any{"walletId": walletID, "name": "Old name", "status": "DEACTIVATED"})}}
	for i := range 2 {
		got, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: []string{walletID}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
			t.Errorf("Execute %d mismatch (-want +got):\n%s", i, diff)
		}
	}
	w, err := f.store.Wallet(context.Background(), company, walletID)
	if err != nil {
		t.Fatal(err)
	}
	if w.Status != custody.StatusDeactivated || w.Valid || w.Version != 2 {
		t.Errorf("wallet = %+v, want DEACTIVATED, not valid, version 2", w)
	}
}

func TestChangeGuards(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.put(t, company, "ZTEST-NOBENF-DEACTIVATE", func(w *custody.Wallet) { w.Status, w.Valid = custody.StatusDeactivated, false })
	f.put(t, company, "ZTEST-NOBENF-PENDING000", func(w *custody.Wallet) { w.Status = custody.StatusPendingAuth })
	f.put(t, "ZACME", "ZACME-NOBENF-0000000001", nil)
	tests := []struct {
		name    string
		id      string
		wantErr wantErr
	}{
		{"unknown wallet", "ZTEST-NOBENF-NOSUCHWALL", wantErr{codes.NotFound, apperr.CodeNotFound, "walletId"}},
		{"other company's wallet", "ZACME-NOBENF-0000000001", wantErr{codes.NotFound, apperr.CodeNotFound, "walletId"}},
		{"deactivated", "ZTEST-NOBENF-DEACTIVATE", wantErr{codes.FailedPrecondition, apperr.CodeDeactivated, "walletId"}},
		{"pending authorisation", "ZTEST-NOBENF-PENDING000", wantErr{codes.FailedPrecondition, apperr.CodeConflict, "walletId"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, sr := range []*pluginv1.ServiceRequest{renameRequest(t, "SERV-REQ-G-"+tt.name, tt.id, "X"), deactivateRequest(t, "SERV-REQ-H-"+tt.name, tt.id)} {
				_, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: sr})
				checkErr(t, err, tt.wantErr)
				_, err = f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: []string{tt.id}})
				checkErr(t, err, tt.wantErr)
			}
		})
	}
	if w, err := f.store.Wallet(context.Background(), "ZACME", "ZACME-NOBENF-0000000001"); err != nil || w.Version != 1 {
		t.Errorf("another company's wallet = %+v, %v; want untouched", w, err)
	}
}

func TestExecuteRevalidates(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.put(t, company, walletID, nil)
	rename := renameRequest(t, "SERV-REQ-R2", walletID, "Later name")
	if _, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: rename}); err != nil {
		t.Fatal(err)
	}
	// Another request deactivates the wallet between the rename's Validate and its Execute.
	if _, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: deactivateRequest(t, "SERV-REQ-D2", walletID)}); err != nil {
		t.Fatal(err)
	}
	_, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: rename, EntityIds: []string{walletID}})
	checkErr(t, err, wantErr{codes.FailedPrecondition, apperr.CodeDeactivated, "walletId"})
	_, err = f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: rename, EntityIds: []string{"ZTEST-NOBENF-OTHER"}})
	checkErr(t, err, wantErr{codes.InvalidArgument, apperr.CodeFormat, "entityIds"})
}

func TestConcurrentExecuteOfOneRenameChangesOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.put(t, company, walletID, nil)
	sr := renameRequest(t, "SERV-REQ-R3", walletID, "Raced name")
	const n = 20
	responses := make([]*pluginv1.ExecuteResponse, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: []string{walletID}})
			if err != nil {
				t.Errorf("Execute %d: %v", i, err)
			}
			responses[i] = resp
		}()
	}
	wg.Wait()
	for i := 1; i < n; i++ {
		if diff := cmp.Diff(responses[0], responses[i], protocmp.Transform()); diff != "" {
			t.Errorf("response %d differs (-0 +%d):\n%s", i, i, diff)
		}
	}
	w, err := f.store.Wallet(context.Background(), company, walletID)
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "Raced name" || w.Version != 2 {
		t.Errorf("wallet = %+v, want renamed once (version 2)", w)
	}
}
