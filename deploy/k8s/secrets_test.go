package k8s_test

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// services are the six gRPC services (the five business services and the
// events log): they trust the gateway's principal key and every internal
// issuer's key.
var services = []string{"compliance", "custody", "events", "interchange", "servicedesk", "trading"}

// gatewayOnly are the Deployments that verify tokens of the gateway alone:
// every service binary requires PRINCIPAL_PUBLIC_KEY_FILE, but the webhook
// dispatcher serves no method (gRPC health only) and trusts no internal
// issuer.
var gatewayOnly = []string{"dispatcher"}

// principalReaders are the Deployments that read the gateway's public key.
var principalReaders = slices.Sorted(slices.Values(slices.Concat(services, gatewayOnly)))

// relays are the five business services: each runs an outbox relay that
// appends to the events service (EVENTS_ADDR), signed under its own name
// (SERVICE_PRIVATE_KEY_FILE). The events service is not one of them.
var relays = []string{"compliance", "custody", "interchange", "servicedesk", "trading"}

// wantSigners are the issuers whose private key is deployed, each in the
// Deployment named like it (an internal system's issuer is its name), the
// gateway's through PRINCIPAL_PRIVATE_KEY_FILE: the gateway and the relays.
var wantSigners = []string{"compliance", "custody", "gateway", "interchange", "servicedesk", "trading"}

// externalIssuers are the issuers the services trust whose private key is
// deployed nowhere (it belongs to a system outside the suite): issuer => the
// EXAMPLE private half in base/secrets, to hand to that system.
var externalIssuers = map[string]string{
	"settlement-engine": "base/secrets/settlement-engine-private.pem",
}

// keyPairs are the suite's Ed25519 keypairs: the generated Secret (and key)
// that holds each half, and the Deployments allowed to read each Secret.
var keyPairs = []struct {
	name string
	// privateSecret/privateKey hold the PKCS#8 private half, readable by
	// owner alone; privateFile (relative to this folder) when the private
	// half is deployed nowhere: then no Secret may hold it.
	privateSecret, privateKey, owner string
	privateFile                      string
	// publicSecret/publicKey hold the PKIX public half, readable by readers
	// alone; publicFile (relative to this folder) when no Secret carries it.
	publicSecret, publicKey string
	readers                 []string
	publicFile              string
}{
	{
		name:          "principal",
		privateSecret: "principal-signing-key", privateKey: "private.pem", owner: "gateway",
		publicSecret: "principal-public-key", publicKey: "public.pem", readers: principalReaders,
	},
	{
		name:          "servicedesk internal",
		privateSecret: "servicedesk-internal-key", privateKey: "private.pem", owner: "servicedesk",
		publicSecret: "internal-public-keys", publicKey: "servicedesk.pem", readers: services,
	},
	{
		name:          "interchange internal",
		privateSecret: "interchange-internal-key", privateKey: "private.pem", owner: "interchange",
		publicSecret: "internal-public-keys", publicKey: "interchange.pem", readers: services,
	},
	{
		name:          "custody internal",
		privateSecret: "custody-internal-key", privateKey: "private.pem", owner: "custody",
		publicSecret: "internal-public-keys", publicKey: "custody.pem", readers: services,
	},
	{
		name:          "trading internal",
		privateSecret: "trading-internal-key", privateKey: "private.pem", owner: "trading",
		publicSecret: "internal-public-keys", publicKey: "trading.pem", readers: services,
	},
	{
		name:          "compliance internal",
		privateSecret: "compliance-internal-key", privateKey: "private.pem", owner: "compliance",
		publicSecret: "internal-public-keys", publicKey: "compliance.pem", readers: services,
	},
	{
		// The settlement engine is an external system: the suite deploys
		// only the public half; the private half is an example for the engine.
		name:         "settlement-engine",
		privateFile:  externalIssuers["settlement-engine"],
		publicSecret: "internal-public-keys", publicKey: "settlement-engine.pem", readers: services,
	},
	{
		// The services hand the operator's public key out with each address;
		// the demo copy in base/secrets is only for checking signatures by hand.
		name:          "operator",
		privateSecret: "operator-signing-key", privateKey: "private.pem", owner: "trading",
		publicFile: "base/secrets/operator-public.pem",
	},
}

// secretReaders are the Secrets other than keypairs whose readers are
// checked (checkSecretReaders): the webhook keyring, which seals the
// subscriptions' secrets and signing seeds (the events service) and opens
// them to sign deliveries (the dispatcher).
var secretReaders = map[string][]string{
	"webhook-keys": {"dispatcher", "events"},
}

// checkKeypairs asserts that each pair's Secrets hold an Ed25519 keypair in
// the formats the services and gateway load (PKIX public, PKCS#8 private) and
// that the public half is the one derived from the private half.
func checkKeypairs(t *testing.T, r rendered) {
	for _, kp := range keyPairs {
		t.Run(kp.name, func(t *testing.T) {
			privKey, privFrom, err := privateHalf(r, kp.privateSecret, kp.privateKey, kp.privateFile)
			if err != nil {
				t.Fatal(err)
			}
			var pubData []byte
			from := kp.publicFile
			if kp.publicSecret != "" {
				public := generatedSecret(r, kp.publicSecret)
				if public == nil {
					t.Fatalf("generated Secret %s: not found", kp.publicSecret)
				}
				pubData, from = public.Data[kp.publicKey], "Secret "+kp.publicSecret+", "+kp.publicKey
			} else if pubData, err = os.ReadFile(kp.publicFile); err != nil {
				t.Fatal(err)
			}
			pubKey, err := parseEd25519Public(pubData)
			if err != nil {
				t.Fatalf("%s: %v", from, err)
			}
			if !privKey.Public().(ed25519.PublicKey).Equal(pubKey) {
				t.Errorf("%s does not match %s", from, privFrom)
			}
		})
	}
}

// checkSecretReaders asserts that a private key Secret reaches the pods of its
// one owner only (never the gateway or another service), a private key
// deployed nowhere is in no Secret, and a public key Secret, like each of
// secretReaders, reaches exactly its readers, by volume, projected volume, env
// or envFrom.
func checkSecretReaders(t *testing.T, r rendered) {
	want := map[string][]string{}
	for _, kp := range keyPairs {
		if kp.privateSecret != "" {
			want[kp.privateSecret] = []string{"Deployment " + kp.owner}
		} else {
			checkUndeployed(t, r, kp.name, kp.privateFile)
		}
		if kp.publicSecret != "" {
			want[kp.publicSecret] = nil
			for _, name := range kp.readers {
				want[kp.publicSecret] = append(want[kp.publicSecret], "Deployment "+name)
			}
		}
	}
	for secret, readers := range secretReaders {
		for _, name := range readers {
			want[secret] = append(want[secret], "Deployment "+name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		s := generatedSecret(r, name)
		if s == nil {
			t.Errorf("generated Secret %s: not found", name)
			continue
		}
		var readers []string
		for _, p := range r.pods() {
			if readsSecret(p.spec, s.Name) {
				readers = append(readers, p.owner)
			}
		}
		slices.Sort(readers)
		if diff := cmp.Diff(want[name], readers); diff != "" {
			t.Errorf("Secret %s: pods reading it mismatch (-want +got):\n%s", name, diff)
		}
	}
}

// checkUndeployed asserts that no rendered Secret (nor ConfigMap) holds the
// private key of file, in any key: it belongs to a system outside the suite.
func checkUndeployed(t *testing.T, r rendered, name, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	key, err := parseEd25519Private(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	holds := func(value []byte) bool {
		other, err := parseEd25519Private(value)
		return err == nil && other.Equal(key)
	}
	for _, s := range r.secrets {
		for k, v := range s.Data {
			if holds(v) {
				t.Errorf("Secret %s, %s: holds the %s private key, which must be deployed nowhere", s.Name, k, name)
			}
		}
	}
	for _, cm := range r.configMaps {
		for k, v := range cm.Data {
			if holds([]byte(v)) {
				t.Errorf("ConfigMap %s, %s: holds the %s private key, which must be deployed nowhere", cm.Name, k, name)
			}
		}
	}
}

// privateHalf reads a private key from key of the generated Secret secret,
// or from file (relative to this folder) when secret is empty, and says where
// it came from.
func privateHalf(r rendered, secret, key, file string) (ed25519.PrivateKey, string, error) {
	if secret == "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, file, err
		}
		priv, err := parseEd25519Private(data)
		if err != nil {
			return nil, file, fmt.Errorf("%s: %w", file, err)
		}
		return priv, file, nil
	}
	s := generatedSecret(r, secret)
	from := "Secret " + secret + ", " + key
	if s == nil {
		return nil, from, fmt.Errorf("generated Secret %s: not found", secret)
	}
	priv, err := parseEd25519Private(s.Data[key])
	if err != nil {
		return nil, from, fmt.Errorf("%s: %w", from, err)
	}
	return priv, from, nil
}

// checkTrust follows the key settings through the mounts to the Secret data,
// as config.TrustedIssuers and the signers load them: the issuers that sign
// are exactly wantSigners (the gateway through PRINCIPAL_PRIVATE_KEY_FILE, each
// other one with a SERVICE_PRIVATE_KEY_FILE in the Deployment of its name), and
// every service that reads PRINCIPAL_PUBLIC_KEY_FILE trusts exactly those and
// externalIssuers (INTERNAL_PUBLIC_KEYS), each with the public half of the
// issuer's private key; the gatewayOnly Deployments trust the gateway alone.
func checkTrust(t *testing.T, r rendered) {
	signers := map[string]ed25519.PublicKey{}
	for _, d := range r.deployments {
		spec := d.Spec.Template.Spec
		c := spec.Containers[0]
		for env, issuer := range map[string]string{"PRINCIPAL_PRIVATE_KEY_FILE": "gateway", "SERVICE_PRIVATE_KEY_FILE": d.Name} {
			file := envValue(c, env)
			if file == "" {
				continue
			}
			key, err := mountedKey(r, spec, c, file, parseEd25519Private)
			if err != nil {
				t.Errorf("Deployment %s: %s=%s: %v", d.Name, env, file, err)
				continue
			}
			signers[issuer] = key.Public().(ed25519.PublicKey)
		}
	}
	if diff := cmp.Diff(wantSigners, slices.Sorted(maps.Keys(signers))); diff != "" {
		t.Errorf("signing issuers mismatch (-want +got):\n%s", diff)
	}
	issuers := maps.Clone(signers)
	for issuer, file := range externalIssuers {
		if _, ok := issuers[issuer]; ok {
			t.Errorf("external issuer %s: a Deployment signs as it", issuer)
		}
		priv, _, err := privateHalf(r, "", "", file)
		if err != nil {
			t.Fatal(err)
		}
		issuers[issuer] = priv.Public().(ed25519.PublicKey)
	}
	wantIssuers := slices.Sorted(maps.Keys(issuers))
	var trusting []string
	for _, d := range r.deployments {
		spec := d.Spec.Template.Spec
		c := spec.Containers[0]
		principal := envValue(c, "PRINCIPAL_PUBLIC_KEY_FILE")
		if principal == "" {
			continue
		}
		trusting = append(trusting, d.Name)
		files, err := parseInternalKeys(envValue(c, "INTERNAL_PUBLIC_KEYS"))
		if err != nil {
			t.Errorf("Deployment %s: %v", d.Name, err)
			continue
		}
		if _, ok := files["gateway"]; ok {
			t.Errorf("Deployment %s: INTERNAL_PUBLIC_KEYS names gateway, whose key is PRINCIPAL_PUBLIC_KEY_FILE", d.Name)
		}
		files["gateway"] = principal
		trusted := wantIssuers
		if slices.Contains(gatewayOnly, d.Name) {
			trusted = []string{"gateway"}
		}
		if diff := cmp.Diff(trusted, slices.Sorted(maps.Keys(files))); diff != "" {
			t.Errorf("Deployment %s: trusted issuers mismatch (-want +got):\n%s", d.Name, diff)
		}
		for issuer, want := range issuers {
			file, ok := files[issuer]
			if !ok {
				continue // reported above
			}
			got, err := mountedKey(r, spec, c, file, parseEd25519Public)
			if err != nil {
				t.Errorf("Deployment %s: issuer %s, %s: %v", d.Name, issuer, file, err)
			} else if !want.Equal(got) {
				t.Errorf("Deployment %s: issuer %s, %s is not the public half of the issuer's private key", d.Name, issuer, file)
			}
		}
	}
	slices.Sort(trusting)
	if diff := cmp.Diff(principalReaders, trusting); diff != "" {
		t.Errorf("Deployments that verify tokens mismatch (-want +got):\n%s", diff)
	}
}

// checkWebhookKeyring asserts that the webhook-keys Secret holds a keyring the
// events service and the dispatcher accept (webhook.ParseKeyring), and nothing
// else: WEBHOOK_KEYS is comma-separated id=base64 entries, each id 1 to 32 of
// A-Z a-z 0-9 _ - and given once, each key 32 bytes in standard, padded
// base64 and no two alike; WEBHOOK_KEY_CURRENT names one of them.
func checkWebhookKeyring(t *testing.T, r rendered) {
	s := generatedSecret(r, "webhook-keys")
	if s == nil {
		t.Fatal("generated Secret webhook-keys: not found")
	}
	if diff := cmp.Diff([]string{"WEBHOOK_KEYS", "WEBHOOK_KEY_CURRENT"}, slices.Sorted(maps.Keys(s.Data))); diff != "" {
		t.Errorf("Secret webhook-keys: keys mismatch (-want +got):\n%s", diff)
	}
	ids := map[string]bool{}
	seen := map[string]string{}
	for i, entry := range strings.Split(string(s.Data["WEBHOOK_KEYS"]), ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		id, b64, ok := strings.Cut(entry, "=")
		id = strings.TrimSpace(id)
		switch {
		case !ok:
			t.Errorf("WEBHOOK_KEYS entry %d: want id=base64", i+1)
			continue
		case id == "" || len(id) > 32 || strings.Trim(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != "":
			t.Errorf("WEBHOOK_KEYS entry %d: the id must be 1 to 32 of A-Z a-z 0-9 _ -", i+1)
			continue
		case ids[id]:
			t.Errorf("WEBHOOK_KEYS: key %q given twice", id)
		}
		ids[id] = true
		key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
		switch {
		case err != nil:
			t.Errorf("WEBHOOK_KEYS: key %q: not standard, padded base64", id)
		case len(key) != 32:
			t.Errorf("WEBHOOK_KEYS: key %q is %d bytes, want 32 (AES-256)", id, len(key))
		case seen[string(key)] != "":
			t.Errorf("WEBHOOK_KEYS: key %q is the same key as %q: a rotation needs new random bytes", id, seen[string(key)])
		default:
			seen[string(key)] = id
		}
	}
	if len(ids) == 0 {
		t.Error("WEBHOOK_KEYS: no keys")
	}
	if current := string(s.Data["WEBHOOK_KEY_CURRENT"]); !ids[current] {
		t.Errorf("WEBHOOK_KEY_CURRENT %q: names no key of WEBHOOK_KEYS", current)
	}
}

// TestDemoSecrets asserts the convention of base/secrets: every file is
// marked EXAMPLE, DEMO-ONLY in its first line, and every <name>-private.pem
// has a matching <name>-public.pem.
func TestDemoSecrets(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("base", "secrets")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "README.md" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(string(data), "\n"); !strings.Contains(first, "EXAMPLE, DEMO-ONLY") {
			t.Errorf("%s: first line %q, want an EXAMPLE, DEMO-ONLY marker", e.Name(), first)
		}
		name, ok := strings.CutSuffix(e.Name(), "-private.pem")
		if !ok {
			continue
		}
		privKey, err := parseEd25519Private(data)
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		pubData, err := os.ReadFile(filepath.Join(dir, name+"-public.pem"))
		if err != nil {
			t.Errorf("%s: no public half: %v", e.Name(), err)
			continue
		}
		pubKey, err := parseEd25519Public(pubData)
		if err != nil {
			t.Errorf("%s-public.pem: %v", name, err)
		} else if !privKey.Public().(ed25519.PublicKey).Equal(pubKey) {
			t.Errorf("%s-public.pem does not match %s", name, e.Name())
		}
	}
}

// readsSecret reports whether a pod can read Secret name.
func readsSecret(spec corev1.PodSpec, name string) bool {
	for _, v := range spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == name {
			return true
		}
		if v.Projected != nil && slices.ContainsFunc(v.Projected.Sources, func(p corev1.VolumeProjection) bool {
			return p.Secret != nil && p.Secret.Name == name
		}) {
			return true
		}
	}
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == name {
				return true
			}
		}
		for _, from := range c.EnvFrom {
			if from.SecretRef != nil && from.SecretRef.Name == name {
				return true
			}
		}
	}
	return false
}

// generatedSecret finds the Secret a secretGenerator named name, whatever
// content-hash suffix kustomize gave it.
func generatedSecret(r rendered, name string) *corev1.Secret {
	i := slices.IndexFunc(r.secrets, func(s corev1.Secret) bool {
		suffix, ok := strings.CutPrefix(s.Name, name+"-")
		return s.Name == name || ok && !strings.Contains(suffix, "-")
	})
	if i < 0 {
		return nil
	}
	return &r.secrets[i]
}

// mountedKey parses file as container c sees it (see secretFile).
func mountedKey[K any](r rendered, spec corev1.PodSpec, c corev1.Container, file string, parse func([]byte) (K, error)) (K, error) {
	data := secretFile(r, spec, c, file)
	if data == nil {
		var zero K
		return zero, errors.New("not in a Secret mounted read-only at its directory")
	}
	return parse(data)
}

func parseEd25519Private(data []byte) (ed25519.PrivateKey, error) {
	key, err := parsePEM(data, x509.ParsePKCS8PrivateKey)
	if err != nil {
		return nil, err
	}
	edKey, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%T, want Ed25519", key)
	}
	return edKey, nil
}

func parseEd25519Public(data []byte) (ed25519.PublicKey, error) {
	key, err := parsePEM(data, x509.ParsePKIXPublicKey)
	if err != nil {
		return nil, err
	}
	edKey, ok := key.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%T, want Ed25519", key)
	}
	return edKey, nil
}

func parsePEM(data []byte, parse func([]byte) (any, error)) (any, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("no PEM block")
	}
	return parse(block.Bytes)
}
