// A subscriber written from the README, against the real suite: a maker subscribes a local
// HTTP endpoint, a checker approves it, a VASP activation changes, and the delivery that
// arrives verifies with the published standardwebhooks package (unmodified) and with
// verifyWebhook's Ed25519 check. `make test` runs it from deploy/local/tsclient, whose suite
// lets subscriptions reach plain http on loopback (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE).
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { test } from "node:test";

import { Webhook } from "standardwebhooks";

import { createCustodyClient, verifyWebhook } from "../src/index.js";

const baseUrl = process.env.CUSTODY_BASE_URL;
const keys = process.env.DEMO_KEYS ?? "";
const skip = baseUrl ? false : "CUSTODY_BASE_URL is not set (make test sets it)";

function client(role: "maker" | "checker") {
  return createCustodyClient({
    baseUrl: baseUrl ?? "", company: "ZACME", key: readFileSync(join(keys, "zacme-company.pem"), "utf8"),
    submitter: `api-${role}@zacme.example`,
  });
}

interface Received {
  headers: IncomingMessage["headers"];
  body: string;
}

test("a delivery verifies with standardwebhooks and the public key", { skip, timeout: 60_000 }, async () => {
  const received: Received[] = [];
  let arrived: () => void = () => {};
  const first = new Promise<void>((resolve) => { arrived = resolve; });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(204).end();
      arrived();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    const maker = client("maker");
    const created = await maker.POST("/v3/api/events/subscriptions", { body: { url, types: ["vasp.activated", "vasp.deactivated"] } });
    assert.equal(created.response.status, 200, JSON.stringify(created.error));
    const secret = created.data?.secret ?? "";
    const id = created.data?.subscription?.subscriptionId ?? "";
    const publicKey = created.data?.subscription?.publicKey ?? "";
    assert.match(secret, /^whsec_/);
    assert.match(publicKey, /^whpk_/);

    const approved = await client("checker").POST("/v3/api/events/subscriptions/{subscriptionId}/approve", {
      params: { path: { subscriptionId: id } },
      body: { proposedAt: created.data?.subscription?.pending?.proposedAt ?? "" },
    });
    assert.equal(approved.response.status, 200, JSON.stringify(approved.error));
    assert.equal(approved.data?.subscription?.status, "ACTIVE");

    // A state change of ZACME after the approval: it switches a VASP off.
    const change = await maker.POST("/v3/api/compliance/vasps/{vaspId}/activate/{valid}", {
      params: { path: { vaspId: "VASP-001", valid: "false" } },
    });
    assert.equal(change.response.status, 200, JSON.stringify(change.error));

    await Promise.race([first, new Promise((_, reject) => setTimeout(() => reject(new Error("no delivery within 30 s")), 30_000))]);
    const got = received[0];
    assert.ok(got);
    const headers = got.headers as Record<string, string>;
    const event = new Webhook(secret).verify(got.body, headers) as { id: string; type: string; companyId: string; entity: { type: string } };
    assert.equal(event.id, headers["webhook-id"], "webhook-id is the event id");
    assert.equal(event.companyId, "ZACME");
    assert.equal(event.type, "vasp.deactivated");
    assert.equal(event.entity.type, "vasp_activation");
    // The v1a signature verifies with the public key alone, and the event comes back typed
    // by the document's webhooks: its type names its data's fields.
    const typed = verifyWebhook(got.body, headers, { publicKey });
    assert.equal(typed.type, "vasp.deactivated");
    if (typed.type === "vasp.deactivated") {
      assert.equal(typed.data.vaspId, "VASP-001");
      assert.equal(typed.data.valid, false);
    }
    // A changed body verifies with neither.
    assert.throws(() => new Webhook(secret).verify(got.body.replace("ZACME", "ZTEST"), headers));
    assert.throws(() => verifyWebhook(got.body.replace("ZACME", "ZTEST"), headers, { publicKey }));

    // Switch the subscription off again so the shared suite's other tests are not delivered to.
    const off = await maker.POST("/v3/api/events/subscriptions/{subscriptionId}/update", {
      params: { path: { subscriptionId: id } }, body: { enabled: false },
    });
    assert.equal(off.response.status, 200, JSON.stringify(off.error));
  } finally {
    server.close();
  }
});
