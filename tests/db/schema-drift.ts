import { readFileSync } from "node:fs";
import { get_dmmf } from "@prisma/prisma-schema-wasm";
import type pg from "pg";
import { z } from "zod";

// Prisma's own drift check (`migrate diff`) needs the native schema engine, which we cannot
// download (docs/decisions/001-offline-migrations.md). This compares the DMMF of schema.prisma,
// computed by the engine's Wasm build, with what the SQL migrations actually built.

const fieldSchema = z.object({
  name: z.string(),
  dbName: z.string().nullish(),
  kind: z.enum(["scalar", "object", "enum", "unsupported"]),
  type: z.string(),
  isRequired: z.boolean(),
  isList: z.boolean(),
  isId: z.boolean(),
  isUnique: z.boolean(),
  nativeType: z.tuple([z.string(), z.array(z.string())]).nullish(),
  relationFromFields: z.array(z.string()).optional(),
  relationToFields: z.array(z.string()).optional(),
  relationOnDelete: z.string().optional(),
});

const datamodelSchema = z.object({
  models: z.array(
    z.object({
      name: z.string(),
      dbName: z.string().nullable(),
      fields: z.array(fieldSchema),
      primaryKey: z.object({ fields: z.array(z.string()) }).nullable(),
      uniqueFields: z.array(z.array(z.string())),
    }),
  ),
  enums: z.array(
    z.object({
      name: z.string(),
      dbName: z.string().nullish(),
      values: z.array(z.object({ name: z.string(), dbName: z.string().nullish() })),
    }),
  ),
});

export type Datamodel = z.infer<typeof datamodelSchema>;
type Model = Datamodel["models"][number];
type Field = z.infer<typeof fieldSchema>;

/** The database's structure, as far as schema.prisma can describe it. */
export type DatabaseSchema = {
  tables: string[];
  columns: Column[];
  indexes: Index[];
  foreignKeys: ForeignKey[];
  enums: Enum[];
};

/** `type` is canonical: PostgreSQL's udt_name, plus precision where it matters, `[]` for arrays. */
export type Column = { table: string; name: string; type: string; isNullable: boolean };

/** Names are not compared: only what an index covers matters to the client. */
export type Index = {
  name: string;
  table: string;
  columns: string[];
  isPrimary: boolean;
  isUnique: boolean;
  isPartial: boolean;
};

/** `onDelete` is in SQL's words (CASCADE, SET NULL, ...); undefined when schema.prisma omits it. */
export type ForeignKey = {
  table: string;
  columns: string[];
  referencedTable: string;
  referencedColumns: string[];
  onDelete?: string;
};

export type Enum = { name: string; values: string[] };

export function readDatamodel(schemaPath: string): Datamodel {
  const schema = readFileSync(schemaPath, "utf8");
  const dmmf: unknown = JSON.parse(
    get_dmmf(JSON.stringify({ prismaSchema: [[schemaPath, schema]], noColor: true })),
  );
  return z.object({ datamodel: datamodelSchema }).parse(dmmf).datamodel;
}

// ---- what schema.prisma expects ----

const SCALAR_COLUMN_TYPES: Record<string, string> = {
  String: "text",
  Int: "int4",
  BigInt: "int8",
  Boolean: "bool",
  // Prisma's default for a DateTime without @db is timestamp(3) *without* time zone.
  DateTime: "timestamp(3)",
  Json: "jsonb",
  Float: "float8",
  Decimal: "numeric(65,30)",
  Bytes: "bytea",
};

const NATIVE_TYPE_NAMES: Record<string, string> = {
  Text: "text",
  Uuid: "uuid",
  Integer: "int4",
  SmallInt: "int2",
  BigInt: "int8",
  Boolean: "bool",
  DoublePrecision: "float8",
  Real: "float4",
  Json: "json",
  JsonB: "jsonb",
  ByteA: "bytea",
  Date: "date",
  Inet: "inet",
  Citext: "citext",
  Xml: "xml",
  Money: "money",
  Oid: "oid",
  VarChar: "varchar",
  Char: "bpchar",
  Decimal: "numeric",
  Timestamptz: "timestamptz",
  Timestamp: "timestamp",
  Time: "time",
  Timetz: "timetz",
};

// PostgreSQL's default precision for time types when @db gives none, e.g. @db.Timestamptz.
const DEFAULT_TIME_PRECISION = "6";
const TIME_TYPES = new Set(["timestamptz", "timestamp", "time", "timetz"]);

/** The canonical column type (see `Column`), or undefined if there is no known mapping. */
function expectColumnType(field: Field, enumTypeNames: Map<string, string>): string | undefined {
  const base = expectBaseColumnType(field, enumTypeNames);
  return base !== undefined && field.isList ? `${base}[]` : base;
}

function expectBaseColumnType(
  field: Field,
  enumTypeNames: Map<string, string>,
): string | undefined {
  if (field.kind === "enum") return enumTypeNames.get(field.type);
  if (field.kind === "unsupported") return field.type;
  if (!field.nativeType) return SCALAR_COLUMN_TYPES[field.type];
  const [nativeName, args] = field.nativeType;
  const name = NATIVE_TYPE_NAMES[nativeName];
  if (name === undefined) return undefined;
  if (TIME_TYPES.has(name)) return `${name}(${args[0] ?? DEFAULT_TIME_PRECISION})`;
  return args.length > 0 ? `${name}(${args.join(",")})` : name;
}

function tableName(model: Model): string {
  return model.dbName ?? model.name;
}

function columnName(field: Field): string {
  return field.dbName ?? field.name;
}

function columnNamesOf(model: Model, fieldNames: string[]): string[] {
  return fieldNames.map((fieldName) => {
    const field = model.fields.find((candidate) => candidate.name === fieldName);
    return field ? columnName(field) : fieldName;
  });
}

// Prisma's referential actions, in the words PostgreSQL's DDL uses for them.
const REFERENTIAL_ACTIONS_SQL: Record<string, string> = {
  Cascade: "CASCADE",
  SetNull: "SET NULL",
  Restrict: "RESTRICT",
  NoAction: "NO ACTION",
  SetDefault: "SET DEFAULT",
};

/** Translates the DMMF into the shape `introspectDatabase` returns, so the two can be compared. */
export function describeExpectedSchema(datamodel: Datamodel): DatabaseSchema {
  const enumTypeNames = new Map(datamodel.enums.map((e) => [e.name, e.dbName ?? e.name]));
  const modelsByName = new Map(datamodel.models.map((model) => [model.name, model]));
  return {
    tables: datamodel.models.map(tableName),
    columns: datamodel.models.flatMap((model) => describeExpectedColumns(model, enumTypeNames)),
    indexes: datamodel.models.flatMap(describeExpectedKeys),
    foreignKeys: datamodel.models.flatMap((model) =>
      describeExpectedForeignKeys(model, modelsByName),
    ),
    enums: datamodel.enums.map((e) => ({
      name: e.dbName ?? e.name,
      values: e.values.map((value) => value.dbName ?? value.name),
    })),
  };
}

function describeExpectedColumns(model: Model, enumTypeNames: Map<string, string>): Column[] {
  return model.fields
    .filter((field) => field.kind !== "object")
    .map((field) => ({
      table: tableName(model),
      name: columnName(field),
      type: expectColumnType(field, enumTypeNames) ?? `unknown (${field.type})`,
      isNullable: !field.isRequired,
    }));
}

/** The primary key and the unique indexes of @id / @@id, @unique and @@unique. */
function describeExpectedKeys(model: Model): Index[] {
  const table = tableName(model);
  const indexOf = (fieldNames: string[], isPrimary: boolean): Index => {
    const columns = columnNamesOf(model, fieldNames);
    // The names Prisma would give them; informative only.
    const name = isPrimary ? `${table}_pkey` : `${table}_${columns.join("_")}_key`;
    return { name, table, columns, isPrimary, isUnique: true, isPartial: false };
  };
  const idFields =
    model.primaryKey?.fields ?? model.fields.filter((f) => f.isId).map((f) => f.name);
  const uniqueFieldSets = [
    ...model.fields.filter((field) => field.isUnique).map((field) => [field.name]),
    ...model.uniqueFields,
  ];
  return [
    ...(idFields.length > 0 ? [indexOf(idFields, true)] : []),
    ...uniqueFieldSets.map((fieldNames) => indexOf(fieldNames, false)),
  ];
}

/** Only the side of a relation that holds `fields:` owns the foreign key. */
function describeExpectedForeignKeys(model: Model, modelsByName: Map<string, Model>): ForeignKey[] {
  return model.fields.flatMap((field) => {
    const target = modelsByName.get(field.type);
    if (field.kind !== "object" || !field.relationFromFields?.length || !target) return [];
    const onDelete = field.relationOnDelete;
    return [
      {
        table: tableName(model),
        columns: columnNamesOf(model, field.relationFromFields),
        referencedTable: tableName(target),
        referencedColumns: columnNamesOf(target, field.relationToFields ?? []),
        onDelete:
          onDelete === undefined ? undefined : (REFERENTIAL_ACTIONS_SQL[onDelete] ?? onDelete),
      },
    ];
  });
}

// ---- comparison ----

/** Every difference between schema.prisma's datamodel and the database, one readable line each. */
export function findSchemaDrift(datamodel: Datamodel, database: DatabaseSchema): string[] {
  const expected = describeExpectedSchema(datamodel);
  const presentTables = new Set(database.tables.filter((table) => expected.tables.includes(table)));
  // Columns, keys and indexes of a missing or unexpected table would only repeat the table's line.
  const onPresentTables = <T extends { table: string }>(items: T[]) =>
    items.filter((item) => presentTables.has(item.table));
  return [
    ...findTableDrift(expected.tables, database.tables),
    ...findColumnDrift(onPresentTables(expected.columns), onPresentTables(database.columns)),
    ...findPrimaryKeyDrift(onPresentTables(expected.indexes), onPresentTables(database.indexes)),
    ...findUniqueIndexDrift(onPresentTables(expected.indexes), onPresentTables(database.indexes)),
    ...findForeignKeyDrift(
      onPresentTables(expected.foreignKeys),
      onPresentTables(database.foreignKeys),
    ),
    ...findEnumDrift(expected.enums, database.enums),
  ];
}

export function findTableDrift(expected: string[], actual: string[]): string[] {
  return [
    ...expected
      .filter((table) => !actual.includes(table))
      .map((table) => `table ${table}: in schema.prisma but not in the database`),
    ...actual
      .filter((table) => !expected.includes(table))
      .map((table) => `table ${table}: in the database but not in schema.prisma`),
  ];
}

export function findColumnDrift(expected: Column[], actual: Column[]): string[] {
  const drift: string[] = [];
  const keyOf = (column: Column) => `${column.table}.${column.name}`;
  const actualByKey = new Map(actual.map((column) => [keyOf(column), column]));
  const expectedKeys = new Set(expected.map(keyOf));
  for (const column of expected) {
    const key = keyOf(column);
    const found = actualByKey.get(key);
    if (!found) {
      drift.push(`column ${key}: in schema.prisma but not in the database`);
      continue;
    }
    if (found.type !== column.type) {
      drift.push(
        `column ${key}: type is ${found.type} in the database, ${column.type} in schema.prisma`,
      );
    }
    if (found.isNullable !== column.isNullable) {
      drift.push(
        `column ${key}: ${describeNullability(found)} in the database, ` +
          `${describeNullability(column)} in schema.prisma`,
      );
    }
  }
  for (const column of actual) {
    const key = keyOf(column);
    if (!expectedKeys.has(key))
      drift.push(`column ${key}: in the database but not in schema.prisma`);
  }
  return drift;
}

function describeNullability(column: Column): string {
  return column.isNullable ? "nullable" : "NOT NULL";
}

function describeColumns(columns: string[]): string {
  return `(${columns.join(", ")})`;
}

export function findPrimaryKeyDrift(expected: Index[], actual: Index[]): string[] {
  const tables = new Set([...expected, ...actual].map((index) => index.table));
  const primaryKeyOf = (indexes: Index[], table: string) =>
    indexes.find((index) => index.isPrimary && index.table === table)?.columns;
  const drift: string[] = [];
  for (const table of [...tables].sort()) {
    const wanted = primaryKeyOf(expected, table);
    const found = primaryKeyOf(actual, table);
    if (wanted?.join() === found?.join()) continue;
    const describe = (columns: string[] | undefined) =>
      columns ? describeColumns(columns) : "none";
    drift.push(
      `primary key of ${table}: ${describe(found)} in the database, ` +
        `${describe(wanted)} in schema.prisma`,
    );
  }
  return drift;
}

// Partial unique indexes cannot be expressed in schema.prisma, so they are left out on both sides;
// the one we rely on is asserted separately.
function isComparableUniqueIndex(index: Index): boolean {
  return index.isUnique && !index.isPrimary && !index.isPartial;
}

export function findUniqueIndexDrift(expected: Index[], actual: Index[]): string[] {
  // Column order matters: it decides which lookups the index serves.
  const keyOf = (index: Index) => `${index.table} ${describeColumns(index.columns)}`;
  const wanted = expected.filter(isComparableUniqueIndex);
  const found = actual.filter(isComparableUniqueIndex);
  const wantedKeys = new Set(wanted.map(keyOf));
  const foundKeys = new Set(found.map(keyOf));
  return [
    ...wanted
      .filter((index) => !foundKeys.has(keyOf(index)))
      .map((index) => `unique index on ${keyOf(index)}: in schema.prisma but not in the database`),
    ...found
      .filter((index) => !wantedKeys.has(keyOf(index)))
      .map(
        (index) =>
          `unique index ${index.name} on ${keyOf(index)}: in the database but not in schema.prisma`,
      ),
  ];
}

export function findForeignKeyDrift(expected: ForeignKey[], actual: ForeignKey[]): string[] {
  const keyOf = (key: ForeignKey) =>
    `${key.table} ${describeColumns(key.columns)} references ` +
    `${key.referencedTable} ${describeColumns(key.referencedColumns)}`;
  const actualByKey = new Map(actual.map((key) => [keyOf(key), key]));
  const expectedKeys = new Set(expected.map(keyOf));
  const drift: string[] = [];
  for (const key of expected) {
    const found = actualByKey.get(keyOf(key));
    if (!found) {
      drift.push(`foreign key ${keyOf(key)}: in schema.prisma but not in the database`);
    } else if (key.onDelete !== undefined && key.onDelete !== found.onDelete) {
      drift.push(
        `foreign key ${keyOf(key)}: ON DELETE ${found.onDelete} in the database, ` +
          `${key.onDelete} in schema.prisma`,
      );
    }
  }
  for (const key of actual) {
    if (!expectedKeys.has(keyOf(key))) {
      drift.push(`foreign key ${keyOf(key)}: in the database but not in schema.prisma`);
    }
  }
  return drift;
}

export function findEnumDrift(expected: Enum[], actual: Enum[]): string[] {
  const drift: string[] = [];
  const actualByName = new Map(actual.map((e) => [e.name, e]));
  const expectedNames = new Set(expected.map((e) => e.name));
  for (const wanted of expected) {
    const found = actualByName.get(wanted.name);
    if (!found) {
      drift.push(`enum ${wanted.name}: in schema.prisma but not in the database`);
    } else if (found.values.join() !== wanted.values.join()) {
      drift.push(
        `enum ${wanted.name}: values are ${describeColumns(found.values)} in the database, ` +
          `${describeColumns(wanted.values)} in schema.prisma`,
      );
    }
  }
  for (const found of actual) {
    if (!expectedNames.has(found.name)) {
      drift.push(`enum ${found.name}: in the database but not in schema.prisma`);
    }
  }
  return drift;
}

// ---- what the database has ----

// pg_constraint.confdeltype codes.
const ON_DELETE_ACTIONS: Record<string, string> = {
  a: "NO ACTION",
  r: "RESTRICT",
  c: "CASCADE",
  n: "SET NULL",
  d: "SET DEFAULT",
};

type ColumnRow = {
  table: string;
  name: string;
  data_type: string;
  udt_name: string;
  is_nullable: "YES" | "NO";
  datetime_precision: number | null;
  character_maximum_length: number | null;
  numeric_precision: number | null;
  numeric_scale: number | null;
};

/** The canonical type (see `Column`) of an information_schema.columns row. */
function describeColumnType(row: Omit<ColumnRow, "table" | "name" | "is_nullable">): string {
  if (row.data_type === "ARRAY") return `${row.udt_name.replace(/^_/, "")}[]`;
  if (TIME_TYPES.has(row.udt_name)) return `${row.udt_name}(${row.datetime_precision})`;
  if (row.character_maximum_length !== null) {
    return `${row.udt_name}(${row.character_maximum_length})`;
  }
  if (row.udt_name === "numeric" && row.numeric_precision !== null) {
    return `numeric(${row.numeric_precision},${row.numeric_scale ?? 0})`;
  }
  return row.udt_name;
}

/**
 * Reads the `public` schema of the database `client` is connected to, leaving out the tables in
 * `ignoredTables` (node-pg-migrate's bookkeeping table, by default).
 */
export async function introspectDatabase(
  client: pg.ClientBase,
  ignoredTables: string[] = ["pgmigrations"],
): Promise<DatabaseSchema> {
  const tables = await client.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> ALL($1)
     ORDER BY table_name`,
    [ignoredTables],
  );
  const columns = await client.query<ColumnRow>(
    `SELECT table_name AS "table", column_name AS name, data_type, udt_name, is_nullable,
            datetime_precision, character_maximum_length, numeric_precision, numeric_scale
     FROM information_schema.columns
     WHERE table_schema = 'public' AND table_name <> ALL($1)
     ORDER BY table_name, ordinal_position`,
    [ignoredTables],
  );
  // Key columns in index order; an expression has attnum 0 and so no attribute.
  const indexes = await client.query<Index>(
    `SELECT i.relname AS name, t.relname AS "table", x.indisprimary AS "isPrimary",
            x.indisunique AS "isUnique", x.indpred IS NOT NULL AS "isPartial",
            array(SELECT coalesce(a.attname::text, '(expression)')
                  FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, position)
                  LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
                  WHERE k.position <= x.indnkeyatts
                  ORDER BY k.position) AS columns
     FROM pg_index x
     JOIN pg_class i ON i.oid = x.indexrelid
     JOIN pg_class t ON t.oid = x.indrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = 'public' AND t.relname <> ALL($1)
     ORDER BY t.relname, i.relname`,
    [ignoredTables],
  );
  const foreignKeys = await client.query<ForeignKey & { onDeleteCode: string }>(
    `SELECT t.relname AS "table", r.relname AS "referencedTable", c.confdeltype AS "onDeleteCode",
            array(SELECT a.attname::text
                  FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, position)
                  JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
                  ORDER BY k.position) AS columns,
            array(SELECT a.attname::text
                  FROM unnest(c.confkey) WITH ORDINALITY AS k(attnum, position)
                  JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum
                  ORDER BY k.position) AS "referencedColumns"
     FROM pg_constraint c
     JOIN pg_class t ON t.oid = c.conrelid
     JOIN pg_class r ON r.oid = c.confrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE c.contype = 'f' AND n.nspname = 'public' AND t.relname <> ALL($1)
     ORDER BY t.relname, c.conname`,
    [ignoredTables],
  );
  const enums = await client.query<Enum>(
    `SELECT t.typname AS name, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS values
     FROM pg_type t
     JOIN pg_enum e ON e.enumtypid = t.oid
     JOIN pg_namespace n ON n.oid = t.typnamespace
     WHERE n.nspname = 'public'
     GROUP BY t.typname
     ORDER BY t.typname`,
  );
  return {
    tables: tables.rows.map((row) => row.name),
    columns: columns.rows.map((row) => ({
      table: row.table,
      name: row.name,
      type: describeColumnType(row),
      isNullable: row.is_nullable === "YES",
    })),
    indexes: indexes.rows,
    foreignKeys: foreignKeys.rows.map(({ onDeleteCode, ...key }) => ({
      ...key,
      onDelete: ON_DELETE_ACTIONS[onDeleteCode] ?? onDeleteCode,
    })),
    enums: enums.rows,
  };
}
