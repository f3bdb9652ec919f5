import { randomBytes } from "node:crypto";

/** Request ids are unguessable: knowing one is never a credential, but guessing one is hopeless. */
export function newRequestId(): string {
  return `req_${randomBytes(16).toString("hex")}`;
}
