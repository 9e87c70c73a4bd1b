package k8s_test

import (
	"crypto/ed25519"
	"crypto/x509"
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

// services are the five gRPC services: they trust the gateway's principal key
// and the service desk's internal identity.
var services = []string{"compliance", "custody", "interchange", "servicedesk", "trading"}

// keyPairs are the suite's Ed25519 keypairs: the generated Secret (and key)
// that holds each half, and the Deployments allowed to read each Secret.
var keyPairs = []struct {
	name string
	// privateSecret/privateKey hold the PKCS#8 private half, readable by
	// owner alone.
	privateSecret, privateKey, owner string
	// publicSecret/publicKey hold the PKIX public half, readable by readers
	// alone; publicFile (relative to this folder) when no Secret carries it.
	publicSecret, publicKey string
	readers                 []string
	publicFile              string
}{
	{
		name:          "principal",
		privateSecret: "principal-signing-key", privateKey: "private.pem", owner: "gateway",
		publicSecret: "principal-public-key", publicKey: "public.pem", readers: services,
	},
	{
		name:          "servicedesk internal",
		privateSecret: "servicedesk-internal-key", privateKey: "private.pem", owner: "servicedesk",
		publicSecret: "internal-public-keys", publicKey: "servicedesk.pem", readers: services,
	},
	{
		// The services hand the operator's public key out with each address;
		// the demo copy in base/secrets is only for checking signatures by hand.
		name:          "operator",
		privateSecret: "operator-signing-key", privateKey: "private.pem", owner: "trading",
		publicFile: "base/secrets/operator-public.pem",
	},
}

// checkKeypairs asserts that each pair's Secrets hold an Ed25519 keypair in
// the formats the services and gateway load (PKIX public, PKCS#8 private) and
// that the public half is the one derived from the private half.
func checkKeypairs(t *testing.T, r rendered) {
	for _, kp := range keyPairs {
		t.Run(kp.name, func(t *testing.T) {
			private := generatedSecret(r, kp.privateSecret)
			if private == nil {
				t.Fatalf("generated Secret %s: not found", kp.privateSecret)
			}
			privKey, err := parseEd25519Private(private.Data[kp.privateKey])
			if err != nil {
				t.Fatalf("Secret %s, %s: %v", kp.privateSecret, kp.privateKey, err)
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
				t.Errorf("%s does not match Secret %s, %s", from, kp.privateSecret, kp.privateKey)
			}
		})
	}
}

// checkSecretReaders asserts that a private key Secret reaches the pods of its
// one owner only (never the gateway or another service) and a public key
// Secret exactly its readers, by volume, projected volume, env or envFrom.
func checkSecretReaders(t *testing.T, r rendered) {
	for _, kp := range keyPairs {
		want := map[string][]string{kp.privateSecret: {"Deployment " + kp.owner}}
		if kp.publicSecret != "" {
			want[kp.publicSecret] = nil
			for _, name := range kp.readers {
				want[kp.publicSecret] = append(want[kp.publicSecret], "Deployment "+name)
			}
		}
		for name, wantReaders := range want {
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
			if diff := cmp.Diff(wantReaders, readers); diff != "" {
				t.Errorf("Secret %s: pods reading it mismatch (-want +got):\n%s", name, diff)
			}
		}
	}
}

// checkTrust follows the key settings through the mounts to the Secret data,
// as config.TrustedIssuers and the signers load them: every service that
// reads PRINCIPAL_PUBLIC_KEY_FILE trusts exactly the issuers that sign (the
// gateway through PRINCIPAL_PRIVATE_KEY_FILE, and each service with a
// SERVICE_PRIVATE_KEY_FILE under its own name in INTERNAL_PUBLIC_KEYS), each
// with the public half of the issuer's private key.
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
	if len(signers) < 2 {
		t.Fatalf("signing issuers %v, want the gateway and servicedesk at least", slices.Sorted(maps.Keys(signers)))
	}
	for _, d := range r.deployments {
		spec := d.Spec.Template.Spec
		c := spec.Containers[0]
		principal := envValue(c, "PRINCIPAL_PUBLIC_KEY_FILE")
		if principal == "" {
			continue
		}
		files, err := parseInternalKeys(envValue(c, "INTERNAL_PUBLIC_KEYS"))
		if err != nil {
			t.Errorf("Deployment %s: %v", d.Name, err)
			continue
		}
		files["gateway"] = principal
		for issuer, want := range signers {
			file, ok := files[issuer]
			if !ok {
				t.Errorf("Deployment %s: does not trust issuer %s", d.Name, issuer)
				continue
			}
			got, err := mountedKey(r, spec, c, file, parseEd25519Public)
			if err != nil {
				t.Errorf("Deployment %s: issuer %s, %s: %v", d.Name, issuer, file, err)
			} else if !want.Equal(got) {
				t.Errorf("Deployment %s: issuer %s, %s is not the public half of the issuer's private key", d.Name, issuer, file)
			}
		}
		for issuer := range files {
			if signers[issuer] == nil {
				t.Errorf("Deployment %s: trusts issuer %s, which no Deployment signs as", d.Name, issuer)
			}
		}
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
