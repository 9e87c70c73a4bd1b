package servicedesk

import (
	"context"
	"errors"

	"github.com/zcustody/suite/platform/apperr"
)

// Catalog returns the catalog services matching f (the caller's entitlements always apply).
func (d *Desk) Catalog(ctx context.Context, f CatalogFilter) ([]Service, error) {
	return d.store.FindCatalog(ctx, f)
}

// IsCustodian reports whether company id is the custodian's own company (a company without a
// record is not).
func (d *Desk) IsCustodian(ctx context.Context, id string) (bool, error) {
	c, err := d.store.Company(ctx, id)
	if errors.Is(err, apperr.ErrNotFound) {
		return false, nil
	}
	return err == nil && c.Custodian, err
}

// Search returns one page of the company's requests matching f, and the number of matches.
func (d *Desk) Search(ctx context.Context, f RequestFilter) ([]Request, int64, error) {
	return d.store.SearchRequests(ctx, f)
}

// Trails returns the actor's company's requests among ids, by id; the others' are left out.
func (d *Desk) Trails(ctx context.Context, a Actor, ids []string) (map[string]Request, error) {
	found, err := d.store.RequestsByID(ctx, a.CompanyID, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]Request, len(found))
	for _, r := range found {
		byID[r.ID] = r
	}
	return byID, nil
}

// Verify recomputes the audit chain of request id, whatever its company (internal systems
// only): it returns the number of versions and, when the chain does not verify, where it
// stops (nil when intact).
func (d *Desk) Verify(ctx context.Context, id string) (int32, *ChainError, error) {
	r, err := d.store.RequestByIDAnyCompany(ctx, id)
	if errors.Is(err, apperr.ErrNotFound) {
		return 0, nil, apperr.NotFound("requestId", id)
	}
	if err != nil {
		return 0, nil, err
	}
	var broken *ChainError
	if err := VerifyChain(r.ID, r.BodyHash, r.Status, r.Versions); err != nil && !errors.As(err, &broken) {
		return 0, nil, err
	}
	return int32(len(r.Versions)), broken, nil
}
