package validation_test

import (
	"slices"
	"testing"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	commonv1 "github.com/zcustody/suite/proto/common/v1"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/compliance"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	"github.com/zcustody/suite/services/interchange/withdrawal"
	"github.com/zcustody/suite/services/servicedesk"
	"github.com/zcustody/suite/services/trading"
)

// TestEnumsMatchTheDomain: the values the document lists for a filter (the field's `in`
// rule) are the ones the service's domain knows, so neither refuses what the other accepts.
func TestEnumsMatchTheDomain(t *testing.T) {
	t.Parallel()
	field := func(m proto.Message, name protoreflect.Name) protoreflect.FieldDescriptor {
		return m.ProtoReflect().Descriptor().Fields().ByName(name)
	}
	tests := []struct {
		field protoreflect.FieldDescriptor
		want  []string
	}{
		{field(&servicedeskv1.SearchRequestsRequest{}, "statuses"), servicedesk.Statuses},
		{field(&servicedeskv1.SearchRequestsRequest{}, "request_types"), servicedesk.RequestTypes},
		{field(&servicedeskv1.ListProductsRequest{}, "request_types"), servicedesk.RequestTypes},
		{field(&tradingv1.SearchWalletsRequest{}, "statuses"), trading.Statuses()},
		{field(&interchangev1.SearchSettlementsRequest{}, "statuses"), settlement.Statuses()},
		{field(&interchangev1.SearchWithdrawalsRequest{}, "statuses"), withdrawal.Statuses()},
		{field(&interchangev1.ListWhitelistedAddressesRequest{}, "statuses"), address.Statuses()},
		{field(&interchangev1.ConfirmWithdrawalRequest{}, "withdrawal_confirmation"), []string{withdrawal.DecisionAccept, withdrawal.DecisionDecline}},
		{field(&compliancev1.SearchVaspsRequest{}, "travel_rule_methods"), compliance.TravelRuleMethods()},
		{field(&commonv1.Sort{}, "order"), []string{"ASC", "DESC"}},
	}
	for _, tt := range tests {
		rules, _ := proto.GetExtension(tt.field.Options(), validate.E_Field).(*validate.FieldRules)
		got := rules.GetString().GetIn()
		if tt.field.IsList() {
			got = rules.GetRepeated().GetItems().GetString().GetIn()
		}
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(tt.want))) {
			t.Errorf("%s: the document lists %v, the domain knows %v", tt.field.FullName(), got, tt.want)
		}
	}
}
