export * from "./infra";
