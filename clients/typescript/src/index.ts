export { canonicalJSON } from "./canonical.js";
export { Headers, signatureInput, signRequest, signApproval, verifyApproval, sha256Hex, type Key } from "./signing.js";
export { createCustodyClient, signingMiddleware, type CustodyClientOptions, type SignedPaths } from "./client.js";
export { verifyWebhook, type WebhookKeys } from "./webhook.js";
export type { paths, components, operations } from "./schema.js";

import type { components } from "./schema.js";
/** The contract's error body. */
export type ErrorBody = components["schemas"]["Error"];
