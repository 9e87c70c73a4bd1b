package address

import (
	"context"
	"errors"

	"github.com/zcustody/suite/platform/apperr"
)

// PlanWhitelist checks a 0x0007-007 request: that the address is not ACTIVE already, and the
// VASP and beneficiary with compliance. It returns the address the request would create,
// under a fresh id and without a status (not whitelisted until executed). It writes nothing.
func (b *Book) PlanWhitelist(ctx context.Context, r Request, w Whitelist) (Whitelisted, error) {
	if err := b.notWhitelisted(ctx, r.CompanyID, w.Blockchain, w.Address); err != nil {
		return Whitelisted{}, err
	}
	checked, err := b.check(ctx, r.CompanyID, w)
	if err != nil {
		return Whitelisted{}, err
	}
	planned := w.NewWhitelisted(NewID(), r.CompanyID, r.MakerEmail, r.ID, checked, b.now())
	planned.Status = ""
	return planned, nil
}

// Whitelist inserts the address under the id PlanWhitelist reserved. The VASP and the
// beneficiary are checked again: either may have been deactivated while the request waited
// for approval. Every step is safe to repeat: an address this request already inserted
// answers as success, built from what is stored.
func (b *Book) Whitelist(ctx context.Context, r Request, w Whitelist, id string) (Whitelisted, error) {
	stored, err := b.store.Whitelisted(ctx, r.CompanyID, id)
	if err == nil {
		return mine(stored, r)
	}
	if !errors.Is(err, apperr.ErrNotFound) {
		return Whitelisted{}, err
	}
	checked, err := b.check(ctx, r.CompanyID, w)
	if err != nil {
		return Whitelisted{}, err
	}
	createdBy := r.MakerEmail
	if createdBy == "" {
		createdBy = r.CompanyID
	}
	stored, err = b.store.InsertWhitelisted(ctx, w.NewWhitelisted(id, r.CompanyID, createdBy, r.ID, checked, b.now()))
	if errors.Is(err, apperr.ErrExists) {
		return Whitelisted{}, AlreadyWhitelisted(w.Blockchain, w.Address)
	}
	if err != nil {
		return Whitelisted{}, err
	}
	return mine(stored, r)
}

// mine returns a stored address if request r created it; another's id is 409 ER-104.
func mine(stored Whitelisted, r Request) (Whitelisted, error) {
	if stored.RequestID != r.ID || stored.CompanyID != r.CompanyID {
		return Whitelisted{}, apperr.Exists("entityIds", "whitelisted address %s already exists", stored.ID)
	}
	return stored, nil
}

// PlanDeactivate returns the company's ACTIVE address a 0x0007-008 request names.
func (b *Book) PlanDeactivate(ctx context.Context, r Request, d Deactivate) (Whitelisted, error) {
	w, err := b.store.ActiveWhitelisted(ctx, r.CompanyID, d.Blockchain, d.Address)
	if errors.Is(err, apperr.ErrNotFound) {
		return Whitelisted{}, apperr.NotFound("address", d.Address)
	}
	return w, err
}

// Deactivate deactivates the reserved address with one conditional update guarded by status
// and version. An address this request already deactivated answers as success; one changed
// concurrently is read again once.
func (b *Book) Deactivate(ctx context.Context, r Request, d Deactivate, id string) (Whitelisted, error) {
	for attempt := 0; ; attempt++ {
		w, err := b.store.Whitelisted(ctx, r.CompanyID, id)
		if errors.Is(err, apperr.ErrNotFound) {
			return Whitelisted{}, apperr.NotFound("address", d.Address)
		}
		if err != nil {
			return Whitelisted{}, err
		}
		if w.Blockchain != d.Blockchain || Normalize(w.Blockchain, w.Address) != Normalize(d.Blockchain, d.Address) {
			return Whitelisted{}, apperr.Invalid(apperr.CodeFormat, "entityIds", "entityIds names another address than the payload")
		}
		if w.DeactivatedBy == r.ID {
			return w, nil
		}
		if err := w.CheckMove(StatusDeactivated); err != nil {
			return Whitelisted{}, err
		}
		w, err = b.store.DeactivateWhitelisted(ctx, w, r.ID)
		if errors.Is(err, apperr.ErrConflict) && attempt == 0 {
			continue
		}
		return w, err
	}
}

// notWhitelisted refuses an address the company already holds ACTIVE on the blockchain.
func (b *Book) notWhitelisted(ctx context.Context, companyID, blockchain, addr string) error {
	_, err := b.store.ActiveWhitelisted(ctx, companyID, blockchain, addr)
	switch {
	case err == nil:
		return AlreadyWhitelisted(blockchain, addr)
	case errors.Is(err, apperr.ErrNotFound):
		return nil
	}
	return err
}

// check asks compliance about the VASP and, when given, the beneficiary.
func (b *Book) check(ctx context.Context, companyID string, w Whitelist) (Checked, error) {
	var c Checked
	var err error
	if c.VaspName, err = b.directory.Vasp(ctx, companyID, w.VaspID); err != nil {
		return c, err
	}
	if w.BeneficiaryID != "" {
		c.BeneficiaryName, err = b.directory.Beneficiary(ctx, "beneficiaryId", companyID, w.BeneficiaryID)
	}
	return c, err
}
