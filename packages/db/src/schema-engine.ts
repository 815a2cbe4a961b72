// Prisma's schema engine (migrations, diffs) compiled to WebAssembly, driven through a pg driver
// adapter: the native engine binary cannot be downloaded on every machine, the WASM one ships on npm.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import {
  bindMigrationAwareSqlAdapterFactory,
  ColumnTypeEnum,
  type SqlDriverAdapter,
  type SqlQuery,
  type SqlMigrationAwareDriverAdapterFactory,
} from '@prisma/driver-adapter-utils';
import type { SchemaEngine } from '@prisma/schema-engine-wasm';
import type * as EngineBindings from '@prisma/schema-engine-wasm/schema_engine_bg';
import pg from 'pg';
import { parseIntoClientConfig } from 'pg-connection-string';

// The part of the WebAssembly global used here (the DOM lib that types it is not part of this build).
declare const WebAssembly: {
  instantiate(bytes: Uint8Array, imports: Record<string, Record<string, unknown>>): Promise<{
    instance: { exports: Record<string, unknown> };
  }>;
  RuntimeError: new (...args: never[]) => Error;
};

/** PostgreSQL's `"char"` type, used by catalog columns such as `pg_constraint.contype`. */
const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;

interface CatalogField {
  dataTypeID: number;
  /** Set on result columns that PostgreSQL sent as `"char"`. */
  pgChar?: boolean;
}

/**
 * adapter-pg rejects `"char"` result columns, which the engine's catalog queries return, while the
 * engine wants them typed as characters: let them through as text and tag them, so that
 * `readCharColumnsAsCharacters` can restore the column type.
 */
class CatalogFriendlyClient extends pg.Client {
  _handleRowDescription(msg: { fields: CatalogField[] }): void {
    for (const field of msg.fields) {
      if (field.dataTypeID === PG_CHAR_OID) {
        field.dataTypeID = PG_TEXT_OID;
        field.pgChar = true;
      }
    }
    (pg.Client.prototype as unknown as { _handleRowDescription(m: unknown): void })._handleRowDescription.call(this, msg);
  }
}

function readCharColumnsAsCharacters(adapter: SqlDriverAdapter): void {
  // performIO is adapter-pg's (private) "run the query, return pg's result" step, fields included.
  type WithPerformIO = { performIO(query: SqlQuery): Promise<{ fields: CatalogField[] }> };
  const performIO = (adapter as unknown as WithPerformIO).performIO.bind(adapter);
  const queryRaw = adapter.queryRaw;
  adapter.queryRaw = async (query) => {
    let charColumns: number[] = [];
    // A per-call view of the adapter, so concurrent queries cannot mix up their columns.
    const view = Object.create(adapter, {
      performIO: {
        value: async (sqlQuery: SqlQuery) => {
          const result = await performIO(sqlQuery);
          charColumns = result.fields.flatMap((field, index) => (field.pgChar ? [index] : []));
          return result;
        },
      },
    }) as SqlDriverAdapter;
    const result = await queryRaw.call(view, query);
    for (const index of charColumns) result.columnTypes[index] = ColumnTypeEnum.Character;
    return result;
  };
}

/** Discrete connection fields: adapter-pg's shadow connection ignores `database` next to a connection string. */
export function connectionConfig(databaseUrl: string): pg.ClientConfig {
  return { ...parseIntoClientConfig(databaseUrl), connectionTimeoutMillis: 5_000 };
}

/** Runs one statement on the server's maintenance database (CREATE / DROP DATABASE cannot run inside the target). */
export function runOnServer(databaseUrl: string, sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  return withClient({ ...connectionConfig(databaseUrl), database: 'postgres' }, (client) => client.query(sql, params));
}

export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * The driver adapter factory the engine uses: one for the target database, plus throwaway shadow
 * databases that are always dropped (adapter-pg 7.10 leaks them and connects its "shadow" to the main database).
 */
class MigrationAdapterFactory implements SqlMigrationAwareDriverAdapterFactory {
  readonly provider = 'postgres';
  readonly adapterName = '@prisma/adapter-pg';
  private readonly open = new Set<SqlDriverAdapter>();

  constructor(private readonly config: pg.ClientConfig) {}

  connect(): Promise<SqlDriverAdapter> {
    return this.connectTo(this.config.database ?? 'postgres');
  }

  async connectToShadowDb(): Promise<SqlDriverAdapter> {
    const shadowName = `mg_shadow_${randomBytes(6).toString('hex')}`;
    const serverUrlConfig = { ...this.config, database: 'postgres' };
    await withClient(serverUrlConfig, (client) => client.query(`CREATE DATABASE ${quoteIdentifier(shadowName)}`));
    const adapter = await this.connectTo(shadowName);
    const disposeConnection = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      await disposeConnection();
      await withClient(serverUrlConfig, (client) =>
        client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(shadowName)} WITH (FORCE)`),
      );
    };
    return adapter;
  }

  /** Ends every connection the engine left open (freeing the engine does not dispose its adapters). */
  async closeAll(): Promise<void> {
    const adapters = [...this.open];
    this.open.clear();
    for (const adapter of adapters) await adapter.dispose();
  }

  private async connectTo(database: string): Promise<SqlDriverAdapter> {
    const factory = new PrismaPg({ ...this.config, database, max: 2, Client: CatalogFriendlyClient } as pg.PoolConfig);
    const adapter = await factory.connect();
    readCharColumnsAsCharacters(adapter);
    // adapter-pg splits scripts on every ";" (breaking literals) and runs the pieces one by one;
    // one simple-protocol query runs the whole migration atomically, as `prisma migrate deploy` does.
    adapter.executeScript = async (script) => {
      await adapter.executeRaw({ sql: script, args: [], argTypes: [] });
    };
    const dispose = adapter.dispose.bind(adapter);
    let disposed = false;
    adapter.dispose = async () => {
      if (disposed) return;
      disposed = true;
      this.open.delete(adapter);
      await dispose();
    };
    this.open.add(adapter);
    return adapter;
  }
}

/** One short-lived connection for `fn`. */
export async function withClient<T>(config: pg.ClientConfig, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client(config);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Where the engine's Rust panics leave their message before the WASM call traps with "unreachable". */
class PanicRegistry {
  message = '';
  set_message(message: string): void {
    this.message = message;
  }
}
const panicRegistry = new PanicRegistry();

/**
 * The engine arms timers to bound its waits (10 s lock timeouts) and never clears them: unreferenced,
 * they no longer hold a finished process (or Jest) open for 10 s. Pending queries keep it alive anyway.
 */
function withUnrefTimers(bindings: typeof EngineBindings): Record<string, unknown> {
  const imports: Record<string, unknown> = { ...bindings };
  for (const name of Object.keys(imports).filter((key) => key.startsWith('__wbg_setTimeout_'))) {
    imports[name] = (callback: () => void, ms: number) => setTimeout(callback, ms >>> 0).unref();
  }
  return imports;
}

let engineBindings: Promise<typeof EngineBindings> | undefined;

/**
 * Loads the JS bindings and instantiates the WASM module once per process (the bindings keep it in
 * module state). Loaded on first use, so services importing this package do not pay for 5 MB of WASM.
 */
function loadEngine(): Promise<typeof EngineBindings> {
  engineBindings ??= (async () => {
    (globalThis as { PRISMA_WASM_PANIC_REGISTRY?: PanicRegistry }).PRISMA_WASM_PANIC_REGISTRY = panicRegistry;
    const bindingsPath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
    const bindings = await import('@prisma/schema-engine-wasm/schema_engine_bg');
    const bytes = await readFile(join(dirname(bindingsPath), 'schema_engine_bg.wasm'));
    const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': withUnrefTimers(bindings) });
    bindings.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return bindings;
  })();
  // A failed load (unreadable file) should not poison every later attempt in this process.
  engineBindings.catch(() => {
    engineBindings = undefined;
  });
  return engineBindings;
}

/** The engine reports failures as JSON text; keep the human part (it names the migration and the SQL error). */
export class SchemaEngineError extends Error {
  constructor(raw: unknown) {
    super(describeEngineError(raw));
    this.name = 'SchemaEngineError';
  }
}

function describeEngineError(raw: unknown): string {
  if (raw instanceof WebAssembly.RuntimeError && panicRegistry.message) {
    const message = `schema engine panicked: ${panicRegistry.message}`;
    panicRegistry.message = '';
    return message;
  }
  let text = raw instanceof Error ? raw.message : String(raw);
  try {
    const parsed = JSON.parse(text) as { message?: string; error_code?: string };
    if (parsed.message) text = parsed.error_code ? `${parsed.error_code}: ${parsed.message}` : parsed.message;
  } catch {
    // not JSON: already readable text
  }
  // Drop the engine's Rust span trace ("   0: sql_schema_connector::..."), keep the migration it names.
  const traceStart = text.search(/^\s+0: /m);
  const migration = /migration_name="([^"]+)"/.exec(text)?.[1];
  const summary = (traceStart >= 0 ? text.slice(0, traceStart) : text)
    .split('\n')
    .filter((line) => line.trim() && line.trim() !== 'external connector error')
    .join('\n');
  return migration ? `migration ${migration} failed: ${summary}` : summary;
}

export interface SchemaFile {
  path: string;
  content: string;
}

/**
 * A Rust panic inside the engine traps in a callback the engine's promise never hears about, so it
 * surfaces as an uncaught "unreachable" RuntimeError. Turn it into a rejection that names the panic.
 */
function watchForPanics(): { panicked: Promise<never>; stop(): void } {
  let rejectPanic: (err: Error) => void = () => {};
  const panicked = new Promise<never>((_, reject) => {
    rejectPanic = reject;
  });
  panicked.catch(() => {});
  const onUncaught = (err: unknown) => {
    if (err instanceof WebAssembly.RuntimeError) {
      rejectPanic(new SchemaEngineError(err));
      return;
    }
    // Not ours: crash as Node would have without this listener.
    process.removeListener('uncaughtException', onUncaught);
    setImmediate(() => {
      throw err;
    });
  };
  process.on('uncaughtException', onUncaught);
  return { panicked, stop: () => process.removeListener('uncaughtException', onUncaught) };
}

/**
 * Starts an engine connected to `databaseUrl` (with the schema files it should know), runs `fn`,
 * then frees the engine and closes every connection and shadow database it opened.
 */
export async function withSchemaEngine<T>(
  databaseUrl: string,
  schemaFiles: SchemaFile[],
  fn: (engine: SchemaEngine) => Promise<T>,
): Promise<T> {
  // Connect once first: a down server or missing database then fails with pg's own error code,
  // which callers can tell apart, instead of the engine's prose.
  await withClient(connectionConfig(databaseUrl), async () => undefined);
  const bindings = await loadEngine();
  const factory = new MigrationAdapterFactory(connectionConfig(databaseUrl));
  const panics = watchForPanics();
  let engine: SchemaEngine | undefined;
  try {
    const operation = (async () => {
      engine = await bindings.SchemaEngine.new(
        { datamodels: schemaFiles.map((file) => [file.path, file.content]) },
        () => {},
        bindMigrationAwareSqlAdapterFactory(factory),
      );
      return fn(engine);
    })();
    return await Promise.race([operation, panics.panicked]);
  } catch (err) {
    if (err instanceof SchemaEngineError) throw err;
    throw new SchemaEngineError(err);
  } finally {
    panics.stop();
    try {
      engine?.free();
    } catch {
      // an engine that panicked cannot be freed cleanly; its connections are closed below
    }
    await factory.closeAll();
  }
}
