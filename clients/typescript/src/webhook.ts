// Verifying the suite's webhook deliveries (Standard Webhooks): the "v1" HMAC signature with
// the published standardwebhooks package, unmodified, and the "v1a" Ed25519 signature with
// Node's crypto, over the same string: `${webhook-id}.${webhook-timestamp}.${raw body}`.
import { createPublicKey, verify } from "node:crypto";

import { Webhook, WebhookVerificationError } from "standardwebhooks";

import type { WebhookEvent } from "./index.js";

/** What a subscriber verifies with: the whsec_ secret shown once, or the whpk_ public key the API lists, or both. */
export interface WebhookKeys {
  secret?: string;
  publicKey?: string;
}

/** How far a delivery's timestamp may be from the receiver's clock, in seconds (as the package checks). */
const toleranceSeconds = 5 * 60;

/**
 * Verifies one delivery and returns its event (typed by the document's webhooks). body must be the raw bytes received (never
 * re-encoded JSON); headers the request's headers (any case). A delivery verifies when one
 * of its signatures does: v1 with keys.secret, or v1a with keys.publicKey. Throws
 * WebhookVerificationError otherwise.
 */
export function verifyWebhook(body: string | Buffer, headers: Record<string, string | string[] | undefined>, keys: WebhookKeys): WebhookEvent {
  const h = lowerCase(headers);
  if (keys.secret) {
    try {
      return new Webhook(keys.secret).verify(body, h) as WebhookEvent;
    } catch (err) {
      if (!keys.publicKey) throw err;
    }
  }
  if (keys.publicKey) {
    verifyEd25519(body, h, keys.publicKey);
    return JSON.parse(body.toString()) as WebhookEvent;
  }
  throw new WebhookVerificationError("no key to verify with");
}

function lowerCase(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(",") : v;
  }
  return out;
}

function verifyEd25519(body: string | Buffer, h: Record<string, string>, publicKey: string): void {
  const id = h["webhook-id"];
  const ts = h["webhook-timestamp"];
  const sigs = h["webhook-signature"];
  if (!id || !ts || !sigs || !/^\d+$/.test(ts)) throw new WebhookVerificationError("missing webhook headers");
  if (Math.abs(Date.now() / 1000 - Number(ts)) > toleranceSeconds) throw new WebhookVerificationError("timestamp outside the tolerance");
  if (!publicKey.startsWith("whpk_")) throw new WebhookVerificationError("public key: want the prefix whpk_");
  const raw = Buffer.from(publicKey.slice("whpk_".length), "base64");
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") }, format: "jwk" });
  const msg = Buffer.concat([Buffer.from(`${id}.${ts}.`), Buffer.isBuffer(body) ? body : Buffer.from(body)]);
  for (const entry of sigs.split(" ")) {
    const [version, b64] = entry.split(",", 2);
    if (version === "v1a" && b64 && verify(null, msg, key, Buffer.from(b64, "base64"))) return;
  }
  throw new WebhookVerificationError("no matching v1a signature");
}
