// The approval-signature test vectors shared with the Go implementation
// (platform/signing/testdata/approval-vectors.json): the canonical JSON of each request, its
// SHA-256, and a signature that verifies with the public key. docs/approval-signature.md
// explains them.
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { canonicalJSON, sha256Hex, signApproval, verifyApproval } from "../src/index.js";

interface Vector {
  name: string;
  request: unknown;
  canonical: string;
  sha256: string;
  signature: string;
}

const file = JSON.parse(readFileSync(new URL("../../../../platform/signing/testdata/approval-vectors.json", import.meta.url), "utf8")) as {
  publicKey: string;
  privateKey: string;
  vectors: Vector[];
};

test("there are vectors", () => {
  assert.ok(file.vectors.length >= 5);
});

for (const v of file.vectors) {
  test(`vector ${v.name}: canonical JSON`, () => {
    assert.equal(canonicalJSON(v.request), v.canonical);
    assert.equal(sha256Hex(v.canonical), v.sha256);
  });
  test(`vector ${v.name}: the Go signature verifies`, () => {
    assert.ok(verifyApproval(file.publicKey, v.request, v.signature));
    assert.ok(!verifyApproval(file.publicKey, { other: "request" }, v.signature));
  });
  test(`vector ${v.name}: a signature made here verifies`, () => {
    const sig = signApproval(file.privateKey, v.request);
    assert.ok(verifyApproval(file.publicKey, v.canonical, sig));
  });
}
