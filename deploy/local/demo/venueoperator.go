package demo

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/services/servicedesk"
	servicedeskstore "github.com/zcustody/suite/services/servicedesk/store"
)

// VenueOperatorKeys names the demo keys an onboarded venue operator signs with: BYBIT's
// operator's (its company key, zbybit-company.pem, and its users' keys).
const VenueOperatorKeys = "zbybit"

// OnboardVenueOperator writes into the service desk's database a company id that operates venue,
// with the demo BYBIT operator's company key, and a MAKER, a CHECKER and a VIEWER entitled
// to settlement instructions (0x0003-003), as the service desk onboards a venue's operator.
// Tests give each venue of their own an operator of its own this way.
func OnboardVenueOperator(ctx context.Context, client *mongo.Client, id, venue string) error {
	sd := servicedeskstore.New(client.Database("servicedesk"))
	pub, err := Key(VenueOperatorKeys + "-company.pub.pem")
	if err != nil {
		return err
	}
	company := servicedesk.Company{ID: id, Name: "Operator of " + venue, Active: true, PublicKeys: []string{string(pub)},
		DomainID: DomainID(id), VenueIDs: []string{venue}}
	if err := sd.PutCompany(ctx, company); err != nil {
		return err
	}
	for role, roles := range map[string][]string{"maker": {principal.RoleMaker}, "checker": {principal.RoleChecker}, "viewer": {principal.RoleViewer}} {
		userPub, err := Key(VenueOperatorKeys + "-" + role + ".pub.pem")
		if err != nil {
			return err
		}
		short := companyShort(id)
		user := servicedesk.User{ID: UserID(short, role), Email: UserEmail(short, role), CompanyID: id, Roles: roles,
			Entitlements: []string{"0x0003-003"}, Active: true, PublicKey: string(userPub)}
		if err := sd.PutUser(ctx, user); err != nil {
			return fmt.Errorf("operator %s: %w", id, err)
		}
	}
	return nil
}

// companyShort is a company's short name in its users' e-mails: ZTEST → ztest.
func companyShort(id string) string { return strings.ToLower(id) }
