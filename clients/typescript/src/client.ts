import createClient, { type Client, type Middleware } from "openapi-fetch";

import type { paths } from "./schema.js";
import { type Key, signRequest, Headers } from "./signing.js";

/** The headers the client signs and sends itself. */
type SigningHeader = (typeof Headers)[keyof typeof Headers];

/** WithoutSigningHeaders is an operation whose signing headers the client fills in. */
type WithoutSigningHeaders<Op> = Op extends { parameters: { header: infer H } }
  ? Omit<Op, "parameters"> & { parameters: Omit<Op["parameters"], "header"> & { header?: Partial<Omit<H, SigningHeader>> } }
  : Op;

/** SignedPaths are the API's paths as a caller of the signing client sees them. */
export type SignedPaths = {
  [P in keyof paths]: { [M in keyof paths[P]]: WithoutSigningHeaders<paths[P][M]> };
};

export interface CustodyClientOptions {
  /** The gateway's public base URL, e.g. https://api.custody.example (the signature covers it). */
  baseUrl: string;
  /** The company identifier, e.g. ZTEST. */
  company: string;
  /** The company's RSA or Ed25519 private key. */
  key: Key;
  /** The acting user's e-mail (submitter-id); without it the company itself acts. */
  submitter?: string;
  /** A fetch implementation (defaults to the global one). */
  fetch?: typeof globalThis.fetch;
}

/** signingMiddleware signs every request over its exact URL and body. */
export function signingMiddleware(opts: Omit<CustodyClientOptions, "baseUrl" | "fetch">): Middleware {
  return {
    async onRequest({ request }) {
      const body = request.body === null ? "" : await request.clone().text();
      const headers = signRequest({ company: opts.company, key: opts.key, submitter: opts.submitter, url: request.url, body });
      for (const [name, value] of Object.entries(headers)) {
        request.headers.set(name, value);
      }
      if (body !== "" && !request.headers.has("content-type")) {
        request.headers.set("content-type", "application/json");
      }
      return request;
    },
  };
}

/**
 * createCustodyClient returns a typed client of every operation of the API (paths and types
 * from the OpenAPI document) that signs each request with the company key, as the caller
 * `submitter` when given:
 *
 *   const api = createCustodyClient({ baseUrl, company: "ZTEST", key: pem, submitter: "api-maker@ztest.example" });
 *   const { data, error } = await api.POST("/v3/api/trading/wallets", { body: { paginationLimit: 10 } });
 */
export function createCustodyClient(opts: CustodyClientOptions): Client<SignedPaths> {
  const client = createClient<SignedPaths>({ baseUrl: opts.baseUrl.replace(/\/+$/, ""), fetch: opts.fetch });
  client.use(signingMiddleware(opts));
  return client;
}
