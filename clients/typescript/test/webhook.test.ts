// Webhook deliveries signed by the suite's Go signer (platform/webhook/testdata/
// webhook-vectors.json) verify with the published standardwebhooks package, unmodified, and
// with verifyWebhook; a changed delivery does not.
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { mock, test } from "node:test";

import { Webhook } from "standardwebhooks";

import { verifyWebhook } from "../src/index.js";

interface Vector {
  name: string;
  id: string;
  timestamp: number;
  body: string;
  rotation: boolean;
  signature: string;
}

const file = JSON.parse(readFileSync(new URL("../../../../platform/webhook/testdata/webhook-vectors.json", import.meta.url), "utf8")) as {
  secret: string;
  oldSecret: string;
  publicKey: string;
  vectors: Vector[];
};

const headers = (v: Vector) => ({ "webhook-id": v.id, "webhook-timestamp": String(v.timestamp), "webhook-signature": v.signature });

test("there are vectors", () => {
  assert.ok(file.vectors.length >= 3);
});

for (const v of file.vectors) {
  test(`delivery ${v.name}`, (t) => {
    // The receiver's clock one minute after the delivery was signed.
    mock.timers.enable({ apis: ["Date"], now: (v.timestamp + 60) * 1000 });
    t.after(() => mock.timers.reset());
    assert.deepEqual(new Webhook(file.secret).verify(v.body, headers(v)), JSON.parse(v.body));
    if (v.rotation) {
      new Webhook(file.oldSecret).verify(v.body, headers(v));
    } else {
      assert.throws(() => new Webhook(file.oldSecret).verify(v.body, headers(v)));
    }
    assert.deepEqual(verifyWebhook(v.body, headers(v), { publicKey: file.publicKey }), JSON.parse(v.body));
    assert.deepEqual(verifyWebhook(Buffer.from(v.body), { "Webhook-Id": v.id, "Webhook-Timestamp": String(v.timestamp), "Webhook-Signature": v.signature }, { secret: file.secret }), JSON.parse(v.body));
    const tampered = v.body.replace("}", ',"x":1}');
    assert.throws(() => new Webhook(file.secret).verify(tampered, headers(v)));
    assert.throws(() => verifyWebhook(tampered, headers(v), { secret: file.secret, publicKey: file.publicKey }));
    assert.throws(() => verifyWebhook(v.body, { ...headers(v), "webhook-id": "evt_other" }, { publicKey: file.publicKey }));
  });
}

test("a delivery signed ten minutes ago is refused", (t) => {
  const v = file.vectors[0]!;
  mock.timers.enable({ apis: ["Date"], now: (v.timestamp + 600) * 1000 });
  t.after(() => mock.timers.reset());
  assert.throws(() => new Webhook(file.secret).verify(v.body, headers(v)));
  assert.throws(() => verifyWebhook(v.body, headers(v), { publicKey: file.publicKey }));
});
