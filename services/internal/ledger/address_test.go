package ledger_test

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/zcustody/suite/services/internal/ledger"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Published vectors: BIP-173, EIP-55, the XRP genesis account, and XLM keys from Stellar's docs.
func TestEncodeKnownVectors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ledger, key, want string
	}{
		{ledger.BTC, "751e76e8199196d454941c45d1b3a323f1433bd6", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"},
		{ledger.ETH, "5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"},
		{ledger.ETH, "fb6916095ca1df60bb79ce92ce3ea74c37c5d359", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"},
		{ledger.ETH, "dbf03b407c01e7cd3cbea99509d93f8dddc8c6fb", "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB"},
		{ledger.ETH, "d1220a0cf47c7b9be7a2e6ba89f429762e7b9adb", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb"},
		{ledger.XRP, "b5f762798a53d543a014caf8b297cff8f2f937e8", "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh"},
		{ledger.XRP, "0000000000000000000000000000000000000000", "rrrrrrrrrrrrrrrrrrrrrhoLvTp"},
		{ledger.XLM, "0000000000000000000000000000000000000000000000000000000000000000", "GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			got, err := ledger.Encode(tt.ledger, mustHex(t, tt.key))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Encode(%s, %s) = %s, want %s", tt.ledger, tt.key, got, tt.want)
			}
			if err := ledger.Validate(tt.ledger, got); err != nil {
				t.Errorf("Validate(%s) = %v", got, err)
			}
		})
	}
}

func TestValidateAcceptsRealAddresses(t *testing.T) {
	t.Parallel()
	tests := []struct{ ledger, address string }{
		{ledger.BTC, "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"},
		{ledger.BTC, "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4"}, // BIP-173: all upper case is valid
		{ledger.ETH, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"},
		{ledger.ETH, "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"}, // no checksum (all lower)
		{ledger.ETH, "0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED"}, // no checksum (all upper)
		{ledger.XLM, "GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H"},
		{ledger.XRP, "rDsbeomae4FXwgQTJp9Rs64Qg9vDiTCdBv"},
		{ledger.XRP, "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh"},
	}
	for _, tt := range tests {
		if err := ledger.Validate(tt.ledger, tt.address); err != nil {
			t.Errorf("Validate(%s, %s) = %v, want nil", tt.ledger, tt.address, err)
		}
	}
}

// flip changes the character at i to another one of the same alphabet.
func flip(s string, i int, alphabet string) string {
	j := strings.IndexByte(alphabet, s[i])
	return s[:i] + string(alphabet[(j+1)%len(alphabet)]) + s[i+1:]
}

func TestValidateRefuses(t *testing.T) {
	t.Parallel()
	const (
		btc = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
		eth = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
		xlm = "GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H"
		xrp = "rDsbeomae4FXwgQTJp9Rs64Qg9vDiTCdBv"
	)
	tests := []struct{ name, ledger, address string }{
		{"btc checksum", ledger.BTC, flip(btc, 41, "qpzry9x8gf2tvdw0s3jn54khce6mua7l")},
		{"btc data", ledger.BTC, flip(btc, 10, "qpzry9x8gf2tvdw0s3jn54khce6mua7l")},
		{"btc mixed case", ledger.BTC, "bc1qW508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"},
		{"btc testnet hrp", ledger.BTC, "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"},
		{"btc p2wsh", ledger.BTC, "bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3"},
		{"btc legacy", ledger.BTC, "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"},
		{"btc bad character", ledger.BTC, "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3tb"},
		{"eth checksum", ledger.ETH, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"},
		{"eth short", ledger.ETH, eth[:41]},
		{"eth no prefix", ledger.ETH, eth[2:] + "00"},
		{"eth not hex", ledger.ETH, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg"},
		{"xlm checksum", ledger.XLM, flip(xlm, 55, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")},
		{"xlm data", ledger.XLM, flip(xlm, 20, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")},
		{"xlm secret seed", ledger.XLM, "SBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H"},
		{"xlm length", ledger.XLM, xlm[:55]},
		{"xrp checksum", ledger.XRP, flip(xrp, 33, "rpshnaf39wBUDNEGHJKLM4PQRST7VWXYZ2bcdeCg65jkm8oFqi1tuvAxyz")},
		{"xrp data", ledger.XRP, flip(xrp, 12, "rpshnaf39wBUDNEGHJKLM4PQRST7VWXYZ2bcdeCg65jkm8oFqi1tuvAxyz")},
		{"xrp not base58", ledger.XRP, "rDsbeomae4FXwgQTJp9Rs64Qg9vDiTCdB0"},
		{"xrp bitcoin alphabet", ledger.XRP, "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"},
		{"empty", ledger.ETH, ""},
		{"unknown ledger", "DOGE", btc},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := ledger.Validate(tt.ledger, tt.address); !errors.Is(err, ledger.ErrAddress) {
				t.Errorf("Validate(%s, %q) = %v, want ErrAddress", tt.ledger, tt.address, err)
			}
		})
	}
}

func TestGenerateRoundTrip(t *testing.T) {
	t.Parallel()
	prefixes := map[string]string{ledger.BTC: "bc1q", ledger.ETH: "0x", ledger.XLM: "G", ledger.XRP: "r"}
	for _, code := range ledger.Ledgers() {
		seen := map[string]bool{}
		for range 200 {
			addr, err := ledger.Generate(code)
			if err != nil {
				t.Fatal(err)
			}
			if err := ledger.Validate(code, addr); err != nil {
				t.Fatalf("Validate(Generate(%s)) = %v", code, err)
			}
			if !strings.HasPrefix(addr, prefixes[code]) || seen[addr] {
				t.Fatalf("Generate(%s) = %s: wrong prefix or repeated", code, addr)
			}
			seen[addr] = true
		}
	}
	if _, err := ledger.Generate("DOGE"); err == nil {
		t.Error("Generate(DOGE) succeeded, want an error")
	}
	if _, err := ledger.Encode(ledger.BTC, make([]byte, 19)); err == nil {
		t.Error("Encode(BTC, 19 bytes) succeeded, want an error")
	}
}
