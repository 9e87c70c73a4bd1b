package config

import (
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
)

// demoKeys are the SHA-256 fingerprints (of the PKIX DER public key) of every key published
// with the repository for local runs and examples. With PRODUCTION=true no process accepts
// them. deploy/local/demo's tests keep this list equal to the published keys.
var demoKeys = map[string]bool{
	"0d44b23de95ab63e70739533566553e3a9590e62728a0b2b93af0d0604f65c69": true, // deploy/local/demo/custody-internal.pub.pem
	"589078f4db22609ee4a631ab01c6431010653f3aa3625432fe8b34fa0a89101d": true, // deploy/local/demo/gateway-principal.pub.pem
	"1618fda3c2e79b928653376ed1b270559753b03d31ab8d05ca17547594fa71e4": true, // deploy/local/demo/interchange-internal.pub.pem
	"6fa57eff3d07afbc54cdc76aa9415c48ed9e83dcaaf955ceaaa6b56a9f6e06cc": true, // deploy/local/demo/operator.pub.pem
	"6bb612f89873bfe2b6dad9a1a7113b91c712acaba752b12c39ea75514aa5164d": true, // deploy/local/demo/servicedesk-internal.pub.pem
	"c9c83305d33c44e3f6e1d5240d37cb4acba428a855a1f194775cfa0724a65864": true, // deploy/local/demo/settlement-engine.pub.pem
	"189ca9597496a37e3010f9890cea4322e793ef6c58877b824a9085503b1d3a34": true, // deploy/local/demo/zacme-checker.pub.pem
	"482a5431d2b6822146490a830ed7ef49379000795c1620af26ffe3efd4daac9b": true, // deploy/local/demo/zacme-company.pub.pem
	"1fdbc4cbe43b0573c0af56a19a4ed9fc15712533dc995613dc5d5adbf065350b": true, // deploy/local/demo/zacme-maker.pub.pem
	"bed0be6dec4978e7ba281304895154a92cc140b8c439dfa91e0e974ff3315dd2": true, // deploy/local/demo/zacme-viewer.pub.pem
	"c067c1aac37beb8e90f3c6a345a82ecb9bb1b5f744e6225e99c21151856dfff6": true, // deploy/local/demo/ztest-admin.pub.pem
	"e4062c3ab97c71a29b361eca8992ebdbdbe6f6a24376d1ef12759e595d8bc692": true, // deploy/local/demo/ztest-checker.pub.pem
	"4cf6994d12dcf5073fe322a7b6e4f3e083f784f66f878a35470d3018a96d817b": true, // deploy/local/demo/ztest-company.pub.pem
	"cf7bf6d0908d28408a666a0b12a6ce866cf964b94d0e912d11353450077389ff": true, // deploy/local/demo/ztest-maker.pub.pem
	"56f35fb6ca93bf33ef8853cc6a2cb269e421578c712a54014f7954f060ab8e4b": true, // deploy/local/demo/ztest-viewer.pub.pem
	"7cd7e2273bcad99728fbb58d5a3309c5dfe94273fec96908388806606ff67e4e": true, // deploy/local/demo/zbybit-checker.pub.pem
	"327793952683aa7d077d48371563be43b3e45354593a99d5b39f4a938b500c96": true, // deploy/local/demo/zbybit-company.pub.pem
	"3429abbf53729026fca171a47e17860b5389c389c4ce53937d03107a736e107d": true, // deploy/local/demo/zbybit-maker.pub.pem
	"b699a3012d0e3d718a9315e5545a92d7ccf2679703f64fff6103941ad9adfc20": true, // deploy/local/demo/zbybit-viewer.pub.pem
	"e2453baa11416f32269f1fd33a8ccdac096981713701da49cfaf324748642388": true, // deploy/local/demo/zderibit-checker.pub.pem
	"99cc80a601307908cce7f8c2196f5abe361d2e7193252dc250f50ccc646dc45e": true, // deploy/local/demo/zderibit-company.pub.pem
	"1934422103beb2958124ba55f266fea9cf665502a2d410682519d1a2c242d50e": true, // deploy/local/demo/zderibit-maker.pub.pem
	"95f914909cec170b9d618978540af38f4d76e633dba7c71d773b61e7fd3088e3": true, // deploy/local/demo/zderibit-viewer.pub.pem
	"18591984e643196b650895cc75d5d36f40c3682e3b0cb54d1720c1a607498ad5": true, // deploy/local/demo/zcustody-checker.pub.pem
	"27cba975e16865d0e6e8dafe30f43d34b03ba253f362f8389523c057570dfb6a": true, // deploy/local/demo/zcustody-company.pub.pem
	"6de3b253accfdb51aff9ba372d5bee79f4d3fe94c59e9367e28f8e73123759c1": true, // deploy/local/demo/zcustody-maker.pub.pem
	"aa7f40a487e93acb1be39f559bf1f1f3074b7db312da031c33a134fa883cc8ac": true, // deploy/local/demo/zcustody-viewer.pub.pem
	"e8ec88f5543541385e89abfc412d32d650fd618ef85437f1040ff6a9d5e64094": true, // deploy/k8s/base/secrets/operator-public.pem
	"850d1b31b3967bd0529ba31cd9c93c3877e6803c9f71966120b62da1cfa830d5": true, // deploy/k8s/base/secrets/principal-public.pem
	"51a954096fa41ed9614627750fd613576d007e8365a0b9e0a7048bfeb3d7944c": true, // deploy/k8s/base/secrets/servicedesk-public.pem
	"b18d1b72f538a385c115d24cb8d602a3de8de0389283f6c859d301a0b736f83f": true, // deploy/k8s/base/secrets/interchange-public.pem
	"fd4fe1823eb8dd8b90019043bbfe51716305ededb43eb814432cb1b1b986f6a0": true, // deploy/k8s/base/secrets/custody-public.pem
	"7b778bbf32502daaadaca0825acb91401978f4f8b8b1403450a9943f57ae8018": true, // deploy/k8s/base/secrets/settlement-engine-public.pem
	"518a1c9fe57e465011e01df2f286c8084c19d9d005470241f3f82700a382fbea": true, // deploy/local/demo/trading-internal.pub.pem
	"7289b87768a4c297cc4a9de3f6ac8c2ef2dda1b7a6383bd43dc5dae9f2f0f482": true, // deploy/local/demo/compliance-internal.pub.pem
	"a05f15e72c1969a91b07b32f5bda2c1e5621b721f8dfdf4948f183ab873cc164": true, // deploy/k8s/base/secrets/trading-public.pem
	"330749595998f95e109650dfcadebf9f680c170fc69f5d61090a6fb85b131f87": true, // deploy/k8s/base/secrets/compliance-public.pem
}

// Fingerprint returns the hex SHA-256 of a public key's PKIX DER form.
func Fingerprint(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("fingerprint: %w", err)
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:]), nil
}

// IsDemoKey reports whether pub is one of the published demo keys.
func IsDemoKey(pub crypto.PublicKey) bool {
	fp, err := Fingerprint(pub)
	return err == nil && demoKeys[fp]
}

// DemoKeyCount is the number of published demo keys (for the tests that keep the list whole).
func DemoKeyCount() int { return len(demoKeys) }

// RefuseDemoKeyFiles fails when any of the PEM files (public or private keys) holds a demo key.
func RefuseDemoKeyFiles(paths ...string) error {
	var errs []error
	for _, path := range paths {
		if path == "" {
			continue
		}
		pub, err := publicKeyOfFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if IsDemoKey(pub) {
			errs = append(errs, fmt.Errorf("%s holds a published demo key, refused with PRODUCTION=true", path))
		}
	}
	return errors.Join(errs...)
}

// publicKeyOfFile reads a PEM public key, or the public half of a PEM private key.
func publicKeyOfFile(path string) (crypto.PublicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read key: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("key %s: no PEM block", path)
	}
	if strings.Contains(block.Type, "PRIVATE") {
		key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", path, err)
		}
		signer, ok := key.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("key %s: not a signing key", path)
		}
		return signer.Public(), nil
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	return pub, nil
}

// issuerKeyFiles lists the files of INTERNAL_PUBLIC_KEYS.
func issuerKeyFiles(list string) []string {
	var out []string
	for entry := range strings.SplitSeq(list, ",") {
		if _, path, ok := strings.Cut(strings.TrimSpace(entry), "="); ok {
			out = append(out, path)
		}
	}
	return out
}

// RefuseDemoKeys fails, when Production is set, if any key the service loads is a demo key.
func (c *Common) RefuseDemoKeys(extra ...string) error {
	if !c.Production {
		return nil
	}
	files := append([]string{c.PrincipalPublicKeyFile, c.ServicePrivateKeyFile}, issuerKeyFiles(c.InternalPublicKeys)...)
	return RefuseDemoKeyFiles(append(files, extra...)...)
}
