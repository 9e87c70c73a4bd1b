package webhook

// Sealing at rest: webhook secrets and signing seeds are stored encrypted with AES-256-GCM
// under a key-encryption key (KEK) from the deployment's secret, with the subscription id as
// associated data, so a ciphertext copied onto another subscription does not open. Each
// ciphertext keeps the id of its KEK, so the KEK rotates: add a new key and make it current
// (new writes use it), run a pass that reseals every value for which NeedsReseal is true, and
// only then remove the old key.

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// KeySize is the size of a key-encryption key: AES-256.
const KeySize = 32

// NonceSize is the size of the random GCM nonce of each sealed value.
const NonceSize = 12

// maxKeyIDLen bounds a key id: it is stored with every ciphertext.
const maxKeyIDLen = 32

// ErrUnknownKey is returned by Open for a value sealed with a key the keyring does not hold,
// typically a key removed before the rotation pass resealed all its values.
var ErrUnknownKey = errors.New("webhook seal: unknown key")

// ErrOpen is returned by Open for a value that does not authenticate: tampered, or sealed for
// another subscription (other associated data).
var ErrOpen = errors.New("webhook seal: cannot open")

// Sealed is one value encrypted at rest, as a store keeps it in a document.
type Sealed struct {
	// KeyID names the key-encryption key that sealed the value.
	KeyID string `bson:"keyId" json:"keyId"`
	// Nonce is the random GCM nonce, NonceSize bytes.
	Nonce []byte `bson:"nonce" json:"nonce"`
	// Ciphertext is the GCM output: the encrypted value followed by the 16-byte tag.
	Ciphertext []byte `bson:"ciphertext" json:"ciphertext"`
}

// String is the compact form keyId:nonce:ciphertext, the last two in unpadded URL-safe
// base64; ParseSealed reads it back. It holds nothing secret.
func (s Sealed) String() string {
	return s.KeyID + ":" + base64.RawURLEncoding.EncodeToString(s.Nonce) + ":" +
		base64.RawURLEncoding.EncodeToString(s.Ciphertext)
}

// ParseSealed reads the compact form made by Sealed.String.
func ParseSealed(text string) (Sealed, error) {
	parts := strings.Split(text, ":")
	if len(parts) != 3 || validKeyID(parts[0]) != nil {
		return Sealed{}, errors.New("webhook seal: want keyId:nonce:ciphertext")
	}
	nonce, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || len(nonce) != NonceSize {
		return Sealed{}, fmt.Errorf("webhook seal: want a %d-byte nonce in unpadded URL-safe base64", NonceSize)
	}
	ct, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return Sealed{}, errors.New("webhook seal: ciphertext not unpadded URL-safe base64")
	}
	return Sealed{KeyID: parts[0], Nonce: nonce, Ciphertext: ct}, nil
}

// Keyring holds the key-encryption keys: the current one seals new values, the others only
// open. It is immutable and safe for concurrent use; a rotation builds a new Keyring. It keeps
// only the AES ciphers, never the key text, and its String and Format show the key ids only.
type Keyring struct {
	current string
	ids     []string // sorted
	aeads   map[string]cipher.AEAD
}

// NewKeyring makes a keyring from explicit keys by id, each KeySize bytes; current names the
// key that seals. The key bytes are not retained.
func NewKeyring(current string, keys map[string][]byte) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("webhook keyring: no keys")
	}
	k := &Keyring{current: current, aeads: make(map[string]cipher.AEAD, len(keys))}
	for id, key := range keys {
		if err := validKeyID(id); err != nil {
			return nil, fmt.Errorf("webhook keyring: %w", err)
		}
		aead, err := newAEAD(id, key)
		if err != nil {
			return nil, err
		}
		k.aeads[id] = aead
		k.ids = append(k.ids, id)
	}
	slices.Sort(k.ids)
	if err := k.checkCurrent(); err != nil {
		return nil, err
	}
	return k, nil
}

// ParseKeyring makes a keyring from configuration text: keys is a comma-separated list of
// id=key, each key KeySize bytes in standard (padded) base64, and current names the key that
// seals. Spaces around entries are ignored. Errors name the offending id, or the entry's
// position when the id itself is malformed, and never show key text.
func ParseKeyring(current, keys string) (*Keyring, error) {
	k := &Keyring{current: current, aeads: map[string]cipher.AEAD{}}
	for i, entry := range strings.Split(keys, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		id, b64, ok := strings.Cut(entry, "=")
		id = strings.TrimSpace(id)
		if !ok {
			return nil, fmt.Errorf("webhook keyring: entry %d: want id=base64", i+1)
		}
		if err := validKeyID(id); err != nil {
			// The malformed id may be key text pasted in the wrong place: show its position only.
			return nil, fmt.Errorf("webhook keyring: entry %d: %w", i+1, err)
		}
		if _, dup := k.aeads[id]; dup {
			return nil, fmt.Errorf("webhook keyring: key %q given twice", id)
		}
		key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
		if err != nil {
			return nil, fmt.Errorf("webhook keyring: key %q: not standard base64", id)
		}
		aead, err := newAEAD(id, key)
		clear(key)
		if err != nil {
			return nil, err
		}
		k.aeads[id] = aead
		k.ids = append(k.ids, id)
	}
	if len(k.ids) == 0 {
		return nil, errors.New("webhook keyring: no keys")
	}
	slices.Sort(k.ids)
	if err := k.checkCurrent(); err != nil {
		return nil, err
	}
	return k, nil
}

// validKeyID accepts 1 to maxKeyIDLen characters of A-Z a-z 0-9 _ -. Its error does not
// repeat the id.
func validKeyID(id string) error {
	if id == "" || len(id) > maxKeyIDLen {
		return fmt.Errorf("key id must be 1 to %d characters", maxKeyIDLen)
	}
	for _, c := range []byte(id) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return errors.New("key id may hold only A-Z a-z 0-9 _ -")
		}
	}
	return nil
}

// newAEAD makes the AES-256-GCM cipher of one key.
func newAEAD(id string, key []byte) (cipher.AEAD, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("webhook keyring: key %q is %d bytes, want %d", id, len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("webhook keyring: key %q: %w", id, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("webhook keyring: key %q: %w", id, err)
	}
	return aead, nil
}

// checkCurrent requires the current id to name a key of the ring.
func (k *Keyring) checkCurrent() error {
	if k.current == "" {
		return errors.New("webhook keyring: no current key id")
	}
	if _, ok := k.aeads[k.current]; !ok {
		if validKeyID(k.current) != nil {
			return errors.New("webhook keyring: the current key id is malformed")
		}
		return fmt.Errorf("webhook keyring: current key %q is not among the keys", k.current)
	}
	return nil
}

// Current is the id of the key that seals new values.
func (k *Keyring) Current() string {
	if k == nil {
		return ""
	}
	return k.current
}

// IDs are the ids of all keys, sorted.
func (k *Keyring) IDs() []string {
	if k == nil {
		return nil
	}
	return slices.Clone(k.ids)
}

// String shows the key ids and which is current, never key material.
func (k Keyring) String() string {
	return fmt.Sprintf("webhook.Keyring{current: %q, ids: %q}", k.current, k.ids)
}

// Format prints String for every verb (%v, %+v, %#v, %x, ...), so no formatting of a
// Keyring reaches its ciphers.
func (k Keyring) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, k.String()) }

// aead returns the cipher of key id.
func (k *Keyring) aead(id string) (cipher.AEAD, error) {
	if k != nil {
		if aead, ok := k.aeads[id]; ok {
			return aead, nil
		}
	}
	if validKeyID(id) != nil {
		return nil, fmt.Errorf("%w: malformed key id", ErrUnknownKey)
	}
	return nil, fmt.Errorf("%w %q (removed before its values were resealed?)", ErrUnknownKey, id)
}

// Seal encrypts plaintext with the current key and a random nonce; associated is the
// subscription id, which Open must be given again. A subscription's secret and its signing
// seed are sealed under different labels of it (e.g. id + "/secret", id + "/seed"), so that
// one cannot be swapped for the other.
func (k *Keyring) Seal(plaintext []byte, associated string) (Sealed, error) {
	if associated == "" {
		return Sealed{}, errors.New("webhook seal: want the subscription id as associated data")
	}
	if k == nil || k.current == "" {
		return Sealed{}, errors.New("webhook seal: no current key")
	}
	aead, err := k.aead(k.current)
	if err != nil {
		return Sealed{}, err
	}
	nonce := make([]byte, NonceSize)
	if _, err := rand.Read(nonce); err != nil {
		return Sealed{}, fmt.Errorf("webhook seal: nonce: %w", err)
	}
	return Sealed{
		KeyID:      k.current,
		Nonce:      nonce,
		Ciphertext: aead.Seal(nil, nonce, plaintext, []byte(associated)),
	}, nil
}

// Open decrypts s with the key it names. It fails with ErrUnknownKey when the keyring lacks
// that key, and with ErrOpen when s does not authenticate under associated (tampered, or
// sealed for another subscription).
func (k *Keyring) Open(s Sealed, associated string) ([]byte, error) {
	aead, err := k.aead(s.KeyID)
	if err != nil {
		return nil, err
	}
	if len(s.Nonce) != NonceSize {
		return nil, fmt.Errorf("%w: value sealed with key %q has a %d-byte nonce, want %d",
			ErrOpen, s.KeyID, len(s.Nonce), NonceSize)
	}
	plaintext, err := aead.Open(nil, s.Nonce, s.Ciphertext, []byte(associated))
	if err != nil {
		return nil, fmt.Errorf("%w: value sealed with key %q does not authenticate "+
			"(tampered, or sealed for another subscription)", ErrOpen, s.KeyID)
	}
	return plaintext, nil
}

// NeedsReseal reports whether s was sealed with a key other than the current one, so the
// rotation pass must reseal it before that key is removed.
func (k *Keyring) NeedsReseal(s Sealed) bool { return s.KeyID != k.Current() }

// Reseal opens s and seals its plaintext again with the current key and a new nonce, for the
// rotation pass; it reseals even a value already under the current key.
func (k *Keyring) Reseal(s Sealed, associated string) (Sealed, error) {
	plaintext, err := k.Open(s, associated)
	if err != nil {
		return Sealed{}, err
	}
	defer clear(plaintext)
	return k.Seal(plaintext, associated)
}
