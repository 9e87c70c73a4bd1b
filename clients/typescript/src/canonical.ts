// Canonical JSON, as the suite verifies approval signatures over it (platform/canonical):
// object keys sorted by their UTF-8 bytes, no white space, empty members left out (a member
// whose value is null, "", or an object or array that is empty once pruned), array elements
// kept in place (an element that prunes to nothing stays as its empty form), strings as
// JSON.stringify writes them except U+2028 and U+2029, which are escaped.

type JSONValue = null | boolean | number | string | JSONValue[] | { [key: string]: JSONValue };

/** canonicalJSON returns the canonical form of a JSON value (an object, usually). */
export function canonicalJSON(value: unknown): string {
  const pruned = prune(value as JSONValue);
  return write(pruned === undefined ? null : pruned);
}

function prune(v: JSONValue | undefined): JSONValue | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === "string") return v === "" ? undefined : v;
  if (Array.isArray(v)) {
    if (v.length === 0) return undefined;
    return v.map((e) => {
      const p = prune(e);
      if (p !== undefined) return p;
      if (Array.isArray(e)) return [];
      if (e !== null && typeof e === "object") return {};
      return e;
    });
  }
  if (typeof v === "object") {
    const out: { [key: string]: JSONValue } = {};
    for (const [k, e] of Object.entries(v)) {
      const p = prune(e);
      if (p !== undefined) out[k] = p;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return v;
}

function write(v: JSONValue): string {
  if (v === null) return "null";
  if (typeof v === "string") return str(v);
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new TypeError("canonicalJSON: a number must be finite");
    return JSON.stringify(v);
  }
  if (typeof v === "boolean") return v ? "true" : "false";
  if (Array.isArray(v)) return "[" + v.map(write).join(",") + "]";
  const keys = Object.keys(v).sort(byUTF8);
  return "{" + keys.map((k) => str(k) + ":" + write(v[k] as JSONValue)).join(",") + "}";
}

function str(s: string): string {
  return JSON.stringify(s).replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

function byUTF8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}
