package address_test

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
)

const (
	ethAddr = "0x4332a9b24fcCe803a4082F8764e8C40E1A4E4560"
	btcAddr = "bc1qfadvu32gnn98y5zx4ccghwsjvz5rpzm43dzgpg"
	xlmAddr = "GBUJ5NKM3AGVVM7QTCJ7HXPXHPJ5IWWEAMZDIE7K5ID3TBMDQO4V6U2L"
	xrpAddr = "rG6KU9oECoWxTLhS2HBz2vfySE1sRi5wPu"
)

func wantAppErr(t *testing.T, err error, code, field string) {
	t.Helper()
	var ae *apperr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want %s on %q", err, code, field)
	}
	if ae.Code != code || ae.Field != field {
		t.Errorf("err = %s on %q (%s), want %s on %q", ae.Code, ae.Field, ae.Message, code, field)
	}
}

func valid() map[string]any {
	return map[string]any{"address": []any{ethAddr}, "blockchain": []any{"ETH"}, "vaspId": []any{"VASP-001"},
		"addressPurpose": []any{"INCOMING, OUTGOING"}, "hostedAddress": []any{true}, "beneficiaryId": []any{"BNF-ZTEST-ABCDEFGHIJ"},
		"notes": []any{"  treasury  "}}
}

func with(change map[string]any, drop ...string) map[string]any {
	p := valid()
	maps.Copy(p, change)
	for _, k := range drop {
		delete(p, k)
	}
	return p
}

func TestParseWhitelistAccepts(t *testing.T) {
	t.Parallel()
	both := []string{"INCOMING", "OUTGOING"}
	tests := []struct {
		name string
		give map[string]any
		want address.Whitelist
	}{
		{"template form, comma-joined purposes", valid(), address.Whitelist{Address: ethAddr, Blockchain: "ETH", Purposes: both,
			VaspID: "VASP-001", BeneficiaryID: "BNF-ZTEST-ABCDEFGHIJ", Notes: "treasury", Hosted: true}},
		{"plain strings, purposes as a list", map[string]any{"address": btcAddr, "blockchain": "BTC", "vaspId": "VASP-002",
			"addressPurpose": []any{"OUTGOING", "INCOMING", "INCOMING"}}, address.Whitelist{Address: btcAddr, Blockchain: "BTC", Purposes: both, VaspID: "VASP-002"}},
		{"purpose as a string", map[string]any{"address": xlmAddr, "blockchain": "XLM", "vaspId": "V", "addressPurpose": "INCOMING",
			"hostedAddress": false, "notes": "", "beneficiaryId": ""}, address.Whitelist{Address: xlmAddr, Blockchain: "XLM", Purposes: []string{"INCOMING"}, VaspID: "V"}},
		{"XRP", map[string]any{"address": xrpAddr, "blockchain": "XRP", "vaspId": "V", "addressPurpose": []any{"OUTGOING"}},
			address.Whitelist{Address: xrpAddr, Blockchain: "XRP", Purposes: []string{"OUTGOING"}, VaspID: "V"}},
		{"ETH all lower case", with(map[string]any{"address": strings.ToLower(ethAddr)}, "beneficiaryId", "notes", "hostedAddress"),
			address.Whitelist{Address: strings.ToLower(ethAddr), Blockchain: "ETH", Purposes: both, VaspID: "VASP-001"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := address.ParseWhitelist(tt.give)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseWhitelist() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseWhitelistRefuses(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 65)
	mixedBad := "0x4332A9b24fcCe803a4082F8764e8C40E1A4E4560" // one letter's case changed: checksum fails
	tests := []struct {
		name      string
		give      map[string]any
		wantCode  string
		wantField string
	}{
		{"unknown field", with(map[string]any{"currency": "ETH"}), apperr.CodeFormat, "currency"},
		{"address missing", with(nil, "address"), apperr.CodeMissing, "address"},
		{"address null", with(map[string]any{"address": nil}), apperr.CodeMissing, "address"},
		{"address blank", with(map[string]any{"address": []any{"  "}}), apperr.CodeBlank, "address"},
		{"address empty list", with(map[string]any{"address": []any{}}), apperr.CodeEmptyList, "address"},
		{"address two values", with(map[string]any{"address": []any{ethAddr, ethAddr}}), apperr.CodeFormat, "address"},
		{"address a number", with(map[string]any{"address": 12.0}), apperr.CodeFormat, "address"},
		{"address too long", with(map[string]any{"address": strings.Repeat("0", 129)}), apperr.CodeLength, "address"},
		{"blockchain missing", with(nil, "blockchain"), apperr.CodeMissing, "blockchain"},
		{"blockchain blank", with(map[string]any{"blockchain": ""}), apperr.CodeBlank, "blockchain"},
		{"blockchain unsupported", with(map[string]any{"blockchain": "SOL"}), apperr.CodeCurrency, "blockchain"},
		{"blockchain lower case", with(map[string]any{"blockchain": "eth"}), apperr.CodeCurrency, "blockchain"},
		{"ETH bad checksum", with(map[string]any{"address": mixedBad}), apperr.CodeFormat, "address"},
		{"ETH short", with(map[string]any{"address": "0x1234"}), apperr.CodeFormat, "address"},
		{"BTC address on ETH", with(map[string]any{"address": btcAddr}), apperr.CodeFormat, "address"},
		{"ETH address on BTC", with(map[string]any{"blockchain": "BTC"}), apperr.CodeFormat, "address"},
		{"BTC bad checksum", with(map[string]any{"blockchain": "BTC", "address": btcAddr[:41] + "q"}), apperr.CodeFormat, "address"},
		{"XLM bad checksum", with(map[string]any{"blockchain": "XLM", "address": xlmAddr[:55] + "A"}), apperr.CodeFormat, "address"},
		{"XLM lower case", with(map[string]any{"blockchain": "XLM", "address": strings.ToLower(xlmAddr)}), apperr.CodeFormat, "address"},
		{"XRP bad checksum", with(map[string]any{"blockchain": "XRP", "address": xrpAddr[:33] + "v"}), apperr.CodeFormat, "address"},
		{"purpose missing", with(nil, "addressPurpose"), apperr.CodeMissing, "addressPurpose"},
		{"purpose empty list", with(map[string]any{"addressPurpose": []any{}}), apperr.CodeEmptyList, "addressPurpose"},
		{"purpose blank", with(map[string]any{"addressPurpose": []any{" "}}), apperr.CodeBlank, "addressPurpose"},
		{"purpose unknown", with(map[string]any{"addressPurpose": []any{"INCOMING", "BOTH"}}), apperr.CodeFormat, "addressPurpose"},
		{"purpose lower case", with(map[string]any{"addressPurpose": "incoming"}), apperr.CodeFormat, "addressPurpose"},
		{"purpose trailing comma", with(map[string]any{"addressPurpose": []any{"INCOMING,"}}), apperr.CodeFormat, "addressPurpose"},
		{"purpose a number", with(map[string]any{"addressPurpose": []any{1.0}}), apperr.CodeFormat, "addressPurpose"},
		{"vaspId missing", with(nil, "vaspId"), apperr.CodeMissing, "vaspId"},
		{"vaspId blank", with(map[string]any{"vaspId": " "}), apperr.CodeBlank, "vaspId"},
		{"vaspId too long", with(map[string]any{"vaspId": long}), apperr.CodeLength, "vaspId"},
		{"beneficiaryId blank", with(map[string]any{"beneficiaryId": []any{"  "}}), apperr.CodeBlank, "beneficiaryId"},
		{"beneficiaryId too long", with(map[string]any{"beneficiaryId": long}), apperr.CodeLength, "beneficiaryId"},
		{"beneficiaryId a bool", with(map[string]any{"beneficiaryId": true}), apperr.CodeFormat, "beneficiaryId"},
		{"notes too long", with(map[string]any{"notes": strings.Repeat("n", 257)}), apperr.CodeLength, "notes"},
		{"hostedAddress a string", with(map[string]any{"hostedAddress": "true"}), apperr.CodeFormat, "hostedAddress"},
		{"hostedAddress empty list", with(map[string]any{"hostedAddress": []any{}}), apperr.CodeEmptyList, "hostedAddress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := address.ParseWhitelist(tt.give)
			wantAppErr(t, err, tt.wantCode, tt.wantField)
		})
	}
}

func TestParseDeactivate(t *testing.T) {
	t.Parallel()
	got, err := address.ParseDeactivate(map[string]any{"address": []any{xrpAddr}, "blockchain": []any{"XRP"}})
	if err != nil || got != (address.Deactivate{Address: xrpAddr, Blockchain: "XRP"}) {
		t.Errorf("ParseDeactivate() = %+v, %v", got, err)
	}
	tests := []struct {
		name      string
		give      map[string]any
		wantCode  string
		wantField string
	}{
		{"unknown field", map[string]any{"address": xrpAddr, "blockchain": "XRP", "vaspId": "V"}, apperr.CodeFormat, "vaspId"},
		{"address missing", map[string]any{"blockchain": "XRP"}, apperr.CodeMissing, "address"},
		{"blockchain missing", map[string]any{"address": xrpAddr}, apperr.CodeMissing, "blockchain"},
		{"blockchain unsupported", map[string]any{"address": xrpAddr, "blockchain": "DOGE"}, apperr.CodeCurrency, "blockchain"},
		{"address format", map[string]any{"address": xrpAddr, "blockchain": "XLM"}, apperr.CodeFormat, "address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := address.ParseDeactivate(tt.give)
			wantAppErr(t, err, tt.wantCode, tt.wantField)
		})
	}
}

func TestKeysAndIDs(t *testing.T) {
	t.Parallel()
	if address.ActiveKey("ZTEST", "ETH", ethAddr) != address.ActiveKey("ZTEST", "ETH", strings.ToLower(ethAddr)) {
		t.Error("ETH addresses differing in case only have different keys")
	}
	if address.ActiveKey("ZTEST", "BTC", btcAddr) != address.ActiveKey("ZTEST", "BTC", strings.ToUpper(btcAddr)) {
		t.Error("BTC addresses differing in case only have different keys")
	}
	if address.ActiveKey("ZTEST", "XRP", xrpAddr) == address.ActiveKey("ZACME", "XRP", xrpAddr) {
		t.Error("two companies share a key")
	}
	for chain, want := range map[string]string{"BTC": "btc-btc", "ETH": "eth-eth", "XLM": "xlm-xlm", "XRP": "xrp-xrp"} {
		if got := address.BlockchainID(chain); got != want {
			t.Errorf("BlockchainID(%s) = %q, want %q", chain, got, want)
		}
	}
	if id := address.NewID(); !address.IsID(id) || address.IsID(strings.ToUpper(id)) || address.IsID("ZTEST-TW-1") {
		t.Errorf("IsID is wrong around %q", id)
	}
}
