// The client against the real gateway: `make test` runs these from deploy/local/tsclient,
// which starts the suite and sets CUSTODY_BASE_URL, DEMO_KEYS and PROPOSED_WALLET_ID.
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { createCustodyClient, signApproval, type ErrorBody } from "../src/index.js";

const baseUrl = process.env.CUSTODY_BASE_URL;
const keys = process.env.DEMO_KEYS ?? "";
const skip = baseUrl ? false : "CUSTODY_BASE_URL is not set (make test sets it)";
const key = (file: string) => readFileSync(join(keys, file), "utf8");

function client(company: "ZTEST" | "ZACME", role?: "maker" | "checker" | "viewer") {
  const short = company.toLowerCase();
  return createCustodyClient({
    baseUrl: baseUrl ?? "", company, key: key(`${short}-company.pem`),
    submitter: role ? `api-${role}@${short}.example` : undefined,
  });
}

test("an RSA company signs a search and pages through it", { skip }, async () => {
  const api = client("ZTEST", "maker");
  const first = await api.POST("/v3/api/trading/wallets", { body: { paginationLimit: 1 } });
  assert.equal(first.response.status, 200, JSON.stringify(first.error));
  assert.ok(first.data);
  assert.equal(first.data.items?.length, 1);
  const total = first.data.total ?? 0;
  assert.ok(total >= 2, `ZTEST has ${total} trading wallets, want at least 2`);
  const second = await api.POST("/v3/api/trading/wallets", { body: { paginationLimit: 1, paginationOffset: 1 } });
  assert.equal(second.response.status, 200);
  assert.notEqual(second.data?.items?.[0]?.id, first.data.items?.[0]?.id, "page 2 repeats page 1");
  // The gateway echoes the request identifier the client chose.
  assert.match(first.response.headers.get("request-identifier") ?? "", /^[0-9a-f-]{36}$/);
});

test("an Ed25519 company signs, GET without a body included", { skip }, async () => {
  const api = client("ZACME");
  const { data, response } = await api.GET("/v2/api/core/wallets");
  assert.equal(response.status, 200);
  assert.ok(data?.wallets?.every((w) => w.walletCompany === "ZACME"), "another company's wallet is listed");
});

test("a bound the document declares answers the typed error body", { skip }, async () => {
  const api = client("ZTEST", "maker");
  const { error, response } = await api.POST("/v3/api/servicedesk/requests", { body: { details: ["x".repeat(257)] } });
  assert.equal(response.status, 400);
  const body = error as ErrorBody;
  assert.equal(body.status, 400);
  assert.equal(body.details[0]?.code, "ER-103");
  assert.match(body.details[0]?.message ?? "", /^details\[0\] /);
});

test("a wrong key is refused with 401", { skip }, async () => {
  const api = createCustodyClient({ baseUrl: baseUrl ?? "", company: "ZTEST", key: key("zacme-company.pem"), submitter: "api-maker@ztest.example" });
  const { error, response } = await api.POST("/v3/api/servicedesk/products", { body: {} });
  assert.equal(response.status, 401);
  assert.equal((error as ErrorBody).details[0]?.code, "ER-401");
});

test("a CHECKER lists, fetches, signs and approves a proposed wallet", { skip }, async () => {
  const walletId = process.env.PROPOSED_WALLET_ID ?? "";
  assert.ok(walletId, "PROPOSED_WALLET_ID is not set");
  const checker = client("ZTEST", "checker");
  const listed = await checker.GET("/v2/api/core/wallets");
  assert.equal(listed.data?.wallets?.find((w) => w.walletId === walletId)?.status, "PENDING_AUTH");

  const maker = client("ZTEST", "maker");
  const refused = await maker.GET("/v2/api/core/wallets/{walletId}/proposal", { params: { path: { walletId } } });
  assert.equal(refused.response.status, 403, "the maker who proposed it must not approve it");

  const proposal = await checker.GET("/v2/api/core/wallets/{walletId}/proposal", { params: { path: { walletId } } });
  assert.equal(proposal.response.status, 200, JSON.stringify(proposal.error));
  const request = proposal.data?.request;
  assert.ok(request && proposal.data?.signingInput);
  assert.equal(request.type, "Approve");
  const signature = signApproval(key("ztest-checker.pem"), request);
  const acted = await checker.POST("/v2/api/core/wallets/{walletId}/action", { params: { path: { walletId } }, body: { request, signature } });
  assert.equal(acted.response.status, 200, JSON.stringify(acted.error));
  assert.equal(acted.data?.id, walletId);

  const after = await checker.GET("/v2/api/core/wallets");
  const w = after.data?.wallets?.find((x) => x.walletId === walletId);
  assert.equal(w?.status, "ACTIVE");
  assert.equal(w?.valid, true);
});
