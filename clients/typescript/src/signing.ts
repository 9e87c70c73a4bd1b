import { createHash, createPrivateKey, createPublicKey, randomUUID, sign, verify, type KeyObject } from "node:crypto";

import { canonicalJSON } from "./canonical.js";

/** The request headers the gateway verifies. */
export const Headers = {
  company: "company-identifier",
  submitter: "submitter-id",
  requestId: "request-identifier",
  timestamp: "request-timestamp",
  signature: "signature",
} as const;

/** A private key: a KeyObject, or PEM text (PKCS#8, PKCS#1 or SEC 1). */
export type Key = KeyObject | string | Buffer;

function privateKey(key: Key): KeyObject {
  return typeof key === "string" || Buffer.isBuffer(key) ? createPrivateKey(key) : key;
}

/**
 * signatureInput is what a company signature covers:
 * `company:requestIdentifier:timestamp:fullURL:body`, with fullURL exactly the URL sent
 * (scheme, host, path, query) and body the exact bytes (empty without a body).
 */
export function signatureInput(company: string, requestId: string, timestamp: string, url: string, body: string): string {
  return `${company}:${requestId}:${timestamp}:${url}:${body}`;
}

/**
 * signRequest returns the signing headers of one request: RSA keys sign with PKCS#1 v1.5
 * over SHA-256, Ed25519 keys sign the input itself. The request identifier is a fresh UUID
 * and the timestamp the current epoch milliseconds unless given.
 */
export function signRequest(opts: {
  company: string;
  key: Key;
  url: string;
  body?: string;
  submitter?: string;
  requestId?: string;
  timestamp?: string;
}): Record<string, string> {
  const key = privateKey(opts.key);
  const requestId = opts.requestId ?? randomUUID();
  const timestamp = opts.timestamp ?? String(Date.now());
  const input = Buffer.from(signatureInput(opts.company, requestId, timestamp, opts.url, opts.body ?? ""), "utf8");
  let sig: Buffer;
  switch (key.asymmetricKeyType) {
    case "rsa":
      sig = sign("sha256", input, key);
      break;
    case "ed25519":
      sig = sign(null, input, key);
      break;
    default:
      throw new TypeError(`signRequest: a company key is RSA or Ed25519, not ${key.asymmetricKeyType}`);
  }
  const headers: Record<string, string> = {
    [Headers.company]: opts.company,
    [Headers.requestId]: requestId,
    [Headers.timestamp]: timestamp,
    [Headers.signature]: sig.toString("base64"),
  };
  if (opts.submitter) headers[Headers.submitter] = opts.submitter;
  return headers;
}

/**
 * signApproval signs an approval object (a service request to confirm, approve or reject; a
 * v2 wallet action) with a user's P-256 approval key: ECDSA over SHA-256 of its canonical JSON,
 * DER-encoded, base64. `request` may be the object or its canonical JSON already (the
 * `signingInput` of a wallet proposal).
 */
export function signApproval(key: Key, request: unknown): string {
  const k = privateKey(key);
  if (k.asymmetricKeyType !== "ec" || k.asymmetricKeyDetails?.namedCurve !== "prime256v1") {
    throw new TypeError("signApproval: an approval key is EC P-256");
  }
  const input = typeof request === "string" ? canonicalJSON(JSON.parse(request)) : canonicalJSON(request);
  return sign("sha256", Buffer.from(input, "utf8"), { key: k, dsaEncoding: "der" }).toString("base64");
}

/** verifyApproval checks an approval signature with the user's public key (PEM). */
export function verifyApproval(publicKeyPEM: string, request: unknown, signatureB64: string): boolean {
  const input = typeof request === "string" ? canonicalJSON(JSON.parse(request)) : canonicalJSON(request);
  return verify("sha256", Buffer.from(input, "utf8"), { key: createPublicKey(publicKeyPEM), dsaEncoding: "der" },
    Buffer.from(signatureB64, "base64"));
}

/** sha256Hex is the hex SHA-256 of text's UTF-8 bytes (the test vectors list it). */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}
