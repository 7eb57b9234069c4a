import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";

/** How the JSON views render values that travel as protobuf fields. */

/** A timestamp as ISO 8601 text, or null when absent. */
export const isoOrNull = (t?: Timestamp): string | null => (t ? timestampDate(t).toISOString() : null);

/** JSON text stored as it came (goods, offer-card schemas) as its value again, or null when absent. */
export const jsonOrNull = (text?: string): unknown => (text === undefined ? null : (JSON.parse(text) as unknown));
