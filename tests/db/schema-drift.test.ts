import path from "node:path";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { requireDatabaseUrl } from "../../lib/env";
import {
  findSchemaDrift,
  introspectDatabase,
  readDatamodel,
  type DatabaseSchema,
  type Datamodel,
} from "./schema-drift";

const datamodel = readDatamodel(path.resolve(import.meta.dirname, "../../prisma/schema.prisma"));
let database: DatabaseSchema;

beforeAll(async () => {
  const client = new pg.Client({ connectionString: requireDatabaseUrl() });
  await client.connect();
  try {
    database = await introspectDatabase(client);
  } finally {
    await client.end();
  }
});

function findModel(model: Datamodel, name: string) {
  const found = model.models.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no model ${name} in schema.prisma`);
  return found;
}

describe("schema.prisma against the migrated database", () => {
  it("describes exactly what the SQL migrations built", () => {
    expect(findSchemaDrift(datamodel, database)).toEqual([]);
  });

  it("keeps one pending request per (agent, type) in a partial unique index", () => {
    expect(
      database.indexes.find((index) => index.name === "requests_one_pending_per_agent_type"),
    ).toMatchObject({
      table: "requests",
      columns: ["agent_id", "type"],
      isUnique: true,
      isPartial: true,
    });
  });

  it("reports a column and a nullability that schema.prisma changes", () => {
    const modified = structuredClone(datamodel);
    const agent = findModel(modified, "Agent");
    const prompt = agent.fields.find((field) => field.name === "prompt");
    if (!prompt) throw new Error("no Agent.prompt in schema.prisma");
    prompt.isRequired = true;
    agent.fields.push({ ...prompt, name: "nickname", isRequired: false });

    expect(findSchemaDrift(modified, database).sort()).toEqual([
      "column agents.nickname: in schema.prisma but not in the database",
      "column agents.prompt: nullable in the database, NOT NULL in schema.prisma",
    ]);
  });

  it("reports what the database has and schema.prisma lacks, or has differently", () => {
    const modified = structuredClone(database);
    modified.tables.push("audit_log");
    modified.columns.push({ table: "audit_log", name: "id", type: "int8", isNullable: false });
    modified.indexes = modified.indexes
      .filter((index) => index.name !== "agents_name_key")
      .map((index) =>
        index.name === "requests_one_pending_per_agent_type"
          ? { ...index, isPartial: false }
          : index,
      );
    modified.foreignKeys = modified.foreignKeys.map((key) =>
      key.table === "tasks" ? { ...key, onDelete: "NO ACTION" } : key,
    );
    modified.enums = modified.enums.map((e) =>
      e.name === "task_status" ? { ...e, values: ["open", "done", "claimed"] } : e,
    );

    expect(findSchemaDrift(datamodel, modified).sort()).toEqual([
      "enum task_status: values are (open, done, claimed) in the database, " +
        "(open, claimed, done) in schema.prisma",
      "foreign key tasks (assignee_id) references agents (id): " +
        "ON DELETE NO ACTION in the database, SET NULL in schema.prisma",
      "table audit_log: in the database but not in schema.prisma",
      "unique index on agents (name): in schema.prisma but not in the database",
      "unique index requests_one_pending_per_agent_type on requests (agent_id, type): " +
        "in the database but not in schema.prisma",
    ]);
  });
});
