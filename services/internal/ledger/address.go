package ledger

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"golang.org/x/crypto/sha3"
)

// ErrAddress is the error of every address that does not match its ledger's format.
var ErrAddress = errors.New("invalid address")

// Address formats, one per ledger (mainnet only):
//
//   - BTC: bech32 P2WPKH, "bc1q…": witness version 0 and a 20-byte program (BIP-173).
//   - ETH: "0x" and 40 hex digits, EIP-55 mixed-case checksum (all lower or all upper case
//     carries no checksum and is accepted as well).
//   - XLM: StrKey account id, "G…": version byte 6<<3, 32-byte Ed25519 key, CRC16-XModem,
//     base32 without padding, 56 characters.
//   - XRP: classic address, "r…": version byte 0x00, 20-byte account id, 4-byte double
//     SHA-256 checksum, base58 with the Ripple alphabet.
var keySizes = map[string]int{BTC: 20, ETH: 20, XLM: 32, XRP: 20}

// Generate returns a fresh deposit address on the ledger. The keys of deposit addresses live
// in the custodian's HSM: here the address's key material (the 20-byte key hash, or the
// 32-byte public key for XLM) is drawn from crypto/rand, as an HSM-held key would provide it.
func Generate(ledgerCode string) (string, error) {
	size, ok := keySizes[ledgerCode]
	if !ok {
		return "", fmt.Errorf("generate address: unsupported ledger %q", ledgerCode)
	}
	key := make([]byte, size)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("generate address: %w", err)
	}
	return Encode(ledgerCode, key)
}

// Encode renders key material as the ledger's address: a 20-byte witness program (BTC), a
// 20-byte account (ETH, XRP) or a 32-byte Ed25519 public key (XLM).
func Encode(ledgerCode string, key []byte) (string, error) {
	size, ok := keySizes[ledgerCode]
	if !ok {
		return "", fmt.Errorf("encode address: unsupported ledger %q", ledgerCode)
	}
	if len(key) != size {
		return "", fmt.Errorf("encode address: %s needs %d bytes of key material, got %d", ledgerCode, size, len(key))
	}
	switch ledgerCode {
	case BTC:
		return segwitEncode(key), nil
	case ETH:
		return "0x" + eip55(hex.EncodeToString(key)), nil
	case XLM:
		return strKeyEncode(key), nil
	}
	return xrpEncode(key), nil
}

// Validate checks that address is well formed for the ledger, checksum included. It wraps
// ErrAddress.
func Validate(ledgerCode, address string) error {
	var err error
	switch ledgerCode {
	case BTC:
		_, err = segwitDecode(address)
	case ETH:
		err = ethValidate(address)
	case XLM:
		_, err = strKeyDecode(address)
	case XRP:
		_, err = xrpDecode(address)
	default:
		return fmt.Errorf("%w: unsupported ledger %q", ErrAddress, ledgerCode)
	}
	if err != nil {
		return fmt.Errorf("%w: %s address %q: %v", ErrAddress, ledgerCode, address, err)
	}
	return nil
}

// --- ETH: EIP-55 ---

func eip55(lowerHex string) string {
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte(lowerHex))
	sum := h.Sum(nil)
	out := []byte(lowerHex)
	for i, c := range out {
		nibble := sum[i/2] >> 4
		if i%2 == 1 {
			nibble = sum[i/2] & 0x0f
		}
		if c >= 'a' && c <= 'f' && nibble >= 8 {
			out[i] = c - 'a' + 'A'
		}
	}
	return string(out)
}

func ethValidate(address string) error {
	digits, ok := strings.CutPrefix(address, "0x")
	if !ok || len(digits) != 40 {
		return errors.New("want 0x and 40 hex digits")
	}
	if _, err := hex.DecodeString(digits); err != nil {
		return errors.New("want 0x and 40 hex digits")
	}
	lower := strings.ToLower(digits)
	if digits == lower || digits == strings.ToUpper(digits) {
		return nil
	}
	if eip55(lower) != digits {
		return errors.New("EIP-55 checksum mismatch")
	}
	return nil
}

// --- XLM: StrKey ---

const strKeyAccountVersion = 6 << 3

var strKeyEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

func strKeyEncode(key []byte) string {
	payload := append([]byte{strKeyAccountVersion}, key...)
	payload = binary.LittleEndian.AppendUint16(payload, crc16XModem(payload))
	return strKeyEncoding.EncodeToString(payload)
}

func strKeyDecode(address string) ([]byte, error) {
	if len(address) != 56 {
		return nil, errors.New("want 56 characters")
	}
	raw, err := strKeyEncoding.DecodeString(address)
	if err != nil || len(raw) != 35 {
		return nil, errors.New("not base32")
	}
	if raw[0] != strKeyAccountVersion {
		return nil, errors.New("not an account id (G…)")
	}
	if binary.LittleEndian.Uint16(raw[33:]) != crc16XModem(raw[:33]) {
		return nil, errors.New("checksum mismatch")
	}
	return raw[1:33], nil
}

func crc16XModem(data []byte) uint16 {
	var crc uint16
	for _, b := range data {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// --- XRP: base58check with the Ripple alphabet ---

const rippleAlphabet = "rpshnaf39wBUDNEGHJKLM4PQRST7VWXYZ2bcdeCg65jkm8oFqi1tuvAxyz"

func xrpEncode(accountID []byte) string {
	payload := append([]byte{0x00}, accountID...)
	payload = append(payload, doubleSHA256(payload)[:4]...)
	return base58Encode(payload)
}

func xrpDecode(address string) ([]byte, error) {
	if len(address) < 25 || len(address) > 35 || !strings.HasPrefix(address, "r") {
		return nil, errors.New("want r and 24 to 34 base58 characters")
	}
	raw, err := base58Decode(address)
	if err != nil {
		return nil, err
	}
	if len(raw) != 25 || raw[0] != 0x00 {
		return nil, errors.New("not a classic account address")
	}
	if !bytes.Equal(doubleSHA256(raw[:21])[:4], raw[21:]) {
		return nil, errors.New("checksum mismatch")
	}
	return raw[1:21], nil
}

func doubleSHA256(data []byte) []byte {
	first := sha256.Sum256(data)
	second := sha256.Sum256(first[:])
	return second[:]
}

func base58Encode(data []byte) string {
	n := new(big.Int).SetBytes(data)
	radix, mod := big.NewInt(58), new(big.Int)
	var out []byte
	for n.Sign() > 0 {
		n.DivMod(n, radix, mod)
		out = append(out, rippleAlphabet[mod.Int64()])
	}
	for _, b := range data {
		if b != 0 {
			break
		}
		out = append(out, rippleAlphabet[0])
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

func base58Decode(s string) ([]byte, error) {
	n, radix := new(big.Int), big.NewInt(58)
	zeros := 0
	for i, c := range []byte(s) {
		d := strings.IndexByte(rippleAlphabet, c)
		if d < 0 {
			return nil, fmt.Errorf("character %q is not base58", c)
		}
		if d == 0 && i == zeros {
			zeros++
		}
		n.Mul(n, radix).Add(n, big.NewInt(int64(d)))
	}
	return append(make([]byte, zeros), n.Bytes()...), nil
}

// --- BTC: bech32 segwit v0 (BIP-173) ---

const (
	bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
	btcHRP        = "bc"
)

func segwitEncode(program []byte) string {
	data := append([]byte{0}, convertBits(program, 8, 5, true)...)
	values := append(hrpExpand(btcHRP), data...)
	mod := bech32Polymod(append(values, 0, 0, 0, 0, 0, 0)) ^ 1
	for i := range 6 {
		data = append(data, byte(mod>>(5*(5-i)))&31)
	}
	var b strings.Builder
	b.WriteString(btcHRP + "1")
	for _, d := range data {
		b.WriteByte(bech32Charset[d])
	}
	return b.String()
}

func segwitDecode(address string) ([]byte, error) {
	if len(address) != 42 {
		return nil, errors.New("want a 42-character bc1q… (P2WPKH) address")
	}
	lower := strings.ToLower(address)
	if address != lower && address != strings.ToUpper(address) {
		return nil, errors.New("mixed case")
	}
	rest, ok := strings.CutPrefix(lower, btcHRP+"1")
	if !ok {
		return nil, errors.New("want the bc1 prefix")
	}
	data := make([]byte, len(rest))
	for i := range len(rest) {
		d := strings.IndexByte(bech32Charset, rest[i])
		if d < 0 {
			return nil, fmt.Errorf("character %q is not bech32", rest[i])
		}
		data[i] = byte(d)
	}
	if bech32Polymod(append(hrpExpand(btcHRP), data...)) != 1 {
		return nil, errors.New("checksum mismatch")
	}
	data = data[:len(data)-6]
	if data[0] != 0 {
		return nil, errors.New("not witness version 0")
	}
	program, err := regroup(data[1:])
	if err != nil || len(program) != 20 {
		return nil, errors.New("not a 20-byte witness program")
	}
	return program, nil
}

// regroup turns 5-bit groups back into bytes; the padding must be under 5 bits and zero.
func regroup(data []byte) ([]byte, error) {
	if bits := len(data) * 5 % 8; bits >= 5 || data[len(data)-1]&(1<<bits-1) != 0 {
		return nil, errors.New("bad padding")
	}
	return convertBits(data, 5, 8, false), nil
}

func convertBits(data []byte, from, to uint, pad bool) []byte {
	var acc, bits uint
	var out []byte
	maxv := uint(1)<<to - 1
	for _, v := range data {
		acc = acc<<from | uint(v)
		bits += from
		for bits >= to {
			bits -= to
			out = append(out, byte(acc>>bits&maxv))
		}
	}
	if pad && bits > 0 {
		out = append(out, byte(acc<<(to-bits)&maxv))
	}
	return out
}

func hrpExpand(hrp string) []byte {
	out := make([]byte, 0, 2*len(hrp)+1)
	for i := range len(hrp) {
		out = append(out, hrp[i]>>5)
	}
	out = append(out, 0)
	for i := range len(hrp) {
		out = append(out, hrp[i]&31)
	}
	return out
}

func bech32Polymod(values []byte) uint32 {
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	for _, v := range values {
		top := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := range 5 {
			if top>>i&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	return chk
}
