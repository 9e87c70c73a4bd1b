export { canonicalJSON } from "./canonical.js";
export { Headers, signatureInput, signRequest, signApproval, verifyApproval, sha256Hex, type Key } from "./signing.js";
export { createCustodyClient, signingMiddleware, type CustodyClientOptions, type SignedPaths } from "./client.js";
export { verifyWebhook, type WebhookKeys } from "./webhook.js";
export type { paths, components, operations, webhooks } from "./schema.js";

import type { components, webhooks } from "./schema.js";
/** The contract's error body. */
export type ErrorBody = components["schemas"]["Error"];
/** A webhook's body: an event of one of the documented types, its `data` typed by its `type`. */
export type WebhookEvent = {
  [T in keyof webhooks]: NonNullable<webhooks[T]["post"]["requestBody"]>["content"]["application/json"];
}[keyof webhooks];
/** The event types the suite sends. */
export type EventType = WebhookEvent["type"];
