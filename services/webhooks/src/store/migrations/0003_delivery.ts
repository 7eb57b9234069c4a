import { sql, type Migration } from "@c402/db";

/**
 * Webhook delivery: sellers' receivers (the secret sealed, never stored in the
 * clear), the service's Ed25519 signing keys (private halves sealed), one
 * delivery per event and receiver (its id is the webhook-id every attempt
 * carries; the body is frozen when the event arrives), and every attempt.
 * A delivery is a due task: `next_attempt_at` says when, a lease says who is
 * sending it now, so several replicas sweep the table safely.
 */
export const webhookDelivery: Migration = {
  async up(db) {
    await db.schema
      .createTable("endpoints")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("events", "jsonb", (c) => c.notNull())
      .addColumn("sealed_secret", "text", (c) => c.notNull())
      .addColumn("active", "boolean", (c) => c.notNull())
      .addColumn("disabled_reason", "text")
      .addColumn("disabled_at", "timestamptz")
      .addColumn("consecutive_failures", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("failed_attempts", "bigint", (c) => c.notNull().defaultTo(0))
      .addColumn("failed_deliveries", "bigint", (c) => c.notNull().defaultTo(0))
      .addColumn("delivered", "bigint", (c) => c.notNull().defaultTo(0))
      .addColumn("last_success_at", "timestamptz")
      .addColumn("last_failure_at", "timestamptz")
      .addColumn("created_at", "timestamptz", (c) => c.notNull())
      .addColumn("rekeyed_at", "timestamptz")
      .addUniqueConstraint("endpoints_account_url", ["account_id", "url"])
      .execute();
    await db.schema.createIndex("endpoints_account_page").on("endpoints").columns(["account_id", "created_at", "id"]).execute();

    await db.schema
      .createTable("signing_keys")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("generation", "integer", (c) => c.notNull().unique())
      .addColumn("public_key", "bytea", (c) => c.notNull())
      .addColumn("sealed_private_key", "text", (c) => c.notNull())
      .addColumn("created_at", "timestamptz", (c) => c.notNull())
      .addColumn("retires_at", "timestamptz")
      .execute();

    await db.schema
      .createTable("deliveries")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("endpoint_id", "text", (c) => c.notNull().references("endpoints.id").onDelete("cascade"))
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("event_id", "text", (c) => c.notNull())
      .addColumn("event", "text", (c) => c.notNull())
      .addColumn("aggregate_id", "text", (c) => c.notNull())
      .addColumn("test_mode", "boolean", (c) => c.notNull())
      .addColumn("payload", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('pending', 'delivered', 'failed')`))
      .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("next_attempt_at", "timestamptz")
      .addColumn("give_up_at", "timestamptz", (c) => c.notNull())
      .addColumn("lease_until", "timestamptz")
      .addColumn("lease_token", "text")
      .addColumn("last_status_code", "integer")
      .addColumn("last_error", "text")
      .addColumn("created_at", "timestamptz", (c) => c.notNull())
      .addColumn("delivered_at", "timestamptz")
      .addUniqueConstraint("deliveries_once_per_receiver", ["endpoint_id", "event_id"])
      .execute();
    await db.schema
      .createIndex("deliveries_due")
      .on("deliveries")
      .column("next_attempt_at")
      .where(sql<boolean>`status = 'pending'`)
      .execute();
    await db.schema.createIndex("deliveries_endpoint_page").on("deliveries").columns(["endpoint_id", "created_at", "id"]).execute();

    await db.schema
      .createTable("delivery_attempts")
      .addColumn("delivery_id", "text", (c) => c.notNull().references("deliveries.id").onDelete("cascade"))
      .addColumn("number", "integer", (c) => c.notNull())
      .addColumn("started_at", "timestamptz", (c) => c.notNull())
      .addColumn("status_code", "integer")
      .addColumn("latency_ms", "integer", (c) => c.notNull())
      .addColumn("error", "text")
      .addColumn("outcome", "text", (c) => c.notNull().check(sql`outcome in ('delivered', 'retry', 'disabled', 'failed')`))
      .addPrimaryKeyConstraint("delivery_attempts_pk", ["delivery_id", "number"])
      .execute();
  },
};
