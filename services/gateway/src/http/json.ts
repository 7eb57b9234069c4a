/** JSON.stringify replacer: amounts travel as bigint internally and as strings on the wire. */
export function bigintAsString(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}
