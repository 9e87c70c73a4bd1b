package whitelist

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
)

// whitelist inserts the address under its reserved id. The VASP and the beneficiary are
// checked again: either may have been deactivated while the request waited for approval.
// Every step is safe to repeat: an address this request already inserted answers as
// success, and the answer is built from what is stored.
func (p *Plugin) whitelist(ctx context.Context, r *pluginv1.ServiceRequest, w address.Whitelist, id string) (*pluginv1.ExecuteResponse, error) {
	stored, err := p.store.Whitelisted(ctx, r.GetCompanyId(), id)
	if err == nil {
		return p.mine(stored, r)
	}
	if !errors.Is(err, apperr.ErrNotFound) {
		return nil, err
	}
	checked, err := p.check(ctx, r.GetCompanyId(), w)
	if err != nil {
		return nil, err
	}
	createdBy := r.GetMakerEmail()
	if createdBy == "" {
		createdBy = r.GetCompanyId()
	}
	stored, err = p.store.InsertWhitelisted(ctx, w.NewWhitelisted(id, r.GetCompanyId(), createdBy, r.GetRequestId(), checked, p.now()))
	if errors.Is(err, apperr.ErrExists) {
		return nil, address.AlreadyWhitelisted(w.Blockchain, w.Address)
	}
	if err != nil {
		return nil, err
	}
	return p.mine(stored, r)
}

// mine answers with a stored address if this request created it.
func (p *Plugin) mine(stored address.Whitelisted, r *pluginv1.ServiceRequest) (*pluginv1.ExecuteResponse, error) {
	if stored.RequestID != r.GetRequestId() || stored.CompanyID != r.GetCompanyId() {
		return nil, &apperr.Error{Status: codes.AlreadyExists, Code: apperr.CodeExists, Field: "entityIds",
			Message: "whitelisted address " + stored.ID + " already exists"}
	}
	return executed(stored.ID, stored.Details())
}

// deactivate deactivates the reserved address with one conditional update guarded by status
// and version. An address this request already deactivated answers as success; one changed
// concurrently is read again once.
func (p *Plugin) deactivate(ctx context.Context, r *pluginv1.ServiceRequest, d address.Deactivate, id string) (*pluginv1.ExecuteResponse, error) {
	for attempt := 0; ; attempt++ {
		w, err := p.store.Whitelisted(ctx, r.GetCompanyId(), id)
		if errors.Is(err, apperr.ErrNotFound) {
			return nil, apperr.NotFound("address", d.Address)
		}
		if err != nil {
			return nil, err
		}
		if w.Blockchain != d.Blockchain || address.Normalize(w.Blockchain, w.Address) != address.Normalize(d.Blockchain, d.Address) {
			return nil, apperr.Invalid(apperr.CodeFormat, "entityIds", "entityIds names another address than the payload")
		}
		if w.DeactivatedBy != r.GetRequestId() {
			if err := w.CheckActive(); err != nil {
				return nil, err
			}
			w, err = p.store.DeactivateWhitelisted(ctx, w, r.GetRequestId())
			if errors.Is(err, apperr.ErrConflict) && attempt == 0 {
				continue
			}
			if err != nil {
				return nil, err
			}
		}
		return executed(w.ID, w.Details())
	}
}
