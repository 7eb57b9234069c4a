export * from "./wire";
export * from "./evm";
export * from "./v1";
export * from "./svm";
export * from "./stellar";
export * from "./rehearsal";
