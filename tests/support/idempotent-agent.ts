import { HandshakeClient } from "../../lib/sdk/agent-client";
import { env } from "../../lib/env";

/**
 * A minimal external agent process for tests/reliability/agent-retry.test.ts: it submits a plan
 * under the idempotency key given as argv[2], then waits on its inbox (from what it acknowledged)
 * for the answer, acknowledges it and exits 0. Killing it at any point and starting it again with
 * the same key must give the same request and, eventually, its answer. Prints one JSON line per
 * step on stdout.
 *
 *   HANDSHAKE_URL=… HANDSHAKE_AGENT_TOKEN=… node --import tsx tests/support/idempotent-agent.ts <key>
 */
const key = process.argv[2];
if (!env.HANDSHAKE_URL || !env.HANDSHAKE_AGENT_TOKEN || !key) {
  console.error("usage: HANDSHAKE_URL=… HANDSHAKE_AGENT_TOKEN=… idempotent-agent.ts <key>");
  process.exit(2);
}
const client = new HandshakeClient(env.HANDSHAKE_URL, env.HANDSHAKE_AGENT_TOKEN);
const say = (line: Record<string, unknown>) => console.log(JSON.stringify(line));

say({ step: "submitting", key });
const request = await client.submitRequest({
  type: "plan_approval",
  payload: { plan: `plan under key ${key}` },
  idempotencyKey: key,
});
say({ step: "submitted", id: request.id, status: request.status });

for (;;) {
  const inbox = await client.readInbox({ waitSeconds: 25 });
  const answer = inbox.messages.find(
    (message) =>
      message.type === "plan_approval_response" && message.metadata.requestId === request.id,
  );
  if (inbox.messages.length > 0) await client.ack(inbox.cursor);
  if (answer) {
    say({
      step: "answered",
      id: request.id,
      messageId: answer.id,
      approve: answer.metadata.approve,
      status: (await client.getRequest(request.id)).status,
    });
    process.exit(0);
  }
}
