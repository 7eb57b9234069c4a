/** The keccak package's JavaScript entry point: the same API as "keccak", never the native addon. */
declare module "keccak/js" {
  import createKeccakHash from "keccak";
  export = createKeccakHash;
}
