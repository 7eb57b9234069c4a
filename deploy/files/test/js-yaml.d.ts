// js-yaml 4 ships no types; the tests only parse.
declare module "js-yaml" {
  export function load(text: string): unknown;
  export function loadAll(text: string): unknown[];
}
